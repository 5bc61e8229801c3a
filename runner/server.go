package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/secret"
)

// ServerHost is a Host that can start a benchmark's server (a
// record.Server): a process that runs beside the benchmark step and is
// stopped after it. Its ReadyURL is polled from perfbot's own process, so
// only a host whose servers perfbot reaches (Local) is one.
type ServerHost interface {
	// StartServer starts cmd in slot, in a process group of its own, and
	// returns while it runs; its output is kept within logCap bytes. An
	// error is the host's (a *record.InfraError) or ctx's.
	StartServer(ctx context.Context, slot int, cmd Command, logCap int) (Server, error)
}

// ServerJobHost is a Host whose commands run on machines perfbot does not
// reach (a cluster's nodes), which runs a benchmark step and its server
// together, as one job on one machine: the server starts first, the host
// polls its ready URL there, runs the step there once it answers 200, and
// ends the server with the job. A timed-out step that runs again gets a
// server of its own.
type ServerJobHost interface {
	// ExecWithServer runs srv and then cmd in slot, as one job. A server
	// that exits or is not ready in time is a ServerResult.Failed and
	// cmd does not run; an error is the host's (a *record.InfraError) or
	// ctx's.
	ExecWithServer(ctx context.Context, slot int, cmd Command, srv ServerCommand) (Result, ServerResult, error)
}

// ServerCommand is a benchmark's server as a ServerJobHost runs it.
type ServerCommand struct {
	// Command is the server's script, directory and environment; its
	// Timeout and EnvFile are not used.
	Command
	// ReadyURL is polled on the job's machine until it answers 200, for
	// StartTimeout at most.
	ReadyURL     string
	StartTimeout time.Duration
	// Grace is how long the server has after SIGTERM before its group is
	// killed.
	Grace time.Duration
	// LogCap bounds the server's output kept.
	LogCap int
}

// ServerResult is what a ServerJobHost's server did.
type ServerResult struct {
	// Output, Truncated and ExitCode are the server's, as it was stopped.
	Result
	// Ready is the time from the start of the job to the server's first
	// 200.
	Ready time.Duration
	// Failed says why the step did not run: the server exited before its
	// ready URL answered 200, or was not ready in time (naming the last
	// answer); empty when the server was ready.
	Failed string
}

// Server is a started server.
type Server interface {
	// Exited is closed when the server's shell has exited.
	Exited() <-chan struct{}
	// Output is what the server printed so far, within its cap.
	Output() []byte
	// Stop ends the server's whole process group, SIGTERM first and
	// SIGKILL after grace, and returns when no process of it is left,
	// with its output and exit status. Calling it again returns the same.
	Stop(grace time.Duration) Result
}

// Defaults of a benchmark's server.
const (
	// DefaultServerStartTimeout bounds the wait for a server's ready URL
	// unless the step says otherwise: a large model loads for minutes.
	DefaultServerStartTimeout = 10 * time.Minute
	// ServerStopGrace is how long a server has after SIGTERM to exit
	// before its group is killed.
	ServerStopGrace = 10 * time.Second
	// readyPoll is the interval between readiness checks.
	readyPoll = 50 * time.Millisecond
	// portFreeWait bounds the wait for a stopped server's port to be
	// free (a listener the kernel closes a moment after its process).
	portFreeWait = 5 * time.Second
)

// runningServer is the server of the benchmark step in flight.
type runningServer struct {
	spec  *record.Server
	srv   Server
	ready time.Duration // from the start to the first 200
}

// startServer starts the server of benchmark step s and waits until it is
// ready. A server that exits or is not ready in time is the target's
// failure: msg says why, quoting the server's log, which is added to p.
// err is the host's failure or ctx's.
func (m *measurement) startServer(ctx context.Context, p *pending, s record.BenchStep) (rs *runningServer, msg string, err error) {
	spec := s.Server
	sh, ok := m.lease.Host().(ServerHost)
	if !ok {
		return nil, "", &record.InfraError{Host: m.lease.Host().Name(), Op: "start the server of benchmark " + s.Name,
			Err: errors.New("this host cannot run benchmark servers (a local host runs them beside the step, a Slurm host in the step's job)")}
	}
	env := m.serverEnv(s)
	logCap := m.serverLogCap(spec)
	m.log.Debug("server", "step", s.Name, "ready_url", spec.ReadyURL)
	started := time.Now()
	srv, err := sh.StartServer(ctx, m.lease.Slot(), Command{Dir: m.ws.Dir, Script: spec.Run, Env: env, Scratch: m.ws.Scratch}, logCap)
	if err != nil {
		return nil, "", err
	}
	rs = &runningServer{spec: spec, srv: srv}
	declared := maps.Clone(spec.Env)
	if declared == nil {
		declared = map[string]string{}
	}
	maps.Copy(declared, m.target.Env)
	m.addEnv(p, record.Step{Name: s.Name + " (server)", Env: spec.Env}, declared, m.target.Env)
	timeout := spec.StartTimeout
	if timeout <= 0 {
		timeout = DefaultServerStartTimeout
	}
	why := waitReady(ctx, spec.ReadyURL, timeout, srv.Exited())
	rs.ready = time.Since(started)
	p.inCommands += rs.ready
	if why == "" {
		return rs, "", nil
	}
	res, stopErr := m.stopServer(p, s, rs)
	if cerr := ctx.Err(); cerr != nil {
		return nil, "", cerr
	}
	if stopErr != nil {
		return nil, "", stopErr
	}
	msg = fmt.Sprintf("server of benchmark %q %s", s.Name, why)
	if tail := logTail(res.Output, 5); tail != "" {
		msg += "; its log ends: " + tail
	}
	return nil, msg, nil
}

