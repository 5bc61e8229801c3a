package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/secret"
)

// DefaultLogCap bounds the output of one step kept in a Run's logs. Runs
// are stored for good; the head and tail of a log say what ran and how it
// ended.
const DefaultLogCap = 64 << 10

// Variables the Runner sets in every step's environment, so that scripts
// can label their own files and fakes can tell targets apart. They are
// not part of the fingerprint.
const (
	EnvCommit = "PERFBOT_COMMIT" // the target's commit
	EnvTarget = "PERFBOT_TARGET" // the target's key
	EnvPhase  = "PERFBOT_PHASE"  // "build" or "bench"
	EnvStep   = "PERFBOT_STEP"   // the step's name
)

// Phases of a measurement, as EnvPhase holds them.
const (
	PhaseBuild = "build"
	PhaseBench = "bench"
)

// Runner measures targets with one Spec on the leases of a Pool.
type Runner struct {
	Spec record.Spec
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
	// LogCap bounds each step's stored log; DefaultLogCap when zero.
	LogCap int
	// EnvKeep lists variable names or path.Match globs recorded in the
	// fingerprint besides NCCL_*, CUDA_*, GO* and OMP_*.
	EnvKeep []string
	// TimeoutRetries is how many more times a build or benchmark step
	// that timed out runs before the target counts as broken:
	// DefaultTimeoutRetries when zero, none when negative. A timeout is as
	// often a busy or stalled machine as the revision's fault. A target
	// made of some of a change's hunks is never run again: it is code no
	// one wrote, and one that hangs (a loop whose exit another hunk
	// brings) does so every time; the search it serves just measured the
	// change's ends on the same machine, and a configuration counted
	// broken costs it precision, not a wrong answer.
	TimeoutRetries int
	// Secrets are values that no stored log may hold (perfbot's own
	// credentials, which its hosts withhold from commands anyway); logs
	// are scrubbed of them and of secret shapes (secret.Scrub).
	Secrets []string
	// ServerGrace is how long a benchmark's server has after SIGTERM
	// before its group is killed; ServerStopGrace when zero.
	ServerGrace time.Duration

	// topology holds nvidia-smi topo -m by host name, read once per host
	// (a cluster's at every step: its nodes may differ).
	topology sync.Map
}

// DefaultTimeoutRetries is how many times a step that timed out runs
// again unless the Runner says otherwise.
const DefaultTimeoutRetries = 1

func (r *Runner) timeoutRetries() int {
	switch {
	case r.TimeoutRetries < 0:
		return 0
	case r.TimeoutRetries == 0:
		return DefaultTimeoutRetries
	}
	return r.TimeoutRetries
}

// Effort is what one Measure did: the trees it materialized and built
// (failed builds included) and the benchmark runs it recorded, failed ones
// included.
type Effort struct {
	Builds int
	Runs   int
}

// Measure runs every benchmark step of src's target repeats times on
// lease, calling record after each run so that a killed process loses at
// most the run in flight. Unless the lease's tree holds the target built,
// the tree is materialized and built first; when every run succeeded the
// tree counts as built for the next lease of the target.
//
// A failing build records one run with StatusBuildFailed (its log
// attached) and returns nil; so does a failing benchmark, which records
// StatusBenchFailed and stops, and hunks that do not apply: the target is
// broken, not the host. A step that timed out counts as failed only once
// its retries (TimeoutRetries) timed out too. An infrastructure failure
// records a run with StatusInfraError and returns the *record.InfraError.
// When ctx ends, the run in flight is not recorded and ctx's error is
// returned. The lease hears how the host did (Lease.Report), so that a
// host that keeps failing leaves the pool.
//
// Every run verifies that the tree it ran in still is the target
// (Host.Verify) before it is recorded: a tree that changed under it
// (another process, a step that moved HEAD) makes the run StatusInfraError,
// without samples, whatever the benchmark printed. A tree the pool holds
// built is verified before it is used, and rebuilt when it changed.
func (r *Runner) Measure(ctx context.Context, lease *Lease, src Source, repeats int, record func(record.Run) error) (Effort, error) {
	t := src.Target
	if repeats < 1 {
		return Effort{}, fmt.Errorf("measure %s: %d repeats, want at least 1", t.Short(), repeats)
	}
	host := lease.Host()
	m := &measurement{
		r:         r,
		lease:     lease,
		src:       src,
		target:    t,
		targetKey: t.Key(),
		specHash:  r.Spec.Hash(),
		record:    record,
		log:       r.logger().With("target", t.Short(), "host", host.Name(), "slot", lease.Slot()),
	}
	err := m.run(ctx, repeats)
	if ctx.Err() == nil {
		lease.Report(hostFailure(err))
	}
	if err != nil || !m.ok {
		lease.forget()
	} else {
		lease.markBuilt()
	}
	if err != nil {
		return m.effort, fmt.Errorf("measure %s: %w", t.Short(), err)
	}
	return m.effort, nil
}

