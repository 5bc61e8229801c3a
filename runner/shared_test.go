package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// Two perfbot processes (two clones opened on one workdir, two pools)
// measure different commits at once: every sample stored as ok is the
// sample of its own commit.
func TestTwoProcessesShareAWorkdir(t *testing.T) {
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 3)
	workdir := t.TempDir()
	type process struct {
		commit string
		want   float64
		runs   []record.Run
		err    error
	}
	procs := []*process{{commit: commits[0], want: 1}, {commit: commits[2], want: 3}}
	var wg sync.WaitGroup
	for _, p := range procs {
		repo, err := gitops.Open(ctx, src, workdir)
		require.NoError(t, err)
		pool, err := runner.NewPool(&runner.Local{Repo: repo, Workdir: workdir, Trees: 1})
		require.NoError(t, err)
		r := &runner.Runner{Spec: runnertest.CounterSpec}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				runs, err := runnertest.Measure(t, ctx, pool, r, runner.Source{Target: record.Target{Commit: p.commit}}, 2)
				p.runs = append(p.runs, runs...)
				if err != nil {
					p.err = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, p := range procs {
		require.NoError(t, p.err)
		for _, run := range p.runs {
			if run.Status == record.StatusOK {
				assert.Equal(t, p.want, run.Values["verify_tok_s"], "a sample of commit %.0f", p.want)
			}
		}
		assert.NotEmpty(t, p.runs)
	}
}

// A step that moves its tree to another commit makes the run an
// infrastructure failure without samples, never a sample of the other
// commit; the tree is not trusted afterwards.
func TestMeasureTreeChangedUnderTheRun(t *testing.T) {
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 2)
	workdir := t.TempDir()
	repo, err := gitops.Open(ctx, src, workdir)
	require.NoError(t, err)
	pool, err := runner.NewPool(&runner.Local{Repo: repo, Workdir: workdir})
	require.NoError(t, err)
	spec := runnertest.CounterSpec
	spec.Benchmarks = []record.BenchStep{runnertest.CounterSpec.Benchmarks[0]}
	spec.Benchmarks[0].Run = "git checkout -q --detach " + commits[0] + "; " + runnertest.CounterSpec.Benchmarks[0].Run
	runs, err := runnertest.Measure(t, ctx, pool, &runner.Runner{Spec: spec}, runner.Source{Target: record.Target{Commit: commits[1]}}, 2)

	var infra *record.InfraError
	require.ErrorAs(t, err, &infra)
	assert.ErrorIs(t, err, runner.ErrTreeChanged)
	require.Len(t, runs, 1)
	assert.Equal(t, record.StatusInfraError, runs[0].Status)
	assert.Contains(t, runs[0].Error, "HEAD is "+commits[0][:10])
	assert.Nil(t, runs[0].Values)
	assert.Empty(t, runs[0].Samples)
}

// A tree that another process checked out while this one's pool held it
// built is verified before it is trusted, and built again.
func TestMeasureRebuildsATreeAnotherProcessChanged(t *testing.T) {
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 2)
	workdir := t.TempDir()
	repo, err := gitops.Open(ctx, src, workdir)
	require.NoError(t, err)
	pool, err := runner.NewPool(&runner.Local{Repo: repo, Workdir: workdir, Trees: 1})
	require.NoError(t, err)
	r := &runner.Runner{Spec: runnertest.CounterSpec}
	target := runner.Source{Target: record.Target{Commit: commits[1]}}
	_, err = runnertest.Measure(t, ctx, pool, r, target, 1)
	require.NoError(t, err)

	other, err := gitops.Open(ctx, src, workdir)
	require.NoError(t, err)
	_, err = other.Checkout(ctx, 0, commits[0])
	require.NoError(t, err)

	runs, err := runnertest.Measure(t, ctx, pool, r, target, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, []string{"build", "engine"}, logSteps(runs[0]), "built again")
	assert.Equal(t, 2.0, runs[0].Values["verify_tok_s"])
}

// A tree that another process holds is waited for, and after the host's
// wait refused with the holder named.
func TestLeaseOfATreeAnotherProcessHolds(t *testing.T) {
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 1)
	workdir := t.TempDir()
	repo, err := gitops.Open(ctx, src, workdir)
	require.NoError(t, err)
	other, err := gitops.Open(ctx, src, workdir)
	require.NoError(t, err)
	held, err := other.LockSlot(ctx, 0, 0, nil)
	require.NoError(t, err)
	defer held.Release()

	pool, err := runner.NewPool(&runner.Local{HostName: "box", Repo: repo, Workdir: workdir, Trees: 1, LockWait: 50 * time.Millisecond})
	require.NoError(t, err)
	_, err = pool.Acquire(ctx, record.Target{Commit: commits[0]})
	var infra *record.InfraError
	require.ErrorAs(t, err, &infra)
	assert.Equal(t, "box", infra.Host)
	assert.Equal(t, "lock tree 0", infra.Op)
	assert.ErrorContains(t, err, "is held by pid")

	held.Release()
	lease, err := pool.Acquire(ctx, record.Target{Commit: commits[0]})
	require.NoError(t, err, "the slot refused is free again")
	lease.Release()
}
