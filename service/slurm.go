package service

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/slurm"
)

// newSlurm returns the slurm host h. Its trees are worktrees of a clone of
// its own under h's workdir, which the cluster's nodes share; the clone is
// made from repo's, the clone perfbot resolves commits in, so it never
// asks the origin for more than that one has. A time limit shorter than a
// step's timeout is a configuration mistake: Slurm would end the step's
// job first, as an infrastructure failure, every time.
func newSlurm(cfg *config.Config, h config.Host, repo *gitops.Repo, log *slog.Logger) (*slurm.Host, error) {
	if limit := h.Slurm.TimeLimit; limit > 0 {
		steps := slices.Clone(cfg.Build)
		for _, b := range cfg.Benchmarks {
			steps = append(steps, b.Step)
		}
		for _, st := range steps {
			if st.Timeout > limit {
				return nil, &InputError{Err: fmt.Errorf("host %s: time_limit %s is shorter than the timeout of step %s (%s): Slurm would end its job first, every time", h.Name, limit, st.Name, st.Timeout)}
			}
		}
	}
	origin := cfg.Repo.URL
	if repo != nil {
		origin = repo.Dir()
	}
	sc := h.Slurm
	return &slurm.Host{
		Local: &runner.Local{HostName: h.Name, Workdir: h.Workdir, Slots: sc.Slots, Trees: h.Trees, Logger: log,
			Withheld: perfbotSecrets(cfg)},
		Origin:    origin,
		Partition: sc.Partition,
		Gres:      sc.Gres,
		TimeLimit: sc.TimeLimit,
		Exclusive: sc.Exclusive,
		SrunArgs:  sc.SrunArgs,
	}, nil
}
