package service

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
	"github.com/perfbot/perfbot/store"
)

// chainHost scripts a fake host named name over the commits c00 … c(n−1):
// commit i runs at level(i) tok/s times the host's speed, with 1% noise.
func chainHost(name string, n int, level func(int) float64, speed float64, seed int64) *runnertest.Fake {
	rng := rand.New(rand.NewSource(seed))
	host := &runnertest.Fake{HostName: name, Commits: map[string]runnertest.FakeCommit{}}
	for i := range n {
		var outs []string
		for range 80 {
			v := level(i) * speed * (1 + 0.01*rng.NormFloat64())
			outs = append(outs, fmt.Sprintf("BenchmarkVerifyStep-2 1 1000 ns/op %.3f tok/s\n", v))
		}
		host.Commits[chainCommit(i)] = runnertest.FakeCommit{Outputs: outs}
	}
	return host
}

func chainCommit(i int) string { return fmt.Sprintf("c%02d", i) }

func chainOf(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = chainCommit(i)
	}
	return out
}

// untilDone keeps a test that waits for runs in flight from hanging when
// the code under test serializes them; it measures no speed.
func untilDone(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestBisectProbesRunAtOnce measures a bisection through the oracle, the
// pool and the runner on fake hosts whose benchmark steps are held until
// the test has counted K of them in flight at once.
func TestBisectProbesRunAtOnce(t *testing.T) {
	const n = 20
	level := stepAt(12, 0.06)
	t.Run("four hosts of one slot", func(t *testing.T) {
		hold := make(chan struct{})
		var hosts []runner.Host
		var fakes []*runnertest.Fake
		for j := range 4 {
			f := chainHost(fmt.Sprintf("gpu%d", j), n, level, 1, int64(j))
			f.Hold = hold
			fakes, hosts = append(fakes, f), append(hosts, f)
		}
		o, db := newTestOracle(t, oracleSpec, hosts...)
		done := make(chan error, 1)
		var res *bisect.Result
		go func() {
			var err error
			res, err = bisect.Locate(untilDone(t), chainOf(n), commitOracle{o: o, metric: "verify_tok_s"}, bisect.Options{Hosts: o.Hosts()})
			done <- err
		}()
		// The ends' first round: one run on each host, all held at once.
		for _, f := range fakes {
			require.NoError(t, f.WaitInFlight(untilDone(t), 1))
		}
		close(hold)
		require.NoError(t, <-done)
		assert.Equal(t, []string{chainCommit(12)}, culprits(res))
		for _, f := range fakes {
			assert.Equal(t, 1, f.MaxConcurrent(), "one slot each")
			assert.Positive(t, f.BenchRuns(chainCommit(0)), "%s ran the good end", f.Name())
			assert.Positive(t, f.BenchRuns(chainCommit(n-1)), "%s ran the bad end", f.Name())
		}
		assertRunsNameTheirHost(t, db, o, fakes)
	})
	t.Run("one host of four slots", func(t *testing.T) {
		f := chainHost("cluster", n, level, 1, 1)
		f.Slots = 4
		o, db := newTestOracle(t, oracleSpec, f)
		co := commitOracle{o: o, metric: "verify_tok_s"}
		// The ends measured before (a night's runs), so that the first
		// round is the search's probes, four different commits.
		for _, end := range []string{chainCommit(0), chainCommit(n - 1)} {
			_, err := co.SamplesOn(context.Background(), end, "cluster", 3)
			require.NoError(t, err)
		}
		f.Hold = make(chan struct{})
		done := make(chan error, 1)
		var res *bisect.Result
		go func() {
			var err error
			res, err = bisect.Locate(untilDone(t), chainOf(n), co, bisect.Options{Hosts: o.Hosts()})
			done <- err
		}()
		require.NoError(t, f.WaitInFlight(untilDone(t), 4))
		close(f.Hold)
		require.NoError(t, <-done)
		assert.Equal(t, []string{chainCommit(12)}, culprits(res))
		assert.Equal(t, 4, f.MaxConcurrent())
		slots := map[int]bool{}
		for _, c := range f.Calls() {
			slots[c.Slot] = true
		}
		assert.Len(t, slots, 4, "every slot measured")
		assertRunsNameTheirHost(t, db, o, []*runnertest.Fake{f})
	})
}

// TestBisectHostsOfDifferentSpeeds: one host runs 7% slower than the
// other, more than the 5% drop searched for; the culprit is still found
// and confirmed, and each run names the host that ran it.
func TestBisectHostsOfDifferentSpeeds(t *testing.T) {
	const n = 24
	level := stepAt(15, 0.05)
	fast, slow := chainHost("fast", n, level, 1, 1), chainHost("slow", n, level, 0.93, 2)
	o, db := newTestOracle(t, oracleSpec, fast, slow)
	res, err := bisect.Locate(context.Background(), chainOf(n), commitOracle{o: o, metric: "verify_tok_s"}, bisect.Options{Hosts: o.Hosts()})
	require.NoError(t, err)
	require.Equal(t, []string{chainCommit(15)}, culprits(res), "warnings %v", record.WarningStrings(res.Warnings))
	require.NotNil(t, res.Culprits[0].Confirmation)
	assert.True(t, res.Culprits[0].Confirmation.Confirmed, res.Culprits[0].Confirmation.String())
	assert.InDelta(t, -5, res.Culprits[0].Effect.Pct, 1.5, "the effect is measured on one host")
	assertRunsNameTheirHost(t, db, o, []*runnertest.Fake{fast, slow})
}

func TestOracleEnsureOn(t *testing.T) {
	a, b := chainHost("a", 2, stepAt(1, 0), 1, 1), chainHost("b", 2, stepAt(1, 0), 1, 2)
	hold := make(chan struct{})
	a.Hold, b.Hold = hold, hold
	o, db := newTestOracle(t, oracleSpec, a, b)
	assert.Equal(t, []string{"a", "b"}, o.Hosts())
	target := record.Target{Commit: chainCommit(0)}

	// One target on two hosts at once.
	errs := make(chan error, 2)
	for _, h := range []string{"a", "b"} {
		go func() { errs <- o.EnsureOn(untilDone(t), target, h, 1) }()
	}
	require.NoError(t, a.WaitInFlight(untilDone(t), 1))
	require.NoError(t, b.WaitInFlight(untilDone(t), 1))
	close(hold)
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)

	// A host that holds its runs measures nothing more.
	require.NoError(t, o.EnsureOn(context.Background(), target, "b", 1))
	assert.Equal(t, 1, b.BenchRuns(chainCommit(0)))
	require.NoError(t, o.EnsureOn(context.Background(), target, "b", 3))
	assert.Equal(t, 3, b.BenchRuns(chainCommit(0)))
	assert.Equal(t, 1, a.BenchRuns(chainCommit(0)))

	err := o.EnsureOn(context.Background(), target, "nosuch", 1)
	assert.ErrorContains(t, err, `no host named "nosuch"`)
	assertRunsNameTheirHost(t, db, o, []*runnertest.Fake{a, b})
}

