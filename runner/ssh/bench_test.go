package ssh

import (
	"context"
	"testing"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/internal/sshdtest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// BenchmarkMeasureLocalVsSSH measures one Measure of 3 runs of
// counterSpec, the tree checked out anew each time (two commits alternate
// in one tree), on the local host and on an SSH host on 127.0.0.1 over
// the same repository: the cost of the SSH round trips, bundles aside
// (the remote clone has both commits after the first iteration).
func BenchmarkMeasureLocalVsSSH(b *testing.B) {
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(b, 2)
	hosts := map[string]func(b *testing.B) runner.Host{
		"local": func(b *testing.B) runner.Host {
			workdir := b.TempDir()
			repo, err := gitops.Open(ctx, src, workdir)
			if err != nil {
				b.Fatal(err)
			}
			return &runner.Local{Repo: repo, Workdir: workdir, Trees: 1}
		},
		"ssh": func(b *testing.B) runner.Host {
			srv := sshdtest.Start(b)
			repo, err := gitops.Open(ctx, src, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			h := &Host{HostName: "gpu1", Address: srv.Addr, User: srv.User, KeyFile: srv.KeyFile, KnownHosts: srv.KnownHosts,
				Workdir: b.TempDir(), Repo: repo, Trees: 1}
			b.Cleanup(func() { h.Close() })
			return h
		},
	}
	for _, name := range []string{"local", "ssh"} {
		b.Run(name, func(b *testing.B) {
			pool, err := runner.NewPool(hosts[name](b))
			if err != nil {
				b.Fatal(err)
			}
			r := &runner.Runner{Spec: runnertest.CounterSpec}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lease, err := pool.Acquire(ctx, record.Target{Commit: commits[i%2]})
				if err != nil {
					b.Fatal(err)
				}
				_, err = r.Measure(ctx, lease, runner.Source{Target: record.Target{Commit: commits[i%2]}}, 3, func(record.Run) error { return nil })
				lease.Release()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
