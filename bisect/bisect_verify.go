package bisect

import (
	"context"
	"math"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
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
	// different. It can be modest: the bisection keeps comparing the ends,
	// measures them again whenever they stop showing the change, and drops
	// a range whose change vanishes.
	verifyAlpha = 0.05
	// strictVerifyAlpha replaces verifyAlpha on a noisy host: where
	// (σ/MinEffect)² exceeds noisyRatio (see search.endsAlpha).
	strictVerifyAlpha = 0.01
	noisyRatio        = 2.0
	// notReproducedFactor scales 1−Confidence into the tail that calls
	// the ends the same for good (see notReproducedTail). A tenth asked
	// for several times the runs of a search to exclude a change no
	// larger than the noise; the change searched for lies beyond it.
	notReproducedFactor = 1.0
	// residualAlpha is the error allowed when a range beside a culprit is
	// called different; it starts another bisection, so it is strict.
	residualAlpha = 1e-3
	// residualSameTail is the probability of a further change of the
	// minimum effect below which a residual range is let go. It is weak on
	// purpose: second culprits are rare, and proving the absence of a 2%
	// step at 5% noise would take hundreds of runs per range.
	residualSameTail = 0.1
	// plausibleTail is the probability of a further change of the minimum
	// effect from which a residual check that stopped undecided warns. A
	// check that cannot afford the runs to exclude a change as small as
	// the noise stops between the two more often than not; below this the
	// change is unlikely enough to let go quietly.
	plausibleTail = 0.3
	// residualMinRuns is what each end of a residual range gets before the
	// comparison starts.
	residualMinRuns = 2
	// residualShare is the part of the search's own runs one residual
	// check may add, and residualMinBudget the least it may add: a check
	// costs in proportion to the search it follows. While its estimate
	// shows a change of the minimum effect, a check may add up to
	// residualExtendShare of them: a second change that looks real is
	// followed further.
	residualShare       = 0.15
	residualExtendShare = 1.0
	residualMinBudget   = 2
	// residualSpanShare bounds the search of a residual range that
	// differs: its runs and the search's so far together, in runs of the
	// search so far. A second change is often smaller than the chain's
	// whole change, which the first search was measured against, and
	// takes several times its runs to locate.
	residualSpanShare = 4
	// notReproducedRuns is the runs each end needs before the ends of a
	// range are called the same for good: enough that the noise within
	// the ends is itself measured (ten degrees of freedom).
	notReproducedRuns = 6
	// verifyShown is the part of the minimum effect the change between
	// the chain's ends must be shown to exceed (with verifyAlpha) before
	// a search starts: half of it, the midpoint between no change and the
	// least change worth finding. The modest error alone lets ends whose
	// change is as likely as not below the minimum effect start a search
	// for a change nobody asked for, which ends only once the ends are
	// measured enough to call them the same; a change worth finding on a
	// quiet host clears the midpoint with about the runs it takes to clear
	// zero. On a noisy host the strict error applies instead.
	verifyShown = 0.5
)

// endsTest compares two commits of the chain.
type endsTest struct {
	phase    string
	a, b     int     // a is older than b
	minRuns  int     // runs each side gets before the first decision
	sameRuns int     // runs each side needs before "same"
	alpha    float64 // "differ" when P(no change or the other way) falls to this
	// shown is the part of the minimum effect that "differ" needs the
	// change to exceed with probability 1−alpha (0: exceed zero).
	shown    float64
	sameTail float64 // "same" when P(|change| ≥ MinEffect) falls to this
	// sameEffect, when above MinEffect, is the change "same" excludes
	// instead of MinEffect (Options.Expected).
	sameEffect float64
	maxNew     int // runs the test may add after the first decision
	// futile stops the test as soon as neither decision can be reached
	// within maxNew at the current estimate.
	futile bool
	// noisy sets alpha from the noise at each decision (search.endsAlpha).
	noisy bool
	// extendNew replaces maxNew while the estimate itself shows a change
	// of the minimum effect: a change that looks real is followed further.
	extendNew int
}

