package ssh

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
)

// Exec runs cmd.Script with sh -c on the host, in a session and process
// group of its own (setsid), its output streamed back into a capture
// capped at OutputCap. Every slot of an SSH host is the same machine.
func (s *Host) Exec(ctx context.Context, slot int, cmd runner.Command) (runner.Result, error) {
	if err := ctx.Err(); err != nil {
		return runner.Result{}, err
	}
	if cmd.EnvFile != "" && !path.IsAbs(cmd.EnvFile) {
		cmd.EnvFile = path.Join(s.Workdir, cmd.EnvFile)
	}
	mark := proc.NewMark()
	script, err := s.execScript(cmd, mark)
	if err != nil {
		return runner.Result{}, s.infra("start command", err)
	}
	sess, done, err := s.session(ctx)
	if err != nil {
		return runner.Result{}, withOp(err, fmt.Sprintf("run %q", proc.FirstLine(cmd.Script)))
	}
	defer done()
	defer sess.Close()
	// The session's input stays open while the command runs: its end
	// tells the host that perfbot is gone.
	stdin, err := sess.StdinPipe()
	if err != nil {
		return runner.Result{}, s.infra("open session input", err)
	}
	out := proc.NewCapture(s.outputCap())
	proto := &wrapperLog{started: make(chan int, 1)}
	sess.Stdout, sess.Stderr = out, proto

	started := time.Now()
	if err := sess.Start(remoteShell(script)); err != nil {
		return runner.Result{}, s.infra("start shell", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()
	var expired <-chan time.Time
	if cmd.Timeout > 0 {
		t := time.NewTimer(cmd.Timeout)
		defer t.Stop()
		expired = t.C
	}
	var res runner.Result
	var ctxErr, waitErr error
	select {
	case waitErr = <-ended:
	case <-expired:
		res.TimedOut = true
	case <-ctx.Done():
		ctxErr = ctx.Err()
	}
	if res.TimedOut || ctxErr != nil {
		waitErr = s.stop(ctx, proto, mark, stdin, ended)
	}
	stdin.Close()
	res.Duration = time.Since(started)
	res.Output, res.Truncated = out.Bytes()

	rc, exited, why, other := proto.result()
	switch {
	case res.TimedOut || ctxErr != nil:
		res.ExitCode = -1
	case exited:
		res.ExitCode = rc
	case why != "":
		return res, s.infra(fmt.Sprintf("run %q", proc.FirstLine(cmd.Script)), errors.New(why))
	default:
		// The wrapper was killed or its connection dropped.
		return res, s.infra(fmt.Sprintf("run %q", proc.FirstLine(cmd.Script)),
			runner.HostDown(fmt.Errorf("the command ended without its exit status (the host or its sshd went away): %w", scriptError(waitErr, []byte(other)))))
	}
	if cmd.EnvFile != "" {
		res.Env = proto.envDump()
	}
	if ctxErr != nil {
		return res, fmt.Errorf("run %q: %w", proc.FirstLine(cmd.Script), ctxErr)
	}
	return res, nil
}

// stop kills the command's process group through a second session and
// waits for the wrapper to report. When the host cannot be reached for
// the kill, closing the session's input has the host kill the group.
func (s *Host) stop(ctx context.Context, proto *wrapperLog, mark string, stdin interface{ Close() error }, ended <-chan error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.killGrace()+proc.GroupExitWait+sshDialTimeout)
	defer cancel()
	select {
	case pgid := <-proto.started:
		proto.started <- pgid
		if err := s.killGroup(ctx, pgid, mark); err != nil {
			s.logger().Warn("cannot kill a command's processes; the host kills them when the session ends", "host", s.Name(), "pgid", pgid, "error", err)
			stdin.Close()
		}
	default:
		stdin.Close()
	}
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
		return errors.New("the host did not report the command's end")
	}
}

// killGroup sends SIGTERM to process group pgid, SIGKILL after the grace,
// and waits for the group to go; then it kills the processes that left
// the group and still carry the mark. Only a group with the command's
// mark is killed: one that ended meanwhile may have left its number to
// another.
func (s *Host) killGroup(ctx context.Context, pgid int, mark string) error {
	pg := strconv.Itoa(pgid)
	tenths := strconv.Itoa(int(s.killGrace() / (100 * time.Millisecond)))
	script := proc.ShellLib + "if perfbot_live " + pg + " " + mark + "; then perfbot_stop " + pg + " " + tenths +
		"; perfbot_gone " + pg + " 100; fi\nperfbot_kill_marked " + mark + " KILL\n"
	_, err := s.output(ctx, "kill process group "+pg, script, nil)
	return err
}

func (s *Host) killGrace() time.Duration {
	if s.KillGrace > 0 {
		return s.KillGrace
	}
	return DefaultKillGrace
}

func (s *Host) outputCap() int {
	if s.OutputCap > 0 {
		return s.OutputCap
	}
	return runner.DefaultOutputCap
}

