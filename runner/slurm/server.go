package slurm

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
)

var _ runner.ServerJobHost = (*Host)(nil)

// ExecWithServer runs a benchmark step and its server as one job on one
// node, as Exec runs a step: the job's wrapper starts the server there, in
// a session of its own with its own environment and its output in the
// scratch directory, polls its ready URL from the node (with curl, or
// python3 where the node has no curl) until it answers 200, for
// srv.StartTimeout at most, then runs cmd, and stops the server after it
// (SIGTERM to its group, SIGKILL after srv.Grace); whatever is left ends
// with the job. cmd's timeout runs from the moment the server was ready.
// A server that exits or is not ready in time is the ServerResult's
// Failed, and cmd does not run; a node with neither curl nor python3 is
// the host's failure.
func (s *Host) ExecWithServer(ctx context.Context, slot int, cmd runner.Command, srv runner.ServerCommand) (runner.Result, runner.ServerResult, error) {
	return s.run(ctx, slot, cmd, &srv)
}

// serverJob is what a job's wrapper runs of a server: start is the part
// before the step, which starts the server and waits for it, leaving
// perfbot_ready "ready" when it answered; stop the part after.
type serverJob struct {
	srv         runner.ServerCommand
	files       jobFiles
	start, stop string
}

// readyProbe asks a URL once and prints 200, "HTTP CODE" or "no answer";
// "none" when the node has nothing to ask with. Proxies are not used, as
// perfbot's own poll of a local server uses none.
const readyProbe = `perfbot_probe() {
	if command -v curl > /dev/null 2>&1; then
		_c=$(curl --noproxy '*' -s -o /dev/null -w '%{http_code}' --max-time 1 "$1" 2> /dev/null)
		case $_c in 200) echo 200 ;; '' | 000) echo 'no answer' ;; *) echo "HTTP $_c" ;; esac
	elif command -v python3 > /dev/null 2>&1; then
		python3 -c '
import sys, urllib.request, urllib.error
try:
    r = urllib.request.build_opener(urllib.request.ProxyHandler({})).open(sys.argv[1], timeout=1)
    print(200 if r.status == 200 else "HTTP %d" % r.status)
except urllib.error.HTTPError as e:
    print("HTTP %d" % e.code)
except Exception:
    print("no answer")
' "$1"
	else
		echo none
	fi
}
perfbot_alive() {
	{ read -r _l < "/proc/$1/stat"; } 2> /dev/null || return 1
	_l=${_l##*) }
	case $_l in Z* | X*) return 1 ;; esac
}
`

// newServerJob prepares the wrapper's part of srv. base is the job's
// environment before the step's own variables (stepEnv) are added: the
// server sees base and its own variables, not the step's.
func newServerJob(srv runner.ServerCommand, f jobFiles, base []string, stepEnv map[string]string) (*serverJob, error) {
	env, unset := serverEnv(base, stepEnv, srv.Env)
	exports, err := proc.Exports(env)
	if err != nil {
		return nil, err
	}
	for _, k := range unset {
		if !proc.IsEnvName(k) {
			return nil, fmt.Errorf("%q is not an environment variable name", k)
		}
		exports = "unset " + k + "\n" + exports
	}
	cd := ""
	if srv.Dir != "" {
		cd = "cd " + proc.ShellQuote(srv.Dir) + " || exit 1\n"
	}
	startSeconds := int64((srv.StartTimeout + time.Second - 1) / time.Second)
	ready := proc.ShellQuote(f.ready)
	start := proc.ShellLib + readyProbe +
		"(\n" + cd + exports + "exec setsid /bin/sh -c " + proc.ShellQuote(srv.Script) + "\n) < /dev/null > " + proc.ShellQuote(f.server) + " 2>&1 3>&- &\n" +
		`perfbot_srv=$!
perfbot_end=$(( $(date +%s) + ` + strconv.FormatInt(startSeconds, 10) + ` ))
perfbot_last='no answer yet'
while [ -z "$signalled" ]; do
	perfbot_a=$(perfbot_probe ` + proc.ShellQuote(srv.ReadyURL) + `)
	case $perfbot_a in
	200) perfbot_ready=ready; break ;;
	none) perfbot_ready=noprobe; break ;;
	esac
	perfbot_last=$perfbot_a
	perfbot_alive "$perfbot_srv" || { perfbot_ready=exited; break; }
	[ "$(date +%s)" -lt "$perfbot_end" ] || { perfbot_ready="timeout $perfbot_last"; break; }
	sleep 0.05
done
printf '%s\n' "$perfbot_ready" > ` + ready + "\n"
	stop := "perfbot_stop \"$perfbot_srv\" " + strconv.Itoa(int(srv.Grace/(100*time.Millisecond))) + `
wait "$perfbot_srv"
printf 'stopped %s\n' "$?" >> ` + ready + "\n"
	return &serverJob{srv: srv, files: f, start: start, stop: stop}, nil
}

// serverEnv is what the server's shell must set over the job's
// environment, base plus stepEnv, to see base plus its own variables:
// those variables, the base value of a step's variable that the server
// does not set, and the step's variables that base lacks, to unset.
func serverEnv(base []string, stepEnv, own map[string]string) (set map[string]string, unset []string) {
	baseVals := map[string]string{}
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		baseVals[k] = v
	}
	set = maps.Clone(own)
	if set == nil {
		set = map[string]string{}
	}
	for k := range stepEnv {
		if _, ok := own[k]; ok {
			continue
		}
		if v, ok := baseVals[k]; ok {
			set[k] = v
		} else {
			unset = append(unset, k)
		}
	}
	slices.Sort(unset)
	return set, unset
}

// result reads what the wrapper recorded of the server: whether it was
// ready, its output within the server's log cap (or logCap), and its exit
// status once stopped. A node that could not poll the ready URL is an
// error.
func (sj *serverJob) result(logCap int, times jobTimes) (runner.ServerResult, error) {
	var sr runner.ServerResult
	if sj.srv.LogCap > 0 {
		logCap = sj.srv.LogCap
	}
	if f, err := os.Open(sj.files.server); err == nil {
		out := proc.NewCapture(logCap)
		_, _ = io.Copy(out, f)
		f.Close()
		sr.Output, sr.Truncated = out.Bytes()
	}
	data, _ := os.ReadFile(sj.files.ready)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	sr.ExitCode = -1
	if len(lines) > 1 {
		if code, err := strconv.Atoi(strings.TrimPrefix(lines[1], "stopped ")); err == nil {
			sr.ExitCode = code
		}
	}
	state, last, _ := strings.Cut(lines[0], " ")
	switch state {
	case "ready":
		if !times.start.IsZero() && !times.step.IsZero() {
			sr.Ready = times.step.Sub(times.start)
		}
	case "exited":
		sr.Failed = "exited before " + sj.srv.ReadyURL + " answered 200"
	case "timeout":
		sr.Failed = fmt.Sprintf("was not ready after %s (%s: %s)", sj.srv.StartTimeout, sj.srv.ReadyURL, last)
	case "noprobe":
		return sr, fmt.Errorf("the node has neither curl nor python3 to poll the server's ready URL %s", sj.srv.ReadyURL)
	}
	return sr, nil
}