// compareEnds runs the sequential comparison of t.a and t.b: it measures
// both up to t.minRuns runs that count, interleaved, then adds one run to
// the side with fewer in turn (a, b, a, b …; with several placed hosts, a
// round of one run on every host, the ends alternating over them) until the change b−a is shown in a searched
// direction by at least the minimum effect (endsDiffer) or shown not to
// reach it (endsSame), or until its allowance of t.maxNew runs is spent (or,
// with t.futile, can no longer decide). It returns the decision and, for
// endsDiffer, the direction.
func (s *search) compareEnds(ctx context.Context, t endsTest) (endsOutcome, record.Direction, error) {
	added := 0
	for {
		if err := ctx.Err(); err != nil {
			return endsUndecided, "", err
		}
		na, nb := s.commits[t.a].n, s.commits[t.b].n
		next := s.nextEnd(t)
		if na >= t.minRuns && nb >= t.minRuns {
			out, dir := s.decideEnds(t)
			if out != endsUndecided {
				return out, dir, nil
			}
			allowed := t.maxNew
			if t.extendNew > allowed && s.looksChanged(t) {
				allowed = t.extendNew
			}
			if added >= allowed || (t.futile && !s.reachable(t, allowed-added)) {
				return endsUndecided, "", nil
			}
		}
		if !s.budgetFor(1) {
			return endsUndecided, "", nil
		}
		var err error
		if s.placed() && len(s.opts.Hosts) > 1 {
			// One run on every host, the ends alternating: every host
			// holds runs of both ends, which its speed is measured by.
			round := s.endsRound(t)
			round = round[:min(len(round), s.limit-s.samples)]
			if na >= t.minRuns && nb >= t.minRuns {
				added += len(round)
			}
			err = s.measureRequests(ctx, t.phase, round)
		} else {
			if na >= t.minRuns && nb >= t.minRuns {
				added++
			}
			err = s.measureOne(ctx, t.phase, next)
		}
		if err != nil {
			return endsUndecided, "", err
		}
	}
}

// compare is the change δ from commit a to commit b, oriented so that
// positive is worse, with its standard error and degrees of freedom. On a
// drifting host whose drift the model fits, it is the generalized least
// squares estimate under that model, every measured commit with a level
// of its own (runs of a and b taken side by side then cancel the host's
// state); otherwise endsEstimate of their clean values.
func (s *search) compare(a, b int) (delta, se, df float64, ok bool) {
	if !s.driftFit || len(s.clean(a)) == 0 || len(s.clean(b)) == 0 {
		return s.endsEstimate(s.clean(a), s.clean(b))
	}
	var values [][]float64
	var at [][]int
	ja, jb := -1, -1
	for _, i := range s.measured {
		c := &s.commits[i]
		if len(c.level) == 0 {
			continue
		}
		switch i {
		case a:
			ja = len(values)
		case b:
			jb = len(values)
		}
		values = append(values, c.level)
		at = append(at, c.at)
	}
	if ja < 0 || jb < 0 {
		return s.endsEstimate(s.clean(a), s.clean(b))
	}
	delta, se, df, ok = driftDelta(values, at, s.driftModel, ja, jb)
	if !ok {
		return s.endsEstimate(s.clean(a), s.clean(b))
	}
	if se == 0 {
		se = 1e-12
	}
	return s.worse * delta, se, df, true
}

// endsEstimate is the change δ = mean(b) − mean(a) of the clean log
// values, oriented so that positive is worse, with its standard error and
// degrees of freedom (σ pooled over every commit measured so far).
func (s *search) endsEstimate(a, b []float64) (delta, se, df float64, ok bool) {
	sigma, df := s.pooledSigma()
	if len(a) == 0 || len(b) == 0 || df < 1 {
		return 0, 0, 0, false
	}
	delta = s.worse * (stats.Mean(b) - stats.Mean(a))
	se = sigma * math.Sqrt(1/float64(len(a))+1/float64(len(b)))
	if se == 0 {
		se = 1e-12
	}
	return delta, se, df, true
}

// decideEnds applies the decision rule to the current values. The change
// δ has a Student-t posterior around its estimate (flat prior on the
// means, Jeffreys on σ).
func (s *search) decideEnds(t endsTest) (endsOutcome, record.Direction) {
	a, b := s.clean(t.a), s.clean(t.b)
	delta, se, df, ok := s.compare(t.a, t.b)
	if !ok {
		return endsUndecided, ""
	}
	alpha, shown := t.alpha, t.shown
	if t.noisy {
		alpha = s.endsAlpha()
		if alpha != verifyAlpha {
			// The strict error of a noisy host keeps chance differences
			// out already; a margin on top would cost every search runs.
			shown = 0
		}
	}
	differ, dir, tail := s.tails(delta, se, df, alpha, shown)
	if differ {
		return endsDiffer, dir
	}
	if t.sameEffect > s.opts.MinEffect {
		tail = tailBeyond(s.opts.Direction, delta, se, df, t.sameEffect)
	}
	if tail <= t.sameTail && len(a) >= t.sameRuns && len(b) >= t.sameRuns {
		return endsSame, ""
	}
	return endsUndecided, ""
}