// hostFailure is what a measurement that ended with err says of its
// host: err when it is an infrastructure failure, else nil (the host ran
// what it was given, whatever the target made of it).
func hostFailure(err error) error {
	if record.IsInfra(err) {
		return err
	}
	return nil
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

func (r *Runner) logCap() int {
	if r.LogCap > 0 {
		return r.LogCap
	}
	return DefaultLogCap
}

// measurement is one call of Measure.
type measurement struct {
	r         *Runner
	lease     *Lease
	src       Source
	target    record.Target
	targetKey string
	specHash  string
	record    func(record.Run) error
	log       *slog.Logger
	ws        Workspace
	facts     record.Fingerprint
	effort    Effort
	ok        bool // every run recorded was StatusOK
}

// pending is a run being assembled.
type pending struct {
	record.Run
	inCommands time.Duration
	benchNode  bool // Node is a benchmark step's
}

func (m *measurement) newRun(started time.Time) *pending {
	fp := m.facts
	fp.Env = map[string]string{}
	return &pending{Run: record.Run{
		TargetKey:   m.targetKey,
		SpecHash:    m.specHash,
		Target:      m.target,
		Host:        m.lease.Host().Name(),
		Started:     started,
		Fingerprint: fp,
	}}
}

func (m *measurement) run(ctx context.Context, repeats int) error {
	started := time.Now()
	facts, err := m.lease.Host().Facts(ctx)
	if err != nil {
		return m.failInfra(ctx, m.newRun(started), err)
	}
	m.facts = facts

	// The build belongs to the first run: its log and time go there.
	p := m.newRun(started)
	built, err := m.reuse(ctx)
	if err != nil {
		return m.failInfra(ctx, p, err)
	}
	if !built {
		if built, err := m.build(ctx, p); err != nil || !built {
			return err
		}
	}
	for i := range repeats {
		if i > 0 {
			p = m.newRun(time.Now())
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		failed, err := m.bench(ctx, p)
		if err != nil || failed {
			return err
		}
	}
	m.ok = true
	return nil
}

// reuse takes the lease's tree as built when the pool says it holds the
// target built and the tree is still what was materialized: another
// process sharing the workdir may have checked it out since.
func (m *measurement) reuse(ctx context.Context) (bool, error) {
	if !m.lease.Built() {
		return false, nil
	}
	ws := m.lease.Workspace()
	err := m.lease.verify(ctx, ws, m.src)
	switch {
	case err == nil:
		m.ws = ws
		return true, nil
	case errors.Is(err, ErrTreeChanged):
		m.log.Info("built tree changed since; rebuilding", "error", err)
		m.lease.forget()
		return false, nil
	}
	return false, err
}

// build materializes the target in the lease's tree and runs the build
// steps into p. built is false when the target turned out broken, which
// is then recorded.
func (m *measurement) build(ctx context.Context, p *pending) (built bool, err error) {
	m.ws = Workspace{}
	ws, err := m.lease.materialize(ctx, m.src)
	if err != nil {
		var ae *gitops.ApplyError
		if errors.As(err, &ae) {
			m.log.Info("hunks do not apply", "error", err)
			return false, m.finish(ctx, p, record.StatusBuildFailed, err.Error())
		}
		return false, m.failInfra(ctx, p, err)
	}
	m.ws = ws
	m.effort.Builds++
	for _, s := range m.r.Spec.Build {
		res, err := m.execRetrying(ctx, p, PhaseBuild, s, nil)
		if err != nil {
			return false, m.failInfra(ctx, p, err)
		}
		if res.TimedOut || res.ExitCode != 0 {
			m.log.Info("build failed", "step", s.Name, "exit", res.ExitCode, "timed_out", res.TimedOut)
			return false, m.finish(ctx, p, record.StatusBuildFailed, stepFailure("build", s, res))
		}
	}
	return true, nil
}

// bench runs every benchmark step once into p and records it. failed
// reports a recorded StatusBenchFailed.
func (m *measurement) bench(ctx context.Context, p *pending) (failed bool, err error) {
	p.Values = map[string]float64{}
	if _, local := m.lease.Host().(*Local); local {
		p.Fingerprint.LoadAvg, p.Fingerprint.CPUAffinity = localLoad()
	}
	for _, s := range m.r.Spec.Benchmarks {
		res, err := m.execBench(ctx, p, s)
		if err != nil {
			return false, m.failInfra(ctx, p, err)
		}
		if res.serverFailed != "" {
			m.log.Info("benchmark server failed", "step", s.Name, "error", res.serverFailed)
			return true, m.finish(ctx, p, record.StatusBenchFailed, res.serverFailed)
		}
		if res.TimedOut || res.ExitCode != 0 {
			m.log.Info("benchmark failed", "step", s.Name, "exit", res.ExitCode, "timed_out", res.TimedOut)
			return true, m.finish(ctx, p, record.StatusBenchFailed, stepFailure("benchmark", s.Step, res.Result))
		}
		if msg := m.collect(p, s, res.Output); msg != "" {
			m.log.Info("benchmark output unusable", "step", s.Name, "error", msg)
			return true, m.finish(ctx, p, record.StatusBenchFailed, msg)
		}
	}
	m.log.Debug("run done", "values", p.Values)
	return false, m.finish(ctx, p, record.StatusOK, "")
}

// benchResult is a benchmark step's result, or why its server failed.
type benchResult struct {
	Result
	serverFailed string
}

// execBench runs benchmark step s for p, with its server when it has one:
// started and ready before the step, stopped after it however the step
// ended (failed, timed out, cancelled when perfbot is told to stop). A
// host that runs the server in the step's job (ServerJobHost) does all of
// that itself, on the machine that runs the step.
func (m *measurement) execBench(ctx context.Context, p *pending, s record.BenchStep) (benchResult, error) {
	if s.Server == nil {
		res, err := m.execRetrying(ctx, p, PhaseBench, s.Step, m.target.Env)
		return benchResult{Result: res}, err
	}
	if h, ok := m.lease.Host().(ServerJobHost); ok {
		res, msg, err := m.execInJob(ctx, p, s, h)
		return benchResult{Result: res, serverFailed: msg}, err
	}
	rs, msg, err := m.startServer(ctx, p, s)
	if err != nil || msg != "" {
		return benchResult{serverFailed: msg}, err
	}
	res, err := m.execRetrying(ctx, p, PhaseBench, s.Step, m.target.Env)
	if _, stopErr := m.stopServer(p, s, rs); stopErr != nil && err == nil {
		err = stopErr
	}
	return benchResult{Result: res}, err
}

// collect parses one benchmark step's output into p's samples and the
// values of the step's metrics; it returns why it could not.
func (m *measurement) collect(p *pending, s record.BenchStep, output []byte) string {
	opts := maps.Clone(s.Options)
	if opts == nil {
		opts = map[string]string{}
	}
	if opts["file"] == "" {
		opts["file"] = s.Name + " output"
	}
	samples, err := bench.Parse(s.Format, bytes.NewReader(output), opts)
	if err != nil {
		return fmt.Sprintf("benchmark %q: %v", s.Name, err)
	}
	p.Samples = append(p.Samples, samples...)
	if s.Format == bench.FormatGoBench {
		p.addReported(output)
	}
	for _, metric := range m.r.Spec.Metrics {
		if metric.Benchmark != s.Name {
			continue
		}
		v, err := bench.Select(samples, metric.Select, metric.Unit)
		if err != nil {
			return fmt.Sprintf("metric %s: %v", metric.Name, err)
		}
		p.Values[metric.Name] = v
	}
	return ""
}

// execRetrying runs one step for p as exec does, again while it times out,
// up to the Runner's TimeoutRetries. The log of an attempt that timed out
// stays with p, its step named "NAME (timed out)".
func (m *measurement) execRetrying(ctx context.Context, p *pending, phase string, s record.Step, override map[string]string) (Result, error) {
	return m.execRetryingOn(ctx, p, phase, s, override, nil)
}

// execRetryingOn is execRetrying with run in place of the host's Exec
// (nil: the host's Exec).
func (m *measurement) execRetryingOn(ctx context.Context, p *pending, phase string, s record.Step, override map[string]string, run execFunc) (Result, error) {
	retries := m.r.timeoutRetries()
	if len(m.target.Hunks) > 0 {
		retries = 0
	}
	for attempt := 0; ; attempt++ {
		res, err := m.exec(ctx, p, phase, s, override, run)
		if err != nil || !res.TimedOut || attempt >= retries || ctx.Err() != nil {
			return res, err
		}
		m.log.Info("step timed out; running it again", "phase", phase, "step", s.Name, "timeout", s.Timeout, "attempt", attempt+1)
		p.Logs[len(p.Logs)-1].Step += " (timed out)"
	}
}

// execFunc runs a step's command on the lease's host.
type execFunc func(ctx context.Context, cmd Command) (Result, error)

// exec runs one step for p with run (the host's Exec when nil), adding
// its log, time and environment to p.
func (m *measurement) exec(ctx context.Context, p *pending, phase string, s record.Step, override map[string]string, run execFunc) (Result, error) {
	if run == nil {
		run = func(ctx context.Context, cmd Command) (Result, error) {
			return m.lease.Host().Exec(ctx, m.lease.Slot(), cmd)
		}
	}
	env := maps.Clone(s.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, override)
	env[EnvCommit] = m.target.Commit
	env[EnvTarget] = m.targetKey
	env[EnvPhase] = phase
	env[EnvStep] = s.Name

	m.log.Debug("step", "phase", phase, "step", s.Name)
	script := s.Run
	var sampling *gpuSampling
	_, cluster := m.lease.Host().(NodeDescriber)
	if phase == PhaseBench && (len(m.facts.GPUs) > 0 || cluster) {
		g := newGPUSampling(m.ws.Scratch, s.Name, m.r.needTopology(m.lease.Host()))
		sampling, script = &g, g.wrap(script)
	}
	res, err := run(ctx, Command{
		Dir:     m.ws.Dir,
		Script:  script,
		Env:     env,
		Timeout: s.Timeout,
		EnvFile: filepath.Join(m.ws.Scratch, phase+"-"+sanitize(s.Name)),
		Scratch: m.ws.Scratch,
	})
	p.inCommands += res.Duration
	if err != nil {
		return res, err
	}
	out, truncated := capLog(res.Output, m.r.logCap())
	out = secret.Scrub(out, m.r.Secrets)
	p.Logs = append(p.Logs, record.Log{Step: s.Name, Output: out, Truncated: truncated || res.Truncated, ExitCode: res.ExitCode})
	p.addNode(phase, res.Node)
	if phase == PhaseBench {
		m.describeNode(ctx, p, res.Node)
		m.addEnv(p, s, res.Env, override)
		m.addNCCL(p, s.Name, res.Output)
		if sampling != nil {
			if err := m.sampleGPU(ctx, p, s.Name, *sampling); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// addNode records the node a step ran on: the benchmark steps' nodes
// (comma-separated when they differ), else the build's.
func (p *pending) addNode(phase, node string) {
	switch {
	case node == "":
	case phase == PhaseBench && !p.benchNode:
		p.Node, p.benchNode = node, true
	case phase == PhaseBench:
		if !slices.Contains(strings.Split(p.Node, ","), node) {
			p.Node += "," + node
		}
	case !p.benchNode:
		p.Node = node
	}
}

// describeNode records what the cluster says of the node of the run's
// first benchmark step. A node the cluster does not describe costs the
// run nothing but the description.
func (m *measurement) describeNode(ctx context.Context, p *pending, node string) {
	d, ok := m.lease.Host().(NodeDescriber)
	if !ok || node == "" || p.Fingerprint.ClusterNode != nil {
		return
	}
	n, err := d.DescribeNode(ctx, node)
	if err != nil {
		m.log.Warn("the cluster does not describe the node", "node", node, "error", err)
		return
	}
	p.Fingerprint.ClusterNode = &n
}

// addEnv records the variables a benchmark step's process received. When
// two steps of one run saw different values, each is kept under
// "NAME@step" so the fingerprint does not pick one silently.
func (m *measurement) addEnv(p *pending, s record.Step, seen, override map[string]string) {
	for k, v := range keptEnv(seen, m.r.EnvKeep, s.Env, override) {
		prev, ok := p.Fingerprint.Env[k]
		switch {
		case !ok:
			p.Fingerprint.Env[k] = v
		case prev != v:
			p.Fingerprint.Env[k+"@"+s.Name] = v
		}
	}
}

// finish completes p and records it. Unless p already failed for the
// infrastructure, the tree it ran in is verified first: a run in a tree
// that is not its target's is an infrastructure failure, its samples
// those of some other tree, and is recorded without them.
func (m *measurement) finish(ctx context.Context, p *pending, status record.Status, msg string) error {
	if status != record.StatusInfraError && m.ws.Dir != "" {
		if err := m.lease.verify(ctx, m.ws, m.src); err != nil {
			p.Samples = nil
			return m.failInfra(ctx, p, err)
		}
	}
	p.Status = status
	p.Error = msg
	p.Duration = time.Since(p.Started)
	p.Overhead = max(p.Duration-p.inCommands, 0)
	if status != record.StatusOK || len(p.Values) == 0 {
		// A failed run's partial values must not be mistaken for a
		// measurement; its samples stay as evidence.
		p.Values = nil
	}
	if err := m.record(p.Run); err != nil {
		return fmt.Errorf("record run: %w", err)
	}
	if status == record.StatusOK || status == record.StatusBenchFailed {
		m.effort.Runs++
	}
	return nil
}

// failInfra records p as an infrastructure failure and returns err. A run
// ended by ctx is not a failure of anything and is not recorded, whatever
// the host made of the cancellation (a killed git is not a broken host).
func (m *measurement) failInfra(ctx context.Context, p *pending, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			return err
		}
		return cerr
	}
	m.log.Warn("infrastructure failure", "error", err)
	if rerr := m.finish(ctx, p, record.StatusInfraError, err.Error()); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// stepFailure says why a step failed, quoting the end of its output.
func stepFailure(kind string, s record.Step, res Result) string {
	var msg string
	if res.TimedOut {
		msg = fmt.Sprintf("%s step %q timed out after %s", kind, s.Name, s.Timeout)
	} else {
		msg = fmt.Sprintf("%s step %q exited with status %d", kind, s.Name, res.ExitCode)
	}
	if last := proc.LastLine(res.Output); last != "" {
		msg += ": " + last
	}
	return msg
}

// capLog keeps the head and tail of out within limit bytes. Logs are
// stored as JSON strings, so invalid UTF-8 (including a character split
// by a cut) becomes U+FFFD.
func capLog(out []byte, limit int) (string, bool) {
	if len(out) <= limit {
		return strings.ToValidUTF8(string(out), "\uFFFD"), false
	}
	half := limit / 2
	s := fmt.Sprintf("%s\n[perfbot: %d bytes of log omitted]\n%s", out[:half], len(out)-2*half, out[len(out)-half:])
	return strings.ToValidUTF8(s, "\uFFFD"), true
}

// sanitize makes a step name usable as a file name.
func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == os.PathSeparator {
			return '_'
		}
		return r
	}, name)
}

// addReported keeps the configuration lines of a benchmark's or its
// server's output ("torch: 2.11.0") in the run's fingerprint, the first
// value of each key, secret-named ones redacted.
func (p *pending) addReported(output []byte) {
	for k, v := range bench.GoBenchConfig(output) {
		if p.Fingerprint.Reported == nil {
			p.Fingerprint.Reported = map[string]string{}
		}
		if _, ok := p.Fingerprint.Reported[k]; !ok {
			p.Fingerprint.Reported[k] = secret.Redact(k, v)
		}
	}
}
