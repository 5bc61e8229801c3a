package bisect

import (
	"context"
	"math"

	"github.com/perfbot/perfbot/record"
)

// endsOutcome is the decision of the sequential end comparison.
type endsOutcome int

const (
	endsUndecided endsOutcome = iota
	endsDiffer
	endsSame
)

// Thresholds of the end comparison, chosen by simulation
// (cmd/bench-bisect).
const (
	// verifyAlpha is the error allowed when the ends are first called
	// different. It can be modest: the bisection keeps comparing the ends
	// and drops a range whose change vanishes.
	verifyAlpha = 0.01
	// notReproducedFactor scales 1−Confidence into the tail that calls
	// the ends the same for good (see notReproducedTail).
	notReproducedFactor = 0.1
	// residualAlpha is the error allowed when a range beside a culprit is
	// called different; it starts another bisection, so it is strict.
	residualAlpha = 1e-3
	// residualSameTail is the probability of a further change of the
	// minimum effect below which a residual range is let go. It is weak on
	// purpose: second culprits are rare, and proving the absence of a 2%
	// step at 5% noise would take hundreds of runs per range.
	residualSameTail = 0.1
	// residualMinRuns is what each end of a residual range gets before the
	// comparison starts: the commits beside a culprit, measured again,
	// are also its confirmation.
	residualMinRuns = 2
	// residualMaxNew and residualExtend are the runs one residual check
	// may add, at noise equal to the minimum effect (see residualRuns):
	// the first always, the second while the estimate alone shows a change
	// of the minimum effect. Past them the range is reported as not fully
	// checked.
	residualMaxNew = 2.0
	residualExtend = 24.0
	// maxNoiseRatio caps (σ/MinEffect)² for the residual allowances, so
	// that a tiny minimum effect does not buy hundreds of runs per check.
	maxNoiseRatio = 16.0
	// plausibleTail is the probability of a change of at least the
	// minimum effect above which a residual check keeps adding runs up to
	// its extended allowance. Below one half it follows changes whose
	// estimate has not yet reached the minimum effect: a second 3% drop
	// measured with three runs often looks like 1.5%.
	plausibleTail = 0.3
	// notReproducedRuns is the runs each end needs before the ends of a
	// range are called the same for good.
	notReproducedRuns = 10
)

// endsTest compares two commits of the chain.
type endsTest struct {
	phase    string
	a, b     int     // a is older than b
	minRuns  int     // runs each side gets before the first decision
	sameRuns int     // runs each side needs before "same"
	alpha    float64 // "differ" when P(no change or the other way) falls to this
	sameTail float64 // "same" when P(|change| ≥ MinEffect) falls to this
	maxNew   int     // runs the test may add (on top of the budget)
	// extendMax is the runs the test may add while a change of the
	// minimum effect stays plausible (one that may be real but is not yet
	// significant).
	extendMax int
}

// compareEnds runs the sequential comparison of t.a and t.b: it measures
// both up to t.minRuns, interleaved, then adds one run to each in turn
// (a, b, a, b …) until the change b−a is shown in a searched direction by
// at least the minimum effect (endsDiffer) or shown not to reach it
// (endsSame), or until its allowance (t.maxNew runs after the first
// decision, t.extendMax while the estimate looks like a change) is spent.
// It returns the decision and, for endsDiffer, the direction.
func (s *search) compareEnds(ctx context.Context, t endsTest) (endsOutcome, record.Direction, error) {
	added := 0
	for {
		if err := ctx.Err(); err != nil {
			return endsUndecided, "", err
		}
		na, nb := len(s.commits[t.a].raw), len(s.commits[t.b].raw)
		next := t.a
		if nb < na {
			next = t.b
		}
		if na >= t.minRuns && nb >= t.minRuns {
			out, dir, looks := s.decideEnds(t)
			if out != endsUndecided {
				return out, dir, nil
			}
			if added >= t.maxNew && !(looks && added < t.extendMax) {
				return endsUndecided, "", nil
			}
			added++
		}
		if !s.budgetFor(1) {
			return endsUndecided, "", nil
		}
		if err := s.measureOne(ctx, t.phase, next); err != nil {
			return endsUndecided, "", err
		}
	}
}

// decideEnds applies the decision rule to the current values. The change
// δ = mean(b) − mean(a) of the log values, oriented so that positive is
// worse, has a Student-t posterior around its estimate (flat prior on the
// means, Jeffreys on σ), with σ pooled over every commit measured so far.
//
// looks reports whether a change of at least the minimum effect in a
// searched direction is still plausible (probability ≥ plausibleTail).
func (s *search) decideEnds(t endsTest) (out endsOutcome, dir record.Direction, looks bool) {
	a, b := s.clean(t.a), s.clean(t.b)
	sigma, df := s.pooledSigma()
	if len(a) == 0 || len(b) == 0 || df < 1 {
		return endsUndecided, "", false
	}
	delta := s.worse * (mean(b) - mean(a))
	se := sigma * math.Sqrt(1/float64(len(a))+1/float64(len(b)))
	if se == 0 {
		se = 1e-12
	}
	minEff := math.Log1p(s.opts.MinEffect)
	// pWorse is P(δ > 0); pAbove and pBelow are P(δ ≥ minEff) and
	// P(δ ≤ −minEff).
	pWorse := studentCDF(delta/se, df)
	pAbove := 1 - studentCDF((minEff-delta)/se, df)
	pBelow := studentCDF((-minEff-delta)/se, df)

	lookWorse := s.opts.Direction != record.Improvement
	lookBetter := s.opts.Direction != record.Regression
	looks = (lookWorse && pAbove >= plausibleTail) || (lookBetter && pBelow >= plausibleTail)
	if lookWorse && pWorse >= 1-t.alpha && delta >= minEff {
		return endsDiffer, record.Regression, looks
	}
	if lookBetter && 1-pWorse >= 1-t.alpha && -delta >= minEff {
		return endsDiffer, record.Improvement, looks
	}
	var tail float64
	if lookWorse {
		tail += pAbove
	}
	if lookBetter {
		tail += pBelow
	}
	if tail <= t.sameTail && len(a) >= t.sameRuns && len(b) >= t.sameRuns {
		return endsSame, "", looks
	}
	return endsUndecided, "", looks
}
