package runnertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
)

// Fake is a runner.Host for tests of the packages that drive a Runner
// (the oracle, the jobs). It runs nothing and checks nothing out: each
// command is answered from a script chosen by the target the Runner is
// measuring, which the Runner announces in runner.EnvCommit and
// runner.EnvTarget, and materializing a tree only records which target
// went where. A typical use:
//
//	host := &runnertest.Fake{Commits: map[string]runnertest.FakeCommit{
//		good: {Outputs: []string{"BenchmarkVerify 1 100 tok/s\n", "BenchmarkVerify 1 101 tok/s\n"}},
//		bad:  {Outputs: []string{"BenchmarkVerify 1 80 tok/s\n"}},
//		broken: {BuildFails: true},
//	}}
//	pool, err := runner.NewPool(host)
//
// Its zero value has one slot and answers every command with a
// *record.InfraError naming the unscripted commit. Fake is safe for
// concurrent use.
type Fake struct {
	// HostName is the name reported; "fake" when empty.
	HostName string
	// Targets scripts targets by key (Target.Key), for tests that tell
	// hunk subsets or environments of one commit apart; a target missing
	// here falls back to Commits.
	Targets map[string]FakeCommit
	// Commits scripts targets by commit.
	Commits map[string]FakeCommit
	// Default scripts every target missing from Targets and Commits.
	Default *FakeCommit
	// Machine is what Facts returns; its Host defaults to HostName.
	Machine record.Fingerprint
	// FactsErr, when set, makes Facts fail with a *record.InfraError.
	FactsErr error
	// Slots and Trees are the host's Layout; 1 slot and DefaultTrees
	// trees when zero.
	Slots, Trees int
	// Hold, when set, is received from before each benchmark step is
	// answered, so that a test can keep steps in flight.
	Hold chan struct{}

	mu        sync.Mutex
	down      error // SetDown's
	calls     []FakeCall
	trees     []FakeTree
	runs      map[string]int // benchmark invocations per script key and step
	timeouts  map[string]int // invocations that timed out per script key and step
	active    int            // benchmark steps in flight
	maxActive int
	changed   chan struct{} // closed and replaced whenever active changes
}

// SetDown makes every later call of the host fail as a host that cannot
// be reached does: a *record.InfraError wrapping err and ErrHostDown.
// SetDown(nil) brings it back.
func (f *Fake) SetDown(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = err
}

// downErr is the error of a host that is down, nil when it is up. The
// caller holds f.mu.
func (f *Fake) downErr(op string) error {
	if f.down == nil {
		return nil
	}
	return &record.InfraError{Host: f.Name(), Op: op, Err: runner.HostDown(f.down)}
}

// FakeTree is one tree a Fake materialized.
type FakeTree struct {
	Slot, Tree int
	Target     record.Target
}

// FakeCommit is how a Fake answers the commands of one target.
type FakeCommit struct {
	// BuildFails makes every build step exit with status 1.
	BuildFails bool
	// Outputs are printed by successive benchmark invocations of the
	// target (every benchmark step of a run prints the same text), cycling
	// when there are more runs than outputs.
	Outputs []string
	// Output, when set, prints the output of benchmark invocation n
	// instead of Outputs: a test whose host changes speed between nights
	// computes it when the run happens.
	Output func(n int) string
	// ExitCode is the exit status of benchmark steps.
	ExitCode int
	// TimesOut makes benchmark steps time out.
	TimesOut bool
	// TimesOutFirst makes the first n invocations of each benchmark step
	// of the target time out, and the later ones answer as scripted.
	TimesOutFirst int
	// InfraErr makes every command, and materializing the target, fail
	// as if the host had gone away.
	InfraErr error
	// ApplyFails makes materializing the target fail with a
	// *gitops.ApplyError, as hunks that do not apply do.
	ApplyFails bool
	// Duration is how long each command claims to have taken; nothing
	// sleeps.
	Duration time.Duration
	// TreeChanges makes every Verify of the target's trees fail, as if
	// another process checked them out during each run.
	TreeChanges bool
	// GPUSamples are the nvidia-smi rows (GPUSampleFields, as
	// --format=csv,noheader,nounits prints them) that the sampling of
	// each benchmark step of the target reads back; benchmark steps are
	// sampled when Machine lists GPUs.
	GPUSamples string
}

// FakeCall is one command a Fake answered.
type FakeCall struct {
	Commit string
	Target string // the target key
	Phase  string // PhaseBuild, PhaseBench or PhaseReadback
	Step   string
	Slot   int
	Env    map[string]string
}

