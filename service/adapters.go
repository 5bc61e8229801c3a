package service

import (
	"context"
	"errors"
	"sort"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
)

// commitOracle measures plain commits for the commit bisection and its
// confirmations, on the host the search names (SamplesOn). Each run comes
// with its place in time: the store's run id, which grows with every run
// recorded, and its start time, so that runs taken at another time (an
// earlier stretch, an earlier night) are told from the runs of this job;
// and with the host that ran it, so that runs of different machines are
// compared only through their speeds.
type commitOracle struct {
	o      *Oracle
	metric string
}

var _ bisect.HostOracle = commitOracle{}

func (c commitOracle) Samples(ctx context.Context, commit string, n int) ([]bisect.Run, error) {
	return c.SamplesOn(ctx, commit, "", n)
}

// SamplesOn measures on host (any, when host is "") until host holds n
// runs of the commit, and returns the runs of every host: the search
// compares a host's runs with the ends' runs on that host.
func (c commitOracle) SamplesOn(ctx context.Context, commit, host string, n int) ([]bisect.Run, error) {
	entry, err := c.o.Recorded(ctx, record.Target{Commit: commit}, host, n)
	if err != nil {
		return nil, hostGone(err)
	}
	return c.runs(entry)
}

// hostGone marks the error of a host that left the pool (or of a pool
// that no host is left in) as bisect.ErrHostGone, for the search to place
// no more runs there; its message stays err's.
func hostGone(err error) error {
	if errors.Is(err, runner.ErrOutOfPool) {
		return &hostGoneError{err}
	}
	return err
}

type hostGoneError struct{ err error }

func (e *hostGoneError) Error() string        { return e.err.Error() }
func (e *hostGoneError) Unwrap() error        { return e.err }
func (e *hostGoneError) Is(target error) bool { return target == bisect.ErrHostGone }

// runs returns the recorded runs of entry with the metric, each with its
// place in time and the host (and a cluster's node) that ran it.
func (c commitOracle) runs(entry store.CacheEntry) ([]bisect.Run, error) {
	var runs []bisect.Run
	for _, r := range entry.OK {
		v, ok := r.Values[c.metric]
		if !ok {
			continue
		}
		host, err := c.o.hostOf(r)
		if err != nil {
			return nil, err
		}
		runs = append(runs, bisect.Run{Value: v, Seq: r.ID, At: r.Started, Host: host, Node: r.Node})
	}
	return runs, nil
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

var _ minimize.Oracle = (*hunkOracle)(nil)

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

var _ minimize.Oracle = (*envOracle)(nil)

func (e *envOracle) Samples(ctx context.Context, set []string, n int) ([]float64, error) {
	env := minimize.EnvConfiguration(e.good, e.bad, set)
	return e.o.Values(ctx, record.Target{Commit: e.commit, Env: env}, e.metric, n)
}