// serverEnv is the environment of benchmark step s's server: its own
// variables, the target's, and the Runner's.
func (m *measurement) serverEnv(s record.BenchStep) map[string]string {
	env := maps.Clone(s.Server.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, m.target.Env)
	env[EnvCommit] = m.target.Commit
	env[EnvTarget] = m.targetKey
	env[EnvPhase] = PhaseBench
	env[EnvStep] = s.Name + " (server)"
	return env
}

// errServerNotReady ends a step whose server, run in the step's job, was
// not ready: the step did not run.
var errServerNotReady = errors.New("the server was not ready")

// execInJob runs benchmark step s for p on a ServerJobHost, with its server
// in the same job, again while the step times out; it adds the server's
// log and facts to p as stopServer does. msg says why the server failed
// when it did.
func (m *measurement) execInJob(ctx context.Context, p *pending, s record.BenchStep, h ServerJobHost) (res Result, msg string, err error) {
	spec := s.Server
	srv := ServerCommand{
		Command:      Command{Dir: m.ws.Dir, Script: spec.Run, Env: m.serverEnv(s), Scratch: m.ws.Scratch},
		ReadyURL:     spec.ReadyURL,
		StartTimeout: spec.StartTimeout,
		Grace:        m.r.ServerGrace,
		LogCap:       m.serverLogCap(spec),
	}
	if srv.StartTimeout <= 0 {
		srv.StartTimeout = DefaultServerStartTimeout
	}
	if srv.Grace <= 0 {
		srv.Grace = ServerStopGrace
	}
	var sr ServerResult
	run := func(ctx context.Context, cmd Command) (Result, error) {
		res, got, err := h.ExecWithServer(ctx, m.lease.Slot(), cmd, srv)
		sr = got
		p.inCommands += got.Ready
		if err == nil && got.Failed != "" {
			err = errServerNotReady
		}
		return res, err
	}
	m.log.Debug("server in the step's job", "step", s.Name, "ready_url", spec.ReadyURL)
	res, err = m.execRetryingOn(ctx, p, PhaseBench, s.Step, m.target.Env, run)
	if sr.Output != nil || sr.Failed != "" {
		declared := maps.Clone(spec.Env)
		if declared == nil {
			declared = map[string]string{}
		}
		maps.Copy(declared, m.target.Env)
		m.addEnv(p, record.Step{Name: s.Name + " (server)", Env: spec.Env}, declared, m.target.Env)
		m.addServerLog(p, s, sr.Result, spec)
	}
	if errors.Is(err, errServerNotReady) {
		msg = fmt.Sprintf("server of benchmark %q %s", s.Name, sr.Failed)
		if tail := logTail(sr.Output, 5); tail != "" {
			msg += "; its log ends: " + tail
		}
		return res, msg, nil
	}
	m.log.Debug("server stopped", "step", s.Name, "exit", sr.ExitCode, "ready_after", sr.Ready)
	return res, "", err
}

// serverLogCap is the size of a server's log kept with a run.
func (m *measurement) serverLogCap(spec *record.Server) int {
	if spec.LogCap > 0 {
		return spec.LogCap
	}
	return m.r.logCap()
}

// waitReady polls url until it answers 200 and returns "", or says why
// it did not: the server exited, or timeout passed (quoting the last
// answer). When ctx ends it returns ctx's error's text.
func waitReady(ctx context.Context, readyURL string, timeout time.Duration, exited <-chan struct{}) string {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyURL, nil)
		if err != nil {
			return fmt.Sprintf("has a bad ready URL %q: %v", readyURL, err)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return ""
			}
			last = "HTTP " + resp.Status
		} else {
			last = unwrapAll(err).Error()
		}
		select {
		case <-exited:
			return "exited before " + readyURL + " answered 200"
		case <-deadline.C:
			return fmt.Sprintf("was not ready after %s (%s: %s)", timeout, readyURL, last)
		case <-ctx.Done():
			return ctx.Err().Error()
		case <-tick.C:
		}
	}
}