// tails applies the rule to an estimate: differ (with its direction) when
// the change in a searched direction exceeds shown·MinEffect with
// probability 1−alpha and its estimate reaches the minimum effect; tail is
// the probability of a change of at least the minimum effect in a
// searched direction.
func (s *search) tails(delta, se, df, alpha, shown float64) (differ bool, dir record.Direction, tail float64) {
	return s.tailsFor(s.opts.Direction, delta, se, df, alpha, shown)
}

// tailsFor is tails for a search in direction searched.
func (s *search) tailsFor(searched record.Direction, delta, se, df, alpha, shown float64) (differ bool, dir record.Direction, tail float64) {
	minEff := math.Log1p(s.opts.MinEffect)
	floor := math.Log1p(shown * s.opts.MinEffect)
	// pWorse and pBetter are P(δ > floor) and P(δ < −floor); pAbove and
	// pBelow are P(δ ≥ minEff) and P(δ ≤ −minEff).
	pWorse := stats.StudentCDF((delta-floor)/se, df)
	pBetter := stats.StudentCDF((-delta-floor)/se, df)
	pAbove := 1 - stats.StudentCDF((minEff-delta)/se, df)
	pBelow := stats.StudentCDF((-minEff-delta)/se, df)
	lookWorse := searched != record.Improvement
	lookBetter := searched != record.Regression
	if lookWorse && pWorse >= 1-alpha && delta >= minEff {
		return true, record.Regression, pAbove
	}
	if lookBetter && pBetter >= 1-alpha && -delta >= minEff {
		return true, record.Improvement, pBelow
	}
	return false, "", tailBeyond(searched, delta, se, df, s.opts.MinEffect)
}

// tailBeyond is the probability of a change of at least effect (a
// fraction) in direction searched (both ways for record.Any).
func tailBeyond(searched record.Direction, delta, se, df, effect float64) float64 {
	e := math.Log1p(effect)
	var tail float64
	if searched != record.Improvement {
		tail += 1 - stats.StudentCDF((e-delta)/se, df)
	}
	if searched != record.Regression {
		tail += stats.StudentCDF((-e-delta)/se, df)
	}
	return tail
}

// otherWay returns the warning for ends that do not differ in the
// direction searched but do in the other one, and false otherwise (or when
// the search looks both ways). Its effect is the one estimate every
// effect is shown with, stats.Delta of the ends' runs paired in time,
// with its interval.
func (s *search) otherWay(t endsTest, good, bad int) (record.Warning, bool) {
	if s.opts.Direction == record.Any {
		return record.Warning{}, false
	}
	delta, se, df, ok := s.compare(t.a, t.b)
	if !ok {
		return record.Warning{}, false
	}
	differ, dir, _ := s.tailsFor(record.Any, delta, se, df, s.endsAlpha(), t.shown)
	if !differ || dir == s.opts.Direction {
		return record.Warning{}, false
	}
	e := effectOf(s.commits[good].countedRuns(), s.commits[bad].countedRuns(), minPairs)
	return record.Warning{Kind: record.WarnOtherDirection, From: s.chain[good], To: s.chain[bad], Direction: dir,
		Pct: e.Pct, LoPct: e.Lo, HiPct: e.Hi}, true
}

// looksChanged reports whether the estimate of the comparison shows a
// change of at least the minimum effect in a searched direction.
func (s *search) looksChanged(t endsTest) bool {
	delta, _, _, ok := s.compare(t.a, t.b)
	if !ok {
		return false
	}
	minEff := math.Log1p(s.opts.MinEffect)
	return (s.opts.Direction != record.Improvement && delta >= minEff) ||
		(s.opts.Direction != record.Regression && -delta >= minEff)
}

// reachable reports whether the comparison could still decide with add
// more runs, shared between the two sides, if the estimate stayed where it
// is: the interval only narrows with more runs, so a test that would not
// decide even then stops now.
func (s *search) reachable(t endsTest, add int) bool {
	a, b := s.clean(t.a), s.clean(t.b)
	delta, se, df, ok := s.compare(t.a, t.b)
	if !ok {
		return true
	}
	na, nb := float64(len(a)), float64(len(b))
	ea, eb := na, nb
	for range add {
		if ea <= eb {
			ea++
		} else {
			eb++
		}
	}
	se *= math.Sqrt((1/ea + 1/eb) / (1/na + 1/nb))
	differ, _, tail := s.tails(delta, se, df+float64(add), t.alpha, t.shown)
	return differ || tail <= t.sameTail
}
