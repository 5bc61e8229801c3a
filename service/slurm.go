package service

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/slurm"
)

// newSlurm returns the slurm host h. Its trees are worktrees of a clone of
// its own under h's workdir, which the cluster's nodes share; the clone is
// made from repo's, the clone perfbot resolves commits in, so it never
// asks the origin for more than that one has. A time limit shorter than a
// step's job is a configuration mistake: Slurm would end the job first,
// as an infrastructure failure, every time. A benchmark's server runs in
// its step's job, so that job lasts the server's start timeout more.
func newSlurm(cfg *config.Config, h config.Host, repo *gitops.Repo, log *slog.Logger) (*slurm.Host, error) {
	if limit := h.Slurm.TimeLimit; limit > 0 {
		for _, st := range cfg.Build {
			if st.Timeout > limit {
				return nil, timeLimitError(h, st, "")
			}
		}
		for _, b := range cfg.Benchmarks {
			server, start := "", time.Duration(0)
			if b.Server != nil {
				start = b.Server.StartTimeout
				if start <= 0 {
					start = runner.DefaultServerStartTimeout
				}
				server = fmt.Sprintf(" plus its server's start timeout (%s)", start)
			}
			if b.Timeout+start > limit {
				return nil, timeLimitError(h, b.Step, server)
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

func timeLimitError(h config.Host, st record.Step, server string) error {
	return &InputError{Err: fmt.Errorf("host %s: time_limit %s is shorter than the timeout of step %s (%s)%s: Slurm would end its job first, every time", h.Name, h.Slurm.TimeLimit, st.Name, st.Timeout, server)}
}
