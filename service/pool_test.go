package service

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
	"github.com/perfbot/perfbot/store"
)

// downAfter is a fake host that answers its first benchmark runs and then
// goes down, as a machine that loses its network in the middle of a job;
// up brings it back.
type downAfter struct {
	*runnertest.Fake
	mu   sync.Mutex
	left int // benchmark runs it still answers; negative: all
}

func (d *downAfter) Exec(ctx context.Context, slot int, cmd runner.Command) (runner.Result, error) {
	d.mu.Lock()
	down := d.left == 0
	if d.left > 0 && cmd.Env[runner.EnvPhase] == runner.PhaseBench {
		d.left--
	}
	d.mu.Unlock()
	if down {
		return runner.Result{}, &record.InfraError{Host: d.Name(), Op: "connect to " + d.Name() + ":22",
			Err: runner.HostDown(errors.New("dial tcp: connect: connection refused"))}
	}
	return d.Fake.Exec(ctx, slot, cmd)
}

func (d *downAfter) up() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.left = -1
}

// benchCalls counts the benchmark invocations a fake answered.
func benchCalls(f *runnertest.Fake) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Phase == runner.PhaseBench {
			n++
		}
	}
	return n
}

// jobTrace is the trace of the one job of b.
func jobTrace(t *testing.T, b *Bot) (store.Job, string) {
	t.Helper()
	jobs, err := b.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	j, err := b.Job(context.Background(), jobs[0].ID)
	require.NoError(t, err)
	var lines []string
	for _, l := range j.Trace {
		lines = append(lines, l.Text)
	}
	return j.Job, strings.Join(lines, "\n")
}

// TestBisectHostLeavesThePool: of two hosts, one is down from the start.
// It fails three times, leaves the pool, and the bisection finishes on the
// other host with the culprit, skipping no commit; the job's trace says
// which host left and why.
func TestBisectHostLeavesThePool(t *testing.T) {
	h := newHistory(t, 30, stepAt(17, 0.08), nil)
	good := h.host
	good.HostName = "a"
	bad := &runnertest.Fake{HostName: "b", Commits: good.Commits}
	bad.SetDown(errors.New("dial tcp 10.0.0.6:22: connect: no route to host"))
	b, err := Open(context.Background(), h.cfg, Options{Hosts: []runner.Host{good, bad}})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })

	rep, err := b.Bisect(context.Background(), BisectRequest{Good: h.commits[0], Bad: "main"})
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, rep.Verdict, "warnings %q", record.WarningStrings(rep.Warnings))
	assert.Equal(t, h.commits[17], rep.Culprits[0].Commit)
	assert.Empty(t, rep.SkippedInfra, "the host's failures are no commit's")

	st := b.Oracle.HostStates()
	require.Len(t, st, 2)
	assert.False(t, st[0].Out)
	assert.True(t, st[1].Out)
	assert.Equal(t, 3, st[1].Failures)
	assert.Contains(t, st[1].Error, "no route to host")

	v, err := b.NewVitalsReader().Read(context.Background())
	require.NoError(t, err)
	assert.Equal(t, st, v.Hosts, "/metrics shows the hosts' health")

	_, trace := jobTrace(t, b)
	assert.Contains(t, trace, "host b left the pool at")
	assert.Contains(t, trace, "after 3 failures in a row (collect host facts: dial tcp 10.0.0.6:22: connect: no route to host)")

	runs, err := b.Store.Runs(store.RunFilter{SpecHash: b.Oracle.SpecHash()})
	require.NoError(t, err)
	onB := 0
	for _, r := range runs {
		if r.Host == "b" {
			onB++
			assert.Equal(t, record.StatusInfraError, r.Status)
		}
	}
	assert.Equal(t, 3, onB, "three failures on b, then no more leases")
	assert.Equal(t, rep.Runs, benchCalls(good))
}

// TestBisectEveryHostLeaves: both hosts go down in the middle of a
// bisection. The job stops with an infrastructure error (exit status 2 on
// the command line) that names both hosts and why; every run recorded
// before stays. Once the hosts are back, the same bisection resumes: it
// runs only what is missing and names the culprit.
func TestBisectEveryHostLeaves(t *testing.T) {
	h := newHistory(t, 30, stepAt(17, 0.08), nil)
	a := &downAfter{Fake: h.host, left: 6}
	a.HostName = "a"
	b2 := &downAfter{Fake: &runnertest.Fake{HostName: "b", Commits: h.host.Commits}, left: 6}
	b, err := Open(context.Background(), h.cfg, Options{Hosts: []runner.Host{a, b2}})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	req := BisectRequest{Good: h.commits[0], Bad: "main"}

	_, err = b.Bisect(ctx, req)
	require.Error(t, err)
	assert.True(t, record.IsInfra(err), "%v", err)
	assert.ErrorIs(t, err, runner.ErrOutOfPool)
	for _, want := range []string{"no host is left in the pool", "host a left the pool", "host b left the pool", "connection refused"} {
		assert.Contains(t, err.Error(), want)
	}
	job, trace := jobTrace(t, b)
	assert.Equal(t, record.JobFailed, job.Status)
	assert.Contains(t, trace, "host a left the pool")
	assert.Contains(t, trace, "host b left the pool")
	first := countOKRuns(t, b)
	assert.Equal(t, 12, first, "the runs made before the hosts went down are recorded")

	a.up()
	b2.up()
	before := benchCalls(a.Fake) + benchCalls(b2.Fake)
	rep, err := b.Bisect(ctx, req)
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, rep.Verdict, "warnings %q", record.WarningStrings(rep.Warnings))
	assert.Equal(t, h.commits[17], rep.Culprits[0].Commit)
	fresh := benchCalls(a.Fake) + benchCalls(b2.Fake) - before
	assert.Equal(t, countOKRuns(t, b)-first, fresh, "every fresh run is recorded")

	// The same bisection uninterrupted, on hosts that answer the same
	// values, costs more runs than the resumed one made: the resumed one
	// started from the runs recorded before.
	h2 := newHistory(t, 30, stepAt(17, 0.08), nil)
	ua, ub := h2.host, &runnertest.Fake{HostName: "b", Commits: h2.host.Commits}
	ua.HostName = "a"
	u, err := Open(ctx, h2.cfg, Options{Hosts: []runner.Host{ua, ub}})
	require.NoError(t, err)
	t.Cleanup(func() { u.Close() })
	whole, err := u.Bisect(ctx, BisectRequest{Good: h2.commits[0], Bad: "main"})
	require.NoError(t, err)
	assert.Less(t, fresh, countOKRuns(t, u), "runs of the resumed job, against a whole job's (%d recorded before)", first)
	assert.Equal(t, whole.Culprits[0].Commit, rep.Culprits[0].Commit)
	for _, st := range b.Oracle.HostStates() {
		assert.False(t, st.Out, "%s is back: a new job tries the hosts that left", st.Name)
	}
}

// countOKRuns counts the ok runs in b's store.
func countOKRuns(t *testing.T, b *Bot) int {
	t.Helper()
	runs, err := b.Store.Runs(store.RunFilter{SpecHash: b.Oracle.SpecHash()})
	require.NoError(t, err)
	n := 0
	for _, r := range runs {
		if r.Status == record.StatusOK {
			n++
		}
	}
	return n
}