var _ runner.Host = (*Fake)(nil)

// Name returns HostName, or "fake".
func (f *Fake) Name() string {
	if f.HostName == "" {
		return "fake"
	}
	return f.HostName
}

// Layout returns Slots and Trees, defaulted.
func (f *Fake) Layout() runner.Layout {
	lay := runner.Layout{Slots: f.Slots, Trees: f.Trees}
	if lay.Slots <= 0 {
		lay.Slots = 1
	}
	if lay.Trees <= 0 {
		lay.Trees = runner.DefaultTrees
	}
	return lay
}

// Materialize records that src went into (slot, tree) and returns paths
// that name them; nothing is written.
func (f *Fake) Materialize(ctx context.Context, slot, tree int, src runner.Source) (runner.Workspace, error) {
	if err := ctx.Err(); err != nil {
		return runner.Workspace{}, err
	}
	t := src.Target
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.downErr("fake checkout"); err != nil {
		return runner.Workspace{}, err
	}
	_, script, ok := f.script(FakeCall{Commit: t.Commit, Target: t.Key()})
	switch {
	case !ok:
		return runner.Workspace{}, f.unscripted(t.Commit, t.Key())
	case script.InfraErr != nil:
		return runner.Workspace{}, &record.InfraError{Host: f.Name(), Op: "fake checkout", Err: script.InfraErr}
	case script.ApplyFails:
		return runner.Workspace{}, &gitops.ApplyError{File: "fake", Hunk: strings.Join(t.Hunks, ","), Err: errors.New("fake: does not apply")}
	}
	f.trees = append(f.trees, FakeTree{Slot: slot, Tree: tree, Target: t})
	dir := fmt.Sprintf("fake:%s/slots/%d/trees/%d", f.Name(), slot, tree)
	return runner.Workspace{Dir: dir, Scratch: fmt.Sprintf("fake:%s/scratch/%d", f.Name(), slot)}, nil
}

// Lock holds nothing: a Fake is never shared with another process.
func (f *Fake) Lock(ctx context.Context, slot, tree int) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return func() {}, nil
}

// Verify fails for a target scripted with TreeChanges.
func (f *Fake) Verify(ctx context.Context, slot, tree int, ws runner.Workspace, src runner.Source) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := src.Target
	f.mu.Lock()
	defer f.mu.Unlock()
	_, script, _ := f.script(FakeCall{Commit: t.Commit, Target: t.Key()})
	if script.TreeChanges {
		return &record.InfraError{Host: f.Name(), Op: "verify tree of " + t.Short(), Err: fmt.Errorf("%w: fake: changed under the run", runner.ErrTreeChanged)}
	}
	return nil
}

// Materialized returns every tree materialized so far, in order.
func (f *Fake) Materialized() []FakeTree {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeTree(nil), f.trees...)
}

// MaxConcurrent returns the most benchmark steps that were in flight at
// once.
func (f *Fake) MaxConcurrent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxActive
}

func (f *Fake) unscripted(commit, target string) error {
	return &record.InfraError{Host: f.Name(), Op: "fake exec", Err: fmt.Errorf("no script for commit %q (target %s)", commit, target)}
}

// Facts returns Machine.
func (f *Fake) Facts(ctx context.Context) (record.Fingerprint, error) {
	f.mu.Lock()
	err := f.downErr("collect host facts")
	f.mu.Unlock()
	if err != nil {
		return record.Fingerprint{}, err
	}
	if f.FactsErr != nil {
		return record.Fingerprint{}, &record.InfraError{Host: f.Name(), Op: "collect host facts", Err: f.FactsErr}
	}
	fp := f.Machine
	if fp.Host == "" {
		fp.Host = f.Name()
	}
	return fp, nil
}

