package bisect

import (
	"context"
	"math"
)

// endsOutcome is the decision of the sequential end comparison.
type endsOutcome int

const (
	endsUndecided endsOutcome = iota
	endsDiffer
	endsSame
)

// Thresholds of the end comparison. differAlpha is the error allowed when
// calling two commits different: it starts a bisection, so it is strict.
// The strict rule for "same" (the ends do not reproduce the change) is the
// configured confidence; a residual range only needs the weaker
// residualSameTail, because a second culprit is rare, and proving the
// absence of a 2% step at 5% noise would take hundreds of runs per range.
var (
	verifyAlpha      = 1e-3
	residualAlpha    = 1e-3
	residualSameTail = 0.1
	// residualMinRuns is what each end of a residual range gets before
	// the comparison starts; both ends usually have more already.
	residualMinRuns = 3
	// residualMaxNew bounds the runs one residual check may add; past it
	// the range is reported as not fully checked.
	residualMaxNew = 12
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
}

// compareEnds runs the sequential comparison of t.a and t.b: it measures
// both up to t.minRuns, interleaved, then adds one run to each in turn
// (a, b, a, b …) until the change b−a is shown in a searched direction by
// at least the minimum effect (endsDiffer) or shown not to reach it
// (endsSame). It returns the decision and, for endsDiffer, the direction.
func (s *search) compareEnds(ctx context.Context, t endsTest) (endsOutcome, Direction, error) {
	added := 0
	for {
		if err := ctx.Err(); err != nil {
			return endsUndecided, "", err
		}
		na, nb := len(s.commits[t.a].raw), len(s.commits[t.b].raw)
		if na >= t.minRuns && nb >= t.minRuns {
			if out, dir := s.decideEnds(t); out != endsUndecided {
				return out, dir, nil
			}
		}
		next := t.a
		if nb < na {
			next = t.b
		}
		if added >= t.maxNew || !s.budgetFor(1) {
			return endsUndecided, "", nil
		}
		if err := s.measureOne(ctx, t.phase, next); err != nil {
			return endsUndecided, "", err
		}
		added++
	}
}

// decideEnds applies the decision rule to the current values. The change
// δ = mean(b) − mean(a) of the log values, oriented so that positive is
// worse, has a Student-t posterior around its estimate (flat prior on the
// means, Jeffreys on σ), with σ pooled over every commit measured so far.
func (s *search) decideEnds(t endsTest) (endsOutcome, Direction) {
	a, b := s.clean(t.a), s.clean(t.b)
	sigma, df := s.pooledSigma()
	if len(a) == 0 || len(b) == 0 || df < 1 {
		return endsUndecided, ""
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

	lookWorse := s.opts.Direction != Improvement
	lookBetter := s.opts.Direction != Regression
	if lookWorse && pWorse >= 1-t.alpha && delta >= minEff {
		return endsDiffer, Regression
	}
	if lookBetter && 1-pWorse >= 1-t.alpha && -delta >= minEff {
		return endsDiffer, Improvement
	}
	var tail float64
	if lookWorse {
		tail += pAbove
	}
	if lookBetter {
		tail += pBelow
	}
	if tail <= t.sameTail && len(a) >= t.sameRuns && len(b) >= t.sameRuns {
		return endsSame, ""
	}
	return endsUndecided, ""
}
