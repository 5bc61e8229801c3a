package bisect

import (
	"context"
	"log/slog"
	"time"

	"github.com/perfbot/perfbot/record"
)

// Run is one benchmark run of a commit as the search sees it: the metric's
// value and the run's place in time.
type Run struct {
	// Value is the raw metric value (not a logarithm).
	Value float64
	// Seq orders the oracle's runs in time: a run with a larger Seq was
	// made later, and runs whose Seqs differ by a few were made a few runs
	// apart. All the runs of one oracle share one sequence (the store's
	// run ids, a fake's run counter). Zero means the time is unknown.
	Seq uint64
	// At is when the run started, when known: two runs adjacent in Seq
	// but far apart in time (yesterday's last run and today's first) are
	// not side by side.
	At time.Time
	// Host is the host that ran it, as Options.Hosts names hosts; "" is
	// one unnamed host.
	Host string
	// Node is the node of the host that ran it, where a host runs on
	// several (a cluster's), else "". The machine of a run is its host and
	// node: runs of different machines compare only through the machines'
	// speed offsets (see "Several hosts" in the package documentation).
	Node string
}

// machine names the machine that ran r: its host, and its node within
// the host where it has one.
func (r Run) machine() string {
	if r.Node == "" {
		return r.Host
	}
	return r.Host + "/" + r.Node
}

// Values returns the values of runs.
func Values(runs []Run) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = r.Value
	}
	return out
}

// Oracle measures commits.
type Oracle interface {
	// Samples returns every run recorded for the commit, oldest first,
	// measuring more until there are at least n; n = 0 returns only what is
	// recorded. Asking for one more run than recorded therefore makes one
	// fresh run now, which is how Confirm takes its runs. The searches may
	// call it concurrently for different commits. An error wrapping
	// record.ErrBroken means the commit does not build or run and is skipped; any
	// other error is an infrastructure failure and stops the search.
	Samples(ctx context.Context, commit string, n int) ([]Run, error)
}

// HostOracle is an Oracle that measures on the host it is told: the
// searches place their probes with it when Options.Hosts names the hosts.
type HostOracle interface {
	Oracle
	// SamplesOn returns every run recorded for the commit, on every host,
	// oldest first, measuring on host until host holds at least n of them
	// (runs whose Run.Host is host). Calls for one commit on different
	// hosts may run at once.
	SamplesOn(ctx context.Context, commit, host string, n int) ([]Run, error)
}

// Options configures Bisect, Scan and Locate. The zero value asks for the
// defaults.
type Options struct {
	// Confidence is the posterior probability a culprit needs. Default
	// DefaultConfidence.
	Confidence float64
	// MinEffect is the smallest relative change worth finding, as a
	// fraction (0.02 = 2%). Default DefaultMinEffect.
	MinEffect float64
	// MaxRuns bounds the runs one search requests from the oracle.
	// Default DefaultMaxRuns.
	MaxRuns int
	// Better says which way the metric improves. Default record.Higher.
	Better record.Better
	// Direction is the kind of change searched for. Default Regression.
	Direction record.Direction
	// Parallel is the number of probes measured at once (hosts). Default 1,
	// or the length of Hosts.
	Parallel int
	// Hosts names where the probes of one round go, one entry per probe
	// measured at once (a host of two slots appears twice). With an oracle
	// that is a HostOracle, the search places every run: the ends on
	// every host in turn, the probes of a round rotating over the hosts.
	// Empty, runs go wherever the oracle puts them.
	Hosts []string
	// InitialRuns is the number of runs each end gets before the ends are
	// first compared. The end comparison is sequential: it then adds one
	// run to each end at a time, interleaved, until it decides; "not
	// reproduced" needs at least 10 runs of each end. Default
	// DefaultInitialRuns.
	InitialRuns int
	// Expected, when above MinEffect, is the size of the change the caller
	// expects the range to hold (a fraction: a nightly alert's measured
	// change): the ends are then called the same once they exclude a
	// change of half of it, rather than of MinEffect. Ends that differ by
	// a little, real but far from what was expected, would otherwise take
	// hundreds of runs to be told from a change of MinEffect.
	Expected float64
	// SameTail is the probability of a change of at least MinEffect below
	// which the ends are called the same (not_reproduced). Zero asks for
	// 1−Confidence, the evidence a culprit needs: the verdict excludes a
	// change of MinEffect, while a real change searched for is larger and
	// lies far beyond that tail. Scan screens many stretches and uses a
	// laxer default (ScanSameTail).
	SameTail float64
	// Scan, when above 1, makes Locate survey the chain every Scan
	// commits (see Scan) instead of bisecting it whole.
	Scan int
	// Attempts bounds the searches of Locate: a culprit that is not
	// confirmed sends the range back to the search, with the confirmation's
	// runs in the oracle. Default DefaultAttempts.
	Attempts int
	// ConfirmPairs bounds the fresh parent/culprit pairs one confirmation
	// may take. Default DefaultConfirmPairs.
	ConfirmPairs int
	// Known holds confirmations from an earlier run of the same job, by
	// culprit commit: Locate takes a confirmed one as it is and measures
	// nothing for it.
	Known map[string]Confirmation
	// Logger receives debug records of the search; nil discards them.
	Logger *slog.Logger
	// OnProbe, when set, is called after every measurement, from the
	// goroutine that called the search (for progress lines and for
	// persisting the job).
	OnProbe func(ProbeEvent)
	// OnConfirm, when set, is called by Locate after every confirmation it
	// takes (for persisting the job).
	OnConfirm func(Confirmation)
	// OnSearchAgain, when set, is called by Locate before it searches the
	// range again: attempt is the search about to start (2, 3, …) and
	// unconfirmed the culprits that sent it back.
	OnSearchAgain func(attempt, unconfirmed int)
}