// assertRunsNameTheirHost checks that every recorded run names the host
// that ran it: each host's benchmark runs of a commit are the store's runs
// of that commit that name it.
func assertRunsNameTheirHost(t *testing.T, db *store.DB, o *Oracle, fakes []*runnertest.Fake) {
	t.Helper()
	runs, err := db.Runs(store.RunFilter{SpecHash: o.SpecHash()})
	require.NoError(t, err)
	byHost := map[string]map[string]int{}
	for _, r := range runs {
		if byHost[r.Host] == nil {
			byHost[r.Host] = map[string]int{}
		}
		byHost[r.Host][r.Target.Commit]++
	}
	for _, f := range fakes {
		for commit := range f.Commits {
			assert.Equal(t, f.BenchRuns(commit), byHost[f.Name()][commit], "runs of %s on %s", commit, f.Name())
		}
	}
	entry, err := db.Cached(o.SpecHash(), record.Target{Commit: chainCommit(0)}.Key())
	require.NoError(t, err)
	for _, r := range entry.OK {
		assert.NotEmpty(t, r.Host, "the cache names the host of run %d", r.ID)
	}
}

func culprits(res *bisect.Result) []string {
	var out []string
	for _, c := range res.Culprits {
		out = append(out, c.Commit)
	}
	return out
}