// unwrapAll drops the *url.Error wrapper, which repeats the URL.
func unwrapAll(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// stopServer stops rs, adds its log to p, its NCCL and startup facts to
// p's fingerprint, and checks that its port is free. An error is the
// host's: a server whose port stays bound would be met by the next run.
func (m *measurement) stopServer(p *pending, s record.BenchStep, rs *runningServer) (Result, error) {
	grace := m.r.ServerGrace
	if grace <= 0 {
		grace = ServerStopGrace
	}
	res := rs.srv.Stop(grace)
	m.addServerLog(p, s, res, rs.spec)
	if err := portFree(rs.spec.ReadyURL, portFreeWait); err != nil {
		return res, &record.InfraError{Host: m.lease.Host().Name(), Op: "stop the server of benchmark " + s.Name, Err: err}
	}
	m.log.Debug("server stopped", "step", s.Name, "exit", res.ExitCode, "ready_after", rs.ready)
	return res, nil
}

// addServerLog adds the log of step s's server to p, and what the log
// says of NCCL, the server and its software (configuration lines, as a
// benchmark prints them) to p's fingerprint.
func (m *measurement) addServerLog(p *pending, s record.BenchStep, res Result, spec *record.Server) {
	out, truncated := capLog(res.Output, m.serverLogCap(spec))
	out = secret.Scrub(out, m.r.Secrets)
	p.Logs = append(p.Logs, record.Log{Step: s.Name + " (server)", Output: out, Truncated: truncated || res.Truncated, ExitCode: res.ExitCode})
	for k, v := range serverFacts(res.Output) {
		if _, ok := p.Fingerprint.Env[k]; !ok {
			p.Fingerprint.Env[k] = v
		}
	}
	p.addReported(res.Output)
}

// portFree checks that nothing listens on the host and port of rawURL any
// more, waiting up to wait for a closing listener: it binds the port
// itself. Only a loopback or unspecified host is checked; another address
// is not this machine's to bind.
func portFree(rawURL string, wait time.Duration) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("ready URL %q: %w", rawURL, err)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"https": "443"}[u.Scheme]
		if port == "" {
			port = "80"
		}
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback() && !ip.IsUnspecified()) {
		return nil
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	addr := net.JoinHostPort(host, port)
	deadline := time.Now().Add(wait)
	for {
		l, err := net.Listen("tcp", addr)
		if err == nil {
			return l.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("port %s still bound after the server stopped (a process left its group?): %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logTail returns the last n non-blank lines of out, joined by " | ".
func logTail(out []byte, n int) string {
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	lines = lines[max(0, len(lines)-n):]
	return proc.Clip(strings.ToValidUTF8(strings.Join(lines, " | "), "\uFFFD"), 600)
}

// NCCL's startup lines, as NCCL_DEBUG=INFO prints them.
var (
	ncclVersion = regexp.MustCompile(`NCCL version ([0-9][0-9.]*[^\s]*)`)
	ncclNet     = regexp.MustCompile(`NCCL INFO Using network (\S+)`)
	ncclSetEnv  = regexp.MustCompile(`NCCL INFO (NCCL_[A-Z0-9_]+) set by environment to (\S+)`)
	ncclRanks   = regexp.MustCompile(`NCCL INFO comm \S+ rank \d+ nranks (\d+) .*Init COMPLETE`)
	vllmVersion = regexp.MustCompile(`vLLM API server version (\S+)`)
)

// serverFacts reads what a server's log says about the environment it ran
// in: NCCL's version, network and the NCCL_* settings it took from the
// environment, the ranks of its communicator, and vLLM's version. Keys are prefixed
// "server." except the NCCL_* variables, which keep their names.
func serverFacts(out []byte) map[string]string {
	facts := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := vllmVersion.FindStringSubmatch(line); m != nil {
			facts["server.vllm_version"] = m[1]
		}
		if !strings.Contains(line, "NCCL") {
			continue
		}
		if m := ncclVersion.FindStringSubmatch(line); m != nil {
			facts["server.nccl_version"] = m[1]
		}
		if m := ncclNet.FindStringSubmatch(line); m != nil {
			facts["server.nccl_net"] = m[1]
		}
		if m := ncclSetEnv.FindStringSubmatch(line); m != nil {
			facts[m[1]] = m[2]
		}
		if m := ncclRanks.FindStringSubmatch(line); m != nil {
			facts["server.nccl_nranks"] = m[1]
		}
	}
	return facts
}
