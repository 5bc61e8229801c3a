package bisect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/perfbot/perfbot/record"
)

// Oracle measures commits for Bisect.
type Oracle interface {
	// Samples returns every value recorded for the commit (raw metric
	// values, not logarithms), measuring more until there are at least n;
	// n = 0 returns only what is recorded. Bisect may call it concurrently
	// for different commits. An error wrapping ErrBroken means the commit
	// does not build or run and is skipped; any other error is an
	// infrastructure failure and stops the search.
	Samples(ctx context.Context, commit string, n int) ([]float64, error)
}

// ErrBroken marks a revision or configuration that cannot be measured
// because it does not build or its benchmark fails: a property of the
// revision, not of the host.
var ErrBroken = errors.New("broken revision")

// InfraError reports an infrastructure failure (host unreachable, disk full)
// while measuring Commit. The search stops; the job may be retried.
type InfraError struct {
	Commit string
	Err    error
}

// Error implements error.
func (e *InfraError) Error() string {
	return fmt.Sprintf("measure %s: infrastructure: %v", e.Commit, e.Err)
}

// Unwrap returns the oracle's error.
func (e *InfraError) Unwrap() error { return e.Err }

// Options configures Bisect. The zero value asks for the defaults.
type Options struct {
	// Confidence is the posterior probability a culprit needs. Default 0.99.
	Confidence float64
	// MinEffect is the smallest relative change worth finding, as a
	// fraction (0.02 = 2%). Default 0.02.
	MinEffect float64
	// MaxRuns bounds the values requested from the oracle. Default 400.
	MaxRuns int
	// Better says which way the metric improves. Default record.Higher.
	Better record.Better
	// Direction is the kind of change searched for. Default Regression.
	Direction record.Direction
	// Parallel is the number of probes measured at once (hosts). Default 1.
	Parallel int
	// InitialRuns is the number of runs each end gets before the ends are
	// first compared. The end comparison is sequential: it then adds one
	// run to each end at a time, interleaved, until it decides; "not
	// reproduced" needs at least 10 runs of each end. Default 3.
	InitialRuns int
	// SameTail is the probability of a change of at least MinEffect below
	// which the ends are called the same (not_reproduced). Zero asks for
	// a tenth of 1−Confidence: nothing is bisected after that verdict, so
	// it asks for more evidence than a culprit. Scan screens many
	// stretches and uses a laxer default (ScanSameTail).
	SameTail float64
	// Logger receives debug records of the search; nil discards them.
	Logger *slog.Logger
	// OnProbe, when set, is called after every measurement, from the
	// goroutine that called Bisect (for progress lines and for persisting
	// the job).
	OnProbe func(ProbeEvent)
}

// ProbeEvent describes one measurement of a search in progress.
type ProbeEvent struct {
	// Phase is "verify" (the ends), "bisect" or "residual" (a range left
	// beside a culprit).
	Phase string
	// Commit and Index name the measured commit and its place on the chain.
	Commit string
	Index  int
	// N is the number of values the commit has now; Median is their
	// median. Both are 0 for a broken commit.
	N      int
	Median float64
	// Status is "ok" or "broken".
	Status string
	// Best is the most probable culprit so far and Posterior its
	// probability ("" and 0 outside the bisect phase).
	Best      string
	Posterior float64
	// Samples is the number of values requested so far.
	Samples int
}

// EndSummary describes one end of the range as measured.
type EndSummary struct {
	Commit string
	N      int
	// Median is the median value; Lo and Hi bound its 95% confidence
	// interval.
	Median, Lo, Hi float64
}

// Culprit is a commit that changed the metric.
type Culprit struct {
	Commit string
	// Index is the commit's place on the chain (0 is the good end).
	Index int
	// Confidence is the posterior probability that this commit is where
	// the change happened.
	Confidence float64
	// DeltaPct is the change from the segment before the commit to the
	// segment from it on, in percent of the former; CILoPct and CIHiPct
	// bound its 95% confidence interval.
	DeltaPct, CILoPct, CIHiPct float64
	// Direction is Regression or Improvement.
	Direction record.Direction
}

// Probe is the record of one measured commit.
type Probe struct {
	Commit string
	Index  int
	N      int
	Median float64
	// Status is "ok" or "broken".
	Status string
	// Side is "good" before the first culprit, "bad" from the last one on,
	// and "" elsewhere or when no culprit was found.
	Side string
}

// Result is the outcome of Bisect.
type Result struct {
	Verdict   record.Outcome
	Direction record.Direction
	Good, Bad EndSummary
	// Culprits are ordered by chain index.
	Culprits []Culprit
	// Candidates lists the commits among which the change hides when the
	// verdict is record.OutcomeCandidates.
	Candidates []string
	// Skipped lists the broken commits met, in chain order.
	Skipped []string
	// Probes lists every commit measured, in chain order.
	Probes []Probe
	// Samples is the number of values requested from the oracle.
	Samples int
	// Warnings are statistical caveats a reader should see.
	Warnings []string
}

// Probe statuses.
const (
	StatusOK     = "ok"
	StatusBroken = "broken"
)
