package stats

import (
	"math"
	"slices"
)

// OutlierCut is the distance, in robust standard deviations, beyond which
// Screen drops a run. Four σ drops one honest Gaussian run in 16,000 and
// most runs disturbed by a stalled host or a throttled GPU.
const OutlierCut = 4.0

// MinScaleRuns is the number of successive differences Scale needs before
// it trusts a scale: a median absolute deviation of fewer runs is so noisy
// that screening with it throws honest runs away and makes the spread look
// small.
const MinScaleRuns = 20

// Classify returns the posterior probability that the probe values come
// from the bad end's distribution rather than the good end's.
//
// All three arguments are raw metric values (tok/s, ms); Classify compares
// their logarithms, so effects are ratios and the direction of the metric
// does not matter. Values that are not positive and finite have no
// logarithm and are ignored. The two hypotheses are "probe shares the bad
// end's mean" and "probe shares the good end's mean"; both give the data
// two means and one common, unknown standard deviation. With flat priors on
// the means and the Jeffreys prior on σ the marginal likelihood of a split
// of n values into groups of n₁ and n₂ is proportional to
//
//	(n₁·n₂)^(−1/2) · SS^(−(n−2)/2)
//
// where SS is the within-group sum of squares (a Student-t marginal); the
// result is the ratio of the two, with even prior odds. The commit
// bisection's posterior over change points is the same likelihood over
// every split of a chain.
//
// Runs are screened first (see Screen), so a single stalled run cannot
// decide a probe.
//
// The posterior treats the ends' observed medians as well known; with fewer
// than about ten runs per end at 5% noise it is overconfident (a reported
// 0.95 is right about 90% of the time), so callers should give the ends
// that many runs before trusting a decision near the threshold.
//
// Classify returns 0.5 when the values cannot tell the hypotheses apart:
// a group is empty after screening, there are fewer than three values in
// all, or the ends are indistinguishable.
func Classify(good, bad, probe []float64) float64 {
	raw := [][]float64{Logs(good), Logs(bad), Logs(probe)}
	groups := Screen(raw, Scale(raw), 0, 1)
	g, b, p := groups[0], groups[1], groups[2]
	if len(g) == 0 || len(b) == 0 || len(p) == 0 {
		return 0.5
	}
	n := len(g) + len(b) + len(p)
	if n < 3 {
		return 0.5
	}
	bp := slices.Concat(b, p)
	gp := slices.Concat(g, p)
	ssBad := SumSquares(g) + SumSquares(bp)
	ssGood := SumSquares(gp) + SumSquares(b)
	if ssBad == ssGood {
		return 0.5
	}
	df := float64(n - 2)
	logBad := -0.5*math.Log(float64(len(g))) - 0.5*math.Log(float64(len(bp))) - df/2*math.Log(ssBad)
	logGood := -0.5*math.Log(float64(len(gp))) - 0.5*math.Log(float64(len(b))) - df/2*math.Log(ssGood)
	return Logistic(logBad - logGood)
}

// Logistic maps log odds to a probability without overflowing.
func Logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// Logs returns the natural logarithms of the positive, finite values, in
// order; the others have no logarithm and are left out.
func Logs(xs []float64) []float64 {
	logs := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 1) {
			logs = append(logs, math.Log(x))
		}
	}
	return logs
}

// Screen returns copies of the groups of log values without their
// outliers.
//
// scale is the pooled robust standard deviation of Scale, so that one group
// of three runs does not decide its own scale. A group with at least three
// runs loses the runs farther than OutlierCut scales from its median. A
// smaller group cannot show which of its runs is odd, so its runs are
// instead kept only when they lie within OutlierCut scales of the span
// between the medians of the two reference groups (lo and hi, the good and
// bad ends; −1 for none), where every honest run of a commit on either side
// of a single change falls. With a zero scale (too few runs to estimate
// it) nothing is screened.
func Screen(groups [][]float64, scale float64, lo, hi int) [][]float64 {
	out := make([][]float64, len(groups))
	if scale == 0 {
		for i, g := range groups {
			out[i] = slices.Clone(g)
		}
		return out
	}
	cut := OutlierCut * scale
	spanLo, spanHi := math.Inf(-1), math.Inf(1)
	if lo >= 0 && hi >= 0 && len(groups[lo]) >= 3 && len(groups[hi]) >= 3 {
		a, b := Median(groups[lo]), Median(groups[hi])
		spanLo, spanHi = min(a, b)-cut, max(a, b)+cut
	}
	for i, g := range groups {
		keep := make([]float64, 0, len(g))
		if len(g) >= 3 {
			m := Median(g)
			for _, y := range g {
				if math.Abs(y-m) <= cut {
					keep = append(keep, y)
				}
			}
		} else {
			for _, y := range g {
				if y >= spanLo && y <= spanHi {
					keep = append(keep, y)
				}
			}
		}
		out[i] = keep
	}
	return out
}

