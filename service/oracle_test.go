package service

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
	"github.com/perfbot/perfbot/runner/ssh"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

// oracleSpec builds with one step and reads verify_tok_s from one
// benchmark step.
var oracleSpec = record.Spec{
	Build: []record.Step{{Name: "build", Run: "true", Timeout: time.Minute}},
	Benchmarks: []record.BenchStep{{
		Step:   record.Step{Name: "engine", Run: "sh bench.sh", Timeout: time.Minute},
		Format: "gobench",
	}},
	Metrics: []record.Metric{{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher, Primary: true}},
}

const fakeOutput = "BenchmarkVerifyStep-2 1 1000 ns/op 100 tok/s\n"

func newTestOracle(t *testing.T, spec record.Spec, hosts ...runner.Host) (*Oracle, *store.DB) {
	t.Helper()
	pool, err := runner.NewPool(hosts...)
	require.NoError(t, err)
	db := storetest.Open(t)
	return NewOracle(db, pool, &runner.Runner{Spec: spec}, OracleOptions{}), db
}

// statuses returns the statuses of the runs recorded for t, in order.
func statuses(t *testing.T, o *Oracle, db *store.DB, target record.Target) []record.Status {
	t.Helper()
	runs, err := db.Runs(store.RunFilter{TargetKey: target.Key(), SpecHash: o.SpecHash()})
	require.NoError(t, err)
	var out []record.Status
	for _, r := range runs {
		out = append(out, r.Status)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func TestOracle(t *testing.T) {
	a := record.Target{Commit: "aaaa"}
	b := record.Target{Commit: "bbbb"}
	withHunks := record.Target{Commit: "aaaa", Patch: "p1", Hunks: []string{"h1"}}
	ok := runnertest.FakeCommit{Outputs: []string{fakeOutput}}
	tests := []struct {
		name string
		host *runnertest.Fake
		run  func(t *testing.T, o *Oracle, db *store.DB, host *runnertest.Fake)
	}{
		{
			name: "the store is read first and only the missing runs run",
			host: &runnertest.Fake{Default: &ok},
			run: func(t *testing.T, o *Oracle, db *store.DB, host *runnertest.Fake) {
				ctx := context.Background()
				require.NoError(t, o.Ensure(ctx, a, 3))
				require.NoError(t, o.Ensure(ctx, a, 3))
				assert.Equal(t, 3, host.BenchRuns("aaaa"))
				vals, err := o.Values(ctx, a, "verify_tok_s", 5)
				require.NoError(t, err)
				assert.Equal(t, []float64{100, 100, 100, 100, 100}, vals)
				assert.Equal(t, 5, host.BenchRuns("aaaa"))
				assert.Equal(t, 1, host.Builds("aaaa"), "the built tree serves the later runs")
				runs, builds := o.Counts()
				assert.Equal(t, [2]int{5, 1}, [2]int{runs, builds})
			},
		},
		{
			name: "alternating targets keep their builds",
			host: &runnertest.Fake{Default: &ok},
			run: func(t *testing.T, o *Oracle, db *store.DB, host *runnertest.Fake) {
				ctx := context.Background()
				for n := 1; n <= 3; n++ {
					require.NoError(t, o.Ensure(ctx, a, n))
					require.NoError(t, o.Ensure(ctx, b, n))
				}
				assert.Equal(t, 1, host.Builds("aaaa"))
				assert.Equal(t, 1, host.Builds("bbbb"))
				assert.Len(t, host.Materialized(), 2)
			},
		},
		{
			name: "a broken build is recorded and never built again",
			host: &runnertest.Fake{Default: &runnertest.FakeCommit{BuildFails: true}},
			run: func(t *testing.T, o *Oracle, db *store.DB, host *runnertest.Fake) {
				for range 2 {
					err := o.Ensure(context.Background(), a, 3)
					require.ErrorIs(t, err, record.ErrBroken)
					assert.ErrorContains(t, err, "build_failed")
					assert.False(t, record.IsInfra(err))
				}
				assert.Equal(t, 1, host.Builds("aaaa"))
				assert.Equal(t, []record.Status{record.StatusBuildFailed}, statuses(t, o, db, a))
			},
		},
		{
			name: "hunks that do not apply are a broken configuration",
			host: &runnertest.Fake{Default: &runnertest.FakeCommit{ApplyFails: true}},
			run: func(t *testing.T, o *Oracle, db *store.DB, host *runnertest.Fake) {
				o.AddPatch(&gitops.Patch{ID: "p1", Base: "aaaa"})
				for range 2 {
					err := o.Ensure(context.Background(), withHunks, 1)
					require.ErrorIs(t, err, record.ErrBroken)
					assert.False(t, record.IsInfra(err))
				}
				assert.Empty(t, host.Calls(), "nothing is built from a tree that did not materialize")
				assert.Equal(t, []record.Status{record.StatusBuildFailed}, statuses(t, o, db, withHunks))
			},
		},
		{
			name: "hunks of an unknown patch are the caller's mistake",
			host: &runnertest.Fake{Default: &ok},
			run: func(t *testing.T, o *Oracle, db *store.DB, host *runnertest.Fake) {
				err := o.Ensure(context.Background(), withHunks, 1)
				require.ErrorContains(t, err, "unknown patch p1")
				assert.False(t, record.IsInfra(err))
				assert.NotErrorIs(t, err, record.ErrBroken)
				assert.Empty(t, host.Materialized())
			},
		},
		{
			name: "an infrastructure failure is returned, recorded and tried again later",
			host: &runnertest.Fake{HostName: "gpu1", Default: &runnertest.FakeCommit{InfraErr: errors.New("connection reset")}},
			run: func(t *testing.T, o *Oracle, db *store.DB, host *runnertest.Fake) {
				for range 2 {
					err := o.Ensure(context.Background(), a, 2)
					var infra *record.InfraError
					require.ErrorAs(t, err, &infra)
					assert.Equal(t, "gpu1", infra.Host)
					assert.NotErrorIs(t, err, record.ErrBroken)
				}
				assert.Equal(t, []record.Status{record.StatusInfraError, record.StatusInfraError}, statuses(t, o, db, a))
			},
		},
		{
			name: "a request waiting for a lease ends with its ctx",
			host: &runnertest.Fake{Default: &ok, Hold: make(chan struct{})},
			run: func(t *testing.T, o *Oracle, db *store.DB, host *runnertest.Fake) {
				ctx, cancel := context.WithCancel(context.Background())
				first := make(chan error, 1)
				go func() { first <- o.Ensure(ctx, a, 1) }()
				require.Eventually(t, func() bool { return host.MaxConcurrent() == 1 }, 5*time.Second, time.Millisecond)
				waiting, stop := context.WithTimeout(context.Background(), 30*time.Millisecond)
				defer stop()
				require.ErrorIs(t, o.Ensure(waiting, b, 1), context.DeadlineExceeded)
				assert.Empty(t, statuses(t, o, db, b))
				cancel()
				require.ErrorIs(t, <-first, context.Canceled)
				assert.Empty(t, statuses(t, o, db, a), "a run ended by ctx is not recorded")
			},
		},
		{
			name: "two targets run at once on two slots",
			host: &runnertest.Fake{Slots: 2, Default: &ok, Hold: make(chan struct{})},
			run: func(t *testing.T, o *Oracle, db *store.DB, host *runnertest.Fake) {
				assert.Equal(t, 2, o.Parallel())
				errs := make(chan error, 2)
				for _, target := range []record.Target{a, b} {
					go func() { errs <- o.Ensure(context.Background(), target, 1) }()
				}
				require.Eventually(t, func() bool { return host.MaxConcurrent() == 2 }, 5*time.Second, time.Millisecond)
				close(host.Hold)
				require.NoError(t, <-errs)
				require.NoError(t, <-errs)
				slots := map[int]bool{}
				for _, c := range host.Calls() {
					slots[c.Slot] = true
				}
				assert.Equal(t, map[int]bool{0: true, 1: true}, slots)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, db := newTestOracle(t, oracleSpec, tt.host)
			tt.run(t, o, db, tt.host)
		})
	}
}

func TestOracleParallelIsThePoolSize(t *testing.T) {
	o, _ := newTestOracle(t, oracleSpec, &runnertest.Fake{HostName: "a", Slots: 3}, &runnertest.Fake{HostName: "b"})
	assert.Equal(t, 4, o.Parallel())
}

// rendezvousBench prints a value only once the benchmarks of two commits
// are running at the same time: each leaves a mark in $RENDEZVOUS and
// waits, at most five seconds, for a second mark.
const rendezvousBench = `touch "$RENDEZVOUS/$PERFBOT_COMMIT"
i=0
while [ "$(ls "$RENDEZVOUS" | wc -l)" -lt 2 ]; do
	i=$((i+1))
	if [ $i -gt 500 ]; then echo "no other benchmark ran alongside"; exit 1; fi
	sleep 0.01
done
echo "BenchmarkVerifyStep-2 1 1000 ns/op 100 tok/s"
`

// TestOracleTwoLocalHosts measures two commits at once on two configured
// local hosts: real checkouts of a real repository, each host in its own
// worktrees, and each run recorded with the host it ran on.
func TestOracleTwoLocalHosts(t *testing.T) {
	ctx := context.Background()
	builder := gitopstest.NewBuilder(t)
	c1 := builder.Commit("1", map[string]string{"bench.sh": rendezvousBench, "n.txt": "1\n"})
	c2 := builder.Commit("2", map[string]string{"n.txt": "2\n"})
	workdir := t.TempDir()
	repo, err := gitops.Open(ctx, builder.Dir, workdir)
	require.NoError(t, err)
	cfg := &config.Config{Workdir: workdir, Hosts: []config.Host{{Name: "a", Kind: config.HostLocal}, {Name: "b", Kind: config.HostLocal}}}
	hosts, err := newHosts(cfg, repo, nil)
	require.NoError(t, err)

	spec := oracleSpec
	spec.Benchmarks = []record.BenchStep{oracleSpec.Benchmarks[0]}
	spec.Benchmarks[0].Env = map[string]string{"RENDEZVOUS": t.TempDir()}
	o, db := newTestOracle(t, spec, hosts...)
	require.Equal(t, 2, o.Parallel())

	var wg sync.WaitGroup
	errs := map[string]error{}
	var mu sync.Mutex
	for _, c := range []string{c1, c2} {
		wg.Go(func() {
			err := o.Ensure(ctx, record.Target{Commit: c}, 1)
			mu.Lock()
			errs[c] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs[c1], errs[c2]))

	ran := map[string]string{} // commit → host
	for _, c := range []string{c1, c2} {
		runs, err := db.Runs(store.RunFilter{Commit: c})
		require.NoError(t, err)
		require.Len(t, runs, 1)
		require.Equal(t, record.StatusOK, runs[0].Status, runs[0].Error)
		ran[c] = runs[0].Host
	}
	assert.ElementsMatch(t, []string{"a", "b"}, []string{ran[c1], ran[c2]}, "each host measured one commit")
	runs, builds := o.Counts()
	assert.Equal(t, [2]int{2, 2}, [2]int{runs, builds})
	// Host a has the clone's trees 0 to runner.DefaultTrees-1, host b
	// the next ones; scratch files are under the workdir, one directory
	// per tree.
	b := strconv.Itoa(runner.DefaultTrees)
	for _, dir := range []string{"slots/0", "slots/" + b, "scratch/0", "scratch/" + b} {
		assert.DirExists(t, filepath.Join(workdir, dir))
	}
}

func TestNewHosts(t *testing.T) {
	workdir := t.TempDir()
	tests := []struct {
		name      string
		hosts     []config.Host
		want      []string // host names
		wantFirst []int    // their first trees
		wantErr   string
	}{
		{name: "no hosts is one local host", want: []string{"local"}, wantFirst: []int{0}},
		{name: "local hosts share the clone on disjoint trees",
			hosts: []config.Host{{Name: "a", Kind: config.HostLocal}, {Name: "b"}, {Name: "c", Kind: config.HostLocal, Workdir: workdir}},
			want:  []string{"a", "b", "c"}, wantFirst: []int{0, runner.DefaultTrees, 2 * runner.DefaultTrees}},
		{name: "an ssh host beside a local one",
			hosts: []config.Host{{Name: "local", Kind: config.HostLocal}, {Name: "gpu1", Kind: config.HostSSH, Address: "10.0.0.5:22", Workdir: "/data/perfbot", Slots: 2}},
			want:  []string{"local", "gpu1"}, wantFirst: []int{0, 0}},
		{name: "a local host with a workdir of its own is not supported yet",
			hosts:   []config.Host{{Name: "scratchy", Kind: config.HostLocal, Workdir: "/data/perfbot"}},
			wantErr: "host scratchy: a local host keeps its trees in the workdir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts, err := newHosts(&config.Config{Workdir: workdir, Hosts: tt.hosts}, nil, nil)
			if tt.wantErr != "" {
				var ie *InputError
				require.ErrorAs(t, err, &ie, "a configuration the user must change")
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var names []string
			var first []int
			for _, h := range hosts {
				names = append(names, h.Name())
				switch h := h.(type) {
				case *runner.Local:
					first = append(first, h.FirstTree)
					assert.Equal(t, workdir, h.Workdir)
				case *ssh.Host:
					// Its trees are numbered in its own workdir, on the host.
					first = append(first, 0)
					assert.Equal(t, "/data/perfbot", h.Workdir)
					assert.Equal(t, runner.Layout{Slots: 2, Trees: runner.DefaultTrees}, h.Layout())
				}
			}
			assert.Equal(t, tt.want, names)
			assert.Equal(t, tt.wantFirst, first)
		})
	}
}