// ProbeEvent describes one measurement of a search in progress.
type ProbeEvent struct {
	// Phase is "verify" (the ends), "bisect", "residual" (a range left
	// beside a culprit), "survey" (Scan's survey points) or "confirm".
	Phase string
	// Commit and Index name the measured commit and its place on the chain.
	Commit string
	Index  int
	// N is the number of runs the commit has now; Median is their median.
	// Both are 0 for a broken commit.
	N      int
	Median float64
	// Status is "ok", "broken", or "infra" (the run failed on the
	// infrastructure: the commit is tried again, or skipped when its runs
	// fail more than two times in three).
	Status string
	// Best is the most probable culprit so far and Posterior its
	// probability ("" and 0 outside the bisect phase).
	Best      string
	Posterior float64
	// Samples is the number of runs requested so far.
	Samples int
}

// EndSummary describes the runs of one commit that count in the
// comparisons: stats.Summarize of their values.
type EndSummary struct {
	Commit string `json:"commit"`
	N      int    `json:"n"`
	// Median is the median value; Interval bounds it with probability
	// Confidence (at least 0.95 from 6 runs on; with fewer, it is the
	// range of the runs and Confidence its lower coverage).
	Median float64 `json:"median"`
	record.Interval
	Confidence float64 `json:"confidence"`
}

// Culprit is a commit that changed the metric.
type Culprit struct {
	Commit string `json:"commit"`
	// Index is the commit's place on the chain (0 is the good end).
	Index int `json:"index"`
	// Confidence is the posterior probability that this commit is where
	// the change happened.
	Confidence float64 `json:"confidence"`
	// Effect is the change from the parent to the commit, in percent of
	// the parent's value, with its 95% confidence interval: stats.Delta of
	// the runs of the two commits taken side by side in time (see
	// Confirm). Too few such runs leave the bounds at −100 and +Inf;
	// Locate always has enough.
	Effect record.Effect `json:"effect"`
	// Direction is Regression or Improvement.
	Direction record.Direction `json:"direction"`
	// Parent and Self summarize the parent's and the commit's runs that
	// the effect is estimated from.
	Parent EndSummary `json:"parent"`
	Self   EndSummary `json:"self"`
	// Confirmation is the verdict of Confirm on the commit; Locate sets it
	// (nil from Bisect and Scan).
	Confirmation *Confirmation `json:"confirmation,omitempty"`
}

// Probe is the record of one measured commit.
type Probe struct {
	Commit string  `json:"commit"`
	Index  int     `json:"index"`
	N      int     `json:"n"`
	Median float64 `json:"median"`
	// Status is "ok", "broken" or "infra".
	Status string `json:"status"`
	// Side is "good" before the first culprit, "bad" from the last one on,
	// and "" elsewhere or when no culprit was found.
	Side string `json:"side"`
}

// Result is the outcome of a search.
type Result struct {
	Verdict   record.Outcome   `json:"verdict"`
	Direction record.Direction `json:"direction"`
	Good      EndSummary       `json:"good"`
	Bad       EndSummary       `json:"bad"`
	// Culprits are ordered by chain index.
	Culprits []Culprit `json:"culprits,omitempty"`
	// Candidates lists the commits among which the change hides when the
	// verdict is record.OutcomeCandidates.
	Candidates []string `json:"candidates,omitempty"`
	// Skipped lists the broken commits met, in chain order, and those
	// skipped because their runs failed on the infrastructure.
	Skipped []string `json:"skipped,omitempty"`
	// SkippedInfra lists the commits of Skipped whose runs failed on the
	// infrastructure more than two times in three: they were skipped,
	// not judged, and say nothing about the revision.
	SkippedInfra []string `json:"skipped_infra,omitempty"`
	// Probes lists every commit measured, in chain order.
	Probes []Probe `json:"probes,omitempty"`
	// Samples is the number of runs requested from the oracle.
	Samples int `json:"samples"`
	// Rounds is the wall time in rounds: the runs requested one after
	// another, the runs of one round (one per host, at once) counting
	// once.
	Rounds int `json:"rounds"`
	// Since is the place in time (Run.Seq) of the first run the search
	// made, 0 when it made none; Drifting reports whether it found the
	// host's speed drifting. Locate lets Confirm count a culprit's runs
	// since then, taken in one search on a steady host, as they are.
	Since    uint64 `json:"since"`
	Drifting bool   `json:"drifting"`
	// Noise is the noise of one run the search measured within commits,
	// pooled over them; zero on a drifting host or with several
	// machines, where runs of different commits are not alike enough for
	// it. Locate hands it to Confirm.
	Noise Noise `json:"noise"`
	// Warnings are statistical caveats a reader should see, as values;
	// record.Warning.String renders them.
	Warnings []record.Warning `json:"warnings,omitempty"`
	// held are the runs of each commit measured, as the oracle last
	// returned them: Locate's confirmation starts from them rather than
	// asking the oracle again for what the search already holds.
	held map[string][]Run
}

// Noise is the size of a run's noise: the standard deviation of a run's
// log value around its commit's mean, pooled over commits, and its degrees
// of freedom; and the robust scale the search screened outliers at
// (stats.Scale), 0 when it had too few successive runs of a commit to
// estimate one and screened nothing.
type Noise struct {
	Sigma float64 `json:"sigma"`
	DF    float64 `json:"df"`
	Scale float64 `json:"scale,omitempty"`
}

// Probe statuses.
const (
	StatusOK     = "ok"
	StatusBroken = "broken"
	// StatusInfra marks a commit skipped because its runs failed on the
	// infrastructure more than two times in three.
	StatusInfra = "infra"
)
