package service

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/internal/noisyrepo"
	"github.com/perfbot/perfbot/internal/slurmtest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/slurm"
	"github.com/perfbot/perfbot/store"
)

// These tests measure and bisect through a real single-node Slurm
// (package slurmtest).

func TestMain(m *testing.M) { slurmtest.Main(m) }

// slurmRepo is a noise repository of 12 commits whose culprit slows the
// benchmark by 20% at 1% noise, configured with one slurm host of slots
// slots on a workdir of its own, "shared" by the node.
func slurmRepo(t testing.TB, slots int) (*noisyrepo.Repo, *config.Config) {
	return slurmRepoBench(t, slots, 0)
}

// slurmRepoBench is slurmRepo whose benchmark first waits for wait, as a
// real one spends its time on the node's GPUs rather than in perfbot.
func slurmRepoBench(t testing.TB, slots int, wait time.Duration) (*noisyrepo.Repo, *config.Config) {
	t.Helper()
	slurmtest.Start(t)
	r, err := noisyrepo.Create(t.TempDir(), noisyrepo.Options{Commits: 12, Seed: 5, Factor: 0.8, CV: 0.01})
	require.NoError(t, err)
	data, err := os.ReadFile(r.ConfigPath)
	require.NoError(t, err)
	if wait > 0 {
		data = bytes.Replace(data, []byte("run: sh ./bench.sh"), fmt.Appendf(nil, "run: sleep %g; sh ./bench.sh", wait.Seconds()), 1)
	}
	data = fmt.Appendf(data, `hosts:
  - name: cluster
    kind: slurm
    partition: %s
    slots: %d
    time_limit: 10m
    workdir: ./shared
`, slurmtest.Partition, slots)
	require.NoError(t, os.WriteFile(r.ConfigPath, data, 0o644))
	cfg, err := config.Load(r.ConfigPath)
	require.NoError(t, err)
	return r, cfg
}

// Measure and bisect through kind: slurm with two slots: the trees are
// on the host's workdir, the culprit is found, and every run records the
// host and the node that ran it.
func TestSlurmMeasureAndBisect(t *testing.T) {
	r, cfg := slurmRepo(t, 2)
	ctx := context.Background()
	b, err := Open(ctx, cfg, Options{})
	require.NoError(t, err)
	defer b.Close()
	require.Equal(t, 2, b.Oracle.Parallel(), "two slots measure at once")

	ms, err := b.Measure(ctx, []string{r.First(), r.Last()}, 2)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	for _, m := range ms {
		assert.Equal(t, record.StatusOK, m.Status, m.Error)
	}
	trees, err := filepath.Glob(filepath.Join(cfg.Dir, "shared", "slots", "*", "bench.sh"))
	require.NoError(t, err)
	assert.NotEmpty(t, trees, "the trees are on the slurm host's workdir")

	rep, err := b.Bisect(ctx, BisectRequest{Good: r.First(), Bad: r.Last()})
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, rep.Verdict)
	require.Len(t, rep.Culprits, 1)
	assert.Equal(t, r.Culprit, rep.Culprits[0].Commit)

	runs, err := b.Store.Runs(store.RunFilter{})
	require.NoError(t, err)
	require.NotEmpty(t, runs)
	for _, run := range runs {
		assert.Equal(t, record.StatusOK, run.Status, run.Error)
		assert.Equal(t, "cluster", run.Host)
		assert.Equal(t, slurmtest.Node, run.Node)
	}
	queue, err := slurmtest.Start(t).Queue()
	require.NoError(t, err)
	assert.Empty(t, queue)
}

