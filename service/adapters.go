package service

import (
	"context"
	"sort"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
)

// commitOracle measures plain commits for the commit bisection.
type commitOracle struct {
	o      *Oracle
	metric string
}

var _ bisect.Oracle = commitOracle{}

func (c commitOracle) Samples(ctx context.Context, commit string, n int) ([]float64, error) {
	return c.o.Values(ctx, record.Target{Commit: commit}, c.metric, n)
}

// hunkOracle measures the base of a patch plus a subset of its hunks. The
// empty set is the base commit itself and, for a commit's own diff, the
// full set is the commit: both share the cache with the commit bisection.
type hunkOracle struct {
	o      *Oracle
	metric string
	patch  *gitops.Patch
	full   string // commit equal to base+all hunks, "" for a working copy
	all    map[string]bool
}

var _ bisect.SetOracle = (*hunkOracle)(nil)

func newHunkOracle(o *Oracle, metric string, p *gitops.Patch, full string) *hunkOracle {
	o.AddPatch(p)
	all := map[string]bool{}
	for _, h := range p.Hunks() {
		all[h.ID] = true
	}
	return &hunkOracle{o: o, metric: metric, patch: p, full: full, all: all}
}

func (h *hunkOracle) target(set []string) record.Target {
	if len(set) == 0 {
		return record.Target{Commit: h.patch.Base}
	}
	if h.full != "" && len(set) == len(h.all) {
		covered := true
		for _, id := range set {
			covered = covered && h.all[id]
		}
		if covered {
			return record.Target{Commit: h.full}
		}
	}
	hs := append([]string(nil), set...)
	sort.Strings(hs)
	return record.Target{Commit: h.patch.Base, Patch: h.patch.ID, Hunks: hs}
}

func (h *hunkOracle) Samples(ctx context.Context, set []string, n int) ([]float64, error) {
	return h.o.Values(ctx, h.target(set), h.metric, n)
}

// envOracle measures one commit under the good environment with the
// variables of the set taken from the bad environment.
type envOracle struct {
	o         *Oracle
	metric    string
	commit    string
	good, bad map[string]string
}

var _ bisect.SetOracle = (*envOracle)(nil)

func (e *envOracle) Samples(ctx context.Context, set []string, n int) ([]float64, error) {
	env := bisect.EnvConfiguration(e.good, e.bad, set)
	return e.o.Values(ctx, record.Target{Commit: e.commit, Env: env}, e.metric, n)
}
