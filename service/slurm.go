package service

import (
	"log/slog"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/runner"
)

// newSlurm returns the slurm host h. Its trees are worktrees of a clone of
// its own under h's workdir, which the cluster's nodes share; the clone is
// made from repo's, the clone perfbot resolves commits in, so it never
// asks the origin for more than that one has.
func newSlurm(cfg *config.Config, h config.Host, repo *gitops.Repo, log *slog.Logger) *runner.Slurm {
	origin := cfg.Repo.URL
	if repo != nil {
		origin = repo.Dir()
	}
	s := h.Slurm
	return &runner.Slurm{
		Local: &runner.Local{HostName: h.Name, Workdir: h.Workdir, Slots: s.Slots, Logger: log,
			Withheld: perfbotSecrets(cfg)},
		Origin:    origin,
		Partition: s.Partition,
		Gres:      s.Gres,
		TimeLimit: s.TimeLimit,
		Exclusive: s.Exclusive,
		SrunArgs:  s.SrunArgs,
	}
}