// Scale returns a robust standard deviation of the values of a group
// around their level, pooled over the groups, or 0 when fewer than
// MinScaleRuns successive differences exist.
//
// It is the median absolute difference between successive values of a
// group (1.4826/√2 × it is consistent for Gaussian noise), not the
// deviation from the group's median: most groups of a bisection hold one to
// three runs, whose median sits so close to its own runs that deviations
// from it understate σ by a third, and a screen then cuts honest runs at
// under three σ and leaves a posterior overconfident. Successive
// differences also leave out a slow drift of the level within a group.
func Scale(groups [][]float64) float64 {
	var diffs []float64
	for _, g := range groups {
		for i := 1; i < len(g); i++ {
			diffs = append(diffs, math.Abs(g[i]-g[i-1]))
		}
	}
	if len(diffs) < MinScaleRuns {
		return 0
	}
	return 1.4826 / math.Sqrt2 * Median(diffs)
}

// MAD returns the scaled median absolute deviation of deviations from a
// center, 1.4826·median(|d|): a robust standard deviation, consistent for
// Gaussian noise; NaN for none. The caller takes the center out (a
// median, a fitted level, or zero for residuals).
func MAD(devs []float64) float64 {
	abs := make([]float64, len(devs))
	for i, d := range devs {
		abs[i] = math.Abs(d)
	}
	return 1.4826 * Median(abs)
}

// Median returns the median of xs without reordering it; NaN for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return median(s)
}

// Mean returns the arithmetic mean of xs; NaN for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Pooled returns the pooled standard deviation of groups, each around its
// own mean, and its degrees of freedom (the values beyond one a group);
// 0, 0 when no group has two values.
func Pooled(groups ...[]float64) (sigma, df float64) {
	var ss float64
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		ss += SumSquares(g)
		df += float64(len(g) - 1)
	}
	if df == 0 {
		return 0, 0
	}
	return math.Sqrt(ss / df), df
}

// SumSquares returns the sum of squared deviations of xs from their mean;
// 0 for none.
func SumSquares(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss
}

// StudentCDF returns P(T ≤ t) for Student's t with df degrees of freedom.
func StudentCDF(t, df float64) float64 {
	if math.IsInf(t, 1) {
		return 1
	}
	if math.IsInf(t, -1) {
		return 0
	}
	x := df / (df + t*t)
	tail := 0.5 * incompleteBeta(df/2, 0.5, x)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// StudentQuantile returns the t at which StudentCDF(t, df) is p, for p in
// (0, 1): by bisection, to 1e-9.
func StudentQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) {
		return math.NaN()
	}
	lo, hi := -1.0, 1.0
	for StudentCDF(lo, df) > p {
		lo *= 2
	}
	for StudentCDF(hi, df) < p {
		hi *= 2
	}
	for hi-lo > 1e-9 {
		mid := (lo + hi) / 2
		if StudentCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// incompleteBeta returns the regularized incomplete beta function I_x(a, b),
// by Lentz's continued fraction on whichever side converges quickly.
func incompleteBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction evaluates the continued fraction of the incomplete beta
// function (the modified Lentz method).
func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		aa := fm * (b - fm) * x / ((qam + 2*fm) * (a + 2*fm))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + 2*fm) * (qap + 2*fm))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-14 {
			break
		}
	}
	return h
}