// execScript is the wrapper run for cmd: it enters the directory, starts
// the script under setsid with the command's environment and mark,
// records its group, has a watcher kill the group and every process
// still marked (one that left the group with setsid) when the session's
// input ends, waits, kills what is left of the group and of the marked
// processes and reports on
// standard error (perfbot-started PGID, perfbot-env BASE64 of the
// environment dump, perfbot-exit STATUS, or perfbot-error: WHY). The
// script's own output, both streams, goes to standard output.
func (s *Host) execScript(cmd runner.Command, mark string) (string, error) {
	var b strings.Builder
	b.WriteString(proc.ShellLib)
	if cmd.Dir != "" {
		fmt.Fprintf(&b, "cd %s 2> /dev/null || { echo %s >&2; exit 1; }\n", proc.ShellQuote(cmd.Dir),
			proc.ShellQuote("perfbot-error: the working directory "+cmd.Dir+" does not exist"))
	}
	if cmd.EnvFile != "" {
		fmt.Fprintf(&b, "rm -f %s || { echo %s >&2; exit 1; }\n", proc.ShellQuote(cmd.EnvFile),
			proc.ShellQuote("perfbot-error: cannot remove the old environment dump "+cmd.EnvFile))
	}
	exports, err := proc.Exports(cmd.Env)
	if err != nil {
		return "", err
	}
	b.WriteString(exports)
	b.WriteString("exec 3<&0\n")
	// Only the command carries the mark: the wrapper's own tools (the
	// watcher's cat and sleep) must not be among the marked processes
	// it kills.
	fmt.Fprintf(&b, "%s=%s setsid /bin/sh -c %s < /dev/null 2>&1 3<&- &\npg=$!\n", proc.RunMark, mark, proc.ShellQuote(proc.WithEnvDump(cmd.Script, cmd.EnvFile)))
	running := ""
	if cmd.Scratch != "" {
		running = proc.ShellQuote(path.Join(cmd.Scratch, proc.GroupFile))
		fmt.Fprintf(&b, "printf '%%s %%s\\n' \"$pg\" %s > %s || { kill -KILL -\"$pg\"; echo %s >&2; exit 1; }\n",
			mark, running, proc.ShellQuote("perfbot-error: cannot record the process group in "+cmd.Scratch))
	}
	fmt.Fprintf(&b, `echo "perfbot-started $pg" >&2
( cat <&3 > /dev/null; kill -TERM -"$pg"; perfbot_kill_marked %[3]s TERM; sleep %[1]d; kill -KILL -"$pg"; perfbot_kill_marked %[3]s KILL ) > /dev/null 2>&1 &
w=$!
exec 3<&-
wait "$pg"; rc=$?
kill "$w" 2> /dev/null
kill -KILL -"$pg" 2> /dev/null && perfbot_gone "$pg" %[2]d
perfbot_kill_marked %[3]s KILL
`, max(int(s.killGrace()/time.Second), 1), int(proc.GroupExitWait/(100*time.Millisecond)), mark)
	if running != "" {
		fmt.Fprintf(&b, "rm -f %s\n", running)
	}
	if cmd.EnvFile != "" {
		// The dump comes back with the report, sparing a session.
		q := proc.ShellQuote(cmd.EnvFile)
		fmt.Fprintf(&b, "[ ! -s %s ] || printf 'perfbot-env %%s\\n' \"$(base64 -w0 < %s)\" >&2\n", q, q)
		// It holds the benchmark's secrets in clear; it came back.
		fmt.Fprintf(&b, "rm -f %s\n", q)
	}
	b.WriteString("echo \"perfbot-exit $rc\" >&2\n")
	return b.String(), nil
}

// wrapperLog reads the wrapper's reports from the session's standard
// error.
type wrapperLog struct {
	started chan int // the group, once known; holds one value

	mu     sync.Mutex
	buf    []byte
	rc     int
	exited bool
	errMsg string
	env    string // base64 of the environment dump
	other  []string
}

// maxReportLine bounds a line of the wrapper's reports: the environment
// dump comes on one.
const maxReportLine = 4 << 20

func (w *wrapperLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > maxReportLine {
		w.line(string(w.buf))
		w.buf = nil
	}
	return len(p), nil
}

func (w *wrapperLog) line(l string) {
	switch {
	case strings.HasPrefix(l, "perfbot-started "):
		if pg, err := strconv.Atoi(strings.TrimPrefix(l, "perfbot-started ")); err == nil {
			select {
			case w.started <- pg:
			default:
			}
		}
	case strings.HasPrefix(l, "perfbot-exit "):
		if rc, err := strconv.Atoi(strings.TrimPrefix(l, "perfbot-exit ")); err == nil {
			w.rc, w.exited = rc, true
		}
	case strings.HasPrefix(l, "perfbot-env "):
		w.env = strings.TrimPrefix(l, "perfbot-env ")
	case strings.HasPrefix(l, "perfbot-error: "):
		w.errMsg = strings.TrimPrefix(l, "perfbot-error: ")
	default:
		// The login shell's own complaints (a broken .bashrc).
		if len(w.other) < 20 {
			w.other = append(w.other, proc.Clip(l, 200))
		}
	}
}

// envDump is the environment dump the wrapper sent back; nil without
// one.
func (w *wrapperLog) envDump() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, err := base64.StdEncoding.DecodeString(w.env)
	if err != nil {
		return nil
	}
	return proc.ParseEnvDump(data)
}

// result is the script's exit status when the wrapper reported one, why
// the wrapper could not run the script when it said, and what else was
// written to standard error.
func (w *wrapperLog) result() (rc int, exited bool, why, other string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.line(string(w.buf))
		w.buf = nil
	}
	return w.rc, w.exited, w.errMsg, strings.Join(w.other, "\n")
}