// newHosts makes a slurm host of the configuration, with its settings.
func TestNewHostsSlurm(t *testing.T) {
	cfg := &config.Config{Repo: config.Repo{URL: "/srv/infer"}, Workdir: t.TempDir(), Hosts: []config.Host{
		{Name: "cluster", Kind: config.HostSlurm, Workdir: "/shared/perfbot", Slurm: config.Slurm{
			Partition: "h200", Gres: "gpu:8", Slots: 4, Exclusive: true, SrunArgs: []string{"--qos=high"}}},
	}}
	hosts, err := newHosts(cfg, nil, nil)
	require.NoError(t, err)
	require.Len(t, hosts, 1)
	s, ok := hosts[0].(*slurm.Host)
	require.True(t, ok, "%T", hosts[0])
	assert.Equal(t, "cluster", s.Name())
	assert.Equal(t, runner.Layout{Slots: 4, Trees: runner.DefaultTrees}, s.Layout())
	assert.Equal(t, "/shared/perfbot", s.Local.Workdir)
	assert.Equal(t, "/srv/infer", s.Origin)
	assert.Equal(t, "h200", s.Partition)
	assert.Equal(t, "gpu:8", s.Gres)
	assert.True(t, s.Exclusive)
	assert.Equal(t, []string{"--qos=high"}, s.SrunArgs)
}

// A slurm host whose time limit is shorter than a step's timeout is
// refused, naming the host and the step.
func TestNewHostsSlurmTimeLimit(t *testing.T) {
	cfg := &config.Config{Workdir: t.TempDir(),
		Build:      []record.Step{{Name: "install", Timeout: 40 * time.Minute}},
		Benchmarks: []record.BenchStep{{Step: record.Step{Name: "serve", Timeout: 2 * time.Hour}}},
		Hosts: []config.Host{{Name: "cluster", Kind: config.HostSlurm, Workdir: "/shared",
			Slurm: config.Slurm{Slots: 1, TimeLimit: time.Hour}}}}
	_, err := newHosts(cfg, nil, nil)
	var in *InputError
	require.ErrorAs(t, err, &in)
	assert.EqualError(t, err, "host cluster: time_limit 1h0m0s is shorter than the timeout of step serve (2h0m0s): Slurm would end its job first, every time")

	// A benchmark's server starts in its step's job, which lasts the
	// server's start timeout more.
	cfg.Benchmarks = []record.BenchStep{{Step: record.Step{Name: "load", Timeout: 55 * time.Minute}, Server: &record.Server{Run: "serve", ReadyURL: "http://localhost:8000/health"}}}
	_, err = newHosts(cfg, nil, nil)
	require.ErrorAs(t, err, &in)
	assert.EqualError(t, err, "host cluster: time_limit 1h0m0s is shorter than the timeout of step load (55m0s) plus its server's start timeout (10m0s): Slurm would end its job first, every time")
	cfg.Benchmarks[0].Server.StartTimeout = 5 * time.Minute
	_, err = newHosts(cfg, nil, nil)
	require.NoError(t, err)
}

// BenchmarkSlurmBisect is the wall time of one bisection of the noise
// repository through kind: slurm with one and with two slots, from a
// fresh store and workdir each time: with a benchmark that takes no time
// (perfbot's and Slurm's own cost per run) and with one that takes half a
// second on the node.
func BenchmarkSlurmBisect(b *testing.B) {
	for _, wait := range []time.Duration{0, 500 * time.Millisecond} {
		for _, slots := range []int{1, 2} {
			b.Run(fmt.Sprintf("bench=%s/slots=%d", wait, slots), func(b *testing.B) {
				runs := 0
				for b.Loop() {
					b.StopTimer()
					r, cfg := slurmRepoBench(b, slots, wait)
					bot, err := Open(context.Background(), cfg, Options{})
					require.NoError(b, err)
					b.StartTimer()
					rep, err := bot.Bisect(context.Background(), BisectRequest{Good: r.First(), Bad: r.Last()})
					b.StopTimer()
					require.NoError(b, err)
					require.Equal(b, r.Culprit, rep.Culprits[0].Commit)
					runs += rep.Runs
					bot.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(runs)/float64(b.N), "runs/op")
			})
		}
	}
}