// Exec answers cmd from the script of the target named in its
// environment. A benchmark step waits for Hold first, when it is set.
func (f *Fake) Exec(ctx context.Context, slot int, cmd runner.Command) (runner.Result, error) {
	if err := ctx.Err(); err != nil {
		return runner.Result{}, err
	}
	call := FakeCall{
		Commit: cmd.Env[runner.EnvCommit],
		Target: cmd.Env[runner.EnvTarget],
		Phase:  cmd.Env[runner.EnvPhase],
		Step:   cmd.Env[runner.EnvStep],
		Slot:   slot,
		Env:    maps.Clone(cmd.Env),
	}
	if call.Phase == runner.PhaseBench {
		if err := f.hold(ctx); err != nil {
			return runner.Result{}, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.downErr("fake exec"); err != nil {
		return runner.Result{}, err
	}
	f.calls = append(f.calls, call)

	key, script, ok := f.script(call)
	if !ok {
		return runner.Result{}, f.unscripted(call.Commit, call.Target)
	}
	if script.InfraErr != nil {
		return runner.Result{}, &record.InfraError{Host: f.Name(), Op: "fake exec", Err: script.InfraErr}
	}
	res := runner.Result{Duration: script.Duration}
	if cmd.EnvFile != "" {
		res.Env = maps.Clone(cmd.Env)
	}
	switch call.Phase {
	case runner.PhaseBuild:
		if script.BuildFails {
			res.ExitCode = 1
			res.Output = []byte("fake: build fails at " + call.Commit + "\n")
		}
	case runner.PhaseBench:
		if script.TimesOut {
			res.TimedOut, res.ExitCode = true, -1
			return res, nil
		}
		if f.runs == nil {
			f.runs = map[string]int{}
		}
		if f.timeouts == nil {
			f.timeouts = map[string]int{}
		}
		if k := key + "\x00" + call.Step; f.timeouts[k] < script.TimesOutFirst {
			f.timeouts[k]++
			res.TimedOut, res.ExitCode = true, -1
			return res, nil
		}
		// Each step counts its own invocations, so the steps of run n
		// all print Outputs[n].
		n := f.runs[key+"\x00"+call.Step]
		f.runs[key+"\x00"+call.Step]++
		switch {
		case script.Output != nil:
			res.Output = []byte(script.Output(n))
		case len(script.Outputs) > 0:
			res.Output = []byte(script.Outputs[n%len(script.Outputs)])
		}
		res.ExitCode = script.ExitCode
	case runner.PhaseReadback:
		res.Output = runner.ReadbackOutput(script.GPUSamples)
	default:
		return runner.Result{}, &record.InfraError{Host: f.Name(), Op: "fake exec", Err: fmt.Errorf("command without %s; is it run by a Runner?", runner.EnvPhase)}
	}
	return res, nil
}

// WaitInFlight blocks until n benchmark steps are in flight at once
// (held by Hold), and returns ctx's error when ctx ends first: a test
// sees that n measurements run concurrently by counting them, not by
// timing them.
func (f *Fake) WaitInFlight(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		reached, changed := f.active >= n, f.changedLocked()
		f.mu.Unlock()
		if reached {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("fake %s: waiting for %d benchmark steps in flight: %w", f.Name(), n, ctx.Err())
		}
	}
}

// changedLocked returns the channel closed at the next change of the
// steps in flight. The caller holds f.mu.
func (f *Fake) changedLocked() chan struct{} {
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	return f.changed
}

// setActive moves the count of steps in flight by d and wakes the
// waiters. The caller holds f.mu.
func (f *Fake) setActive(d int) {
	f.active += d
	f.maxActive = max(f.maxActive, f.active)
	close(f.changedLocked())
	f.changed = make(chan struct{})
}

// hold counts a benchmark step in flight while it waits for Hold.
func (f *Fake) hold(ctx context.Context) error {
	f.mu.Lock()
	f.setActive(1)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.setActive(-1)
		f.mu.Unlock()
	}()
	if f.Hold == nil {
		return nil
	}
	select {
	case <-f.Hold:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// script finds the script for a call and the key its runs are counted by.
func (f *Fake) script(c FakeCall) (string, FakeCommit, bool) {
	if s, ok := f.Targets[c.Target]; ok {
		return "target:" + c.Target, s, true
	}
	if s, ok := f.Commits[c.Commit]; ok {
		return "commit:" + c.Commit, s, true
	}
	if f.Default != nil {
		return "default:" + c.Target, *f.Default, true
	}
	return "", FakeCommit{}, false
}

// Calls returns every command answered so far, in order.
func (f *Fake) Calls() []FakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeCall(nil), f.calls...)
}

// Builds returns how many times the build of commit was started: the
// number of runs of its first build step.
func (f *Fake) Builds(commit string) int {
	return f.count(commit, runner.PhaseBuild)
}

// BenchRuns returns how many benchmark runs of commit were started: the
// number of runs of its first benchmark step.
func (f *Fake) BenchRuns(commit string) int {
	return f.count(commit, runner.PhaseBench)
}

func (f *Fake) count(commit, phase string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	first, n := "", 0
	for _, c := range f.calls {
		if c.Commit != commit || c.Phase != phase {
			continue
		}
		if first == "" {
			first = c.Step
		}
		if c.Step == first {
			n++
		}
	}
	return n
}
