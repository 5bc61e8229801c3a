package bisect

import (
	"math"

	"github.com/perfbot/perfbot/stats"
)

// segmentStats are the sufficient statistics of the (screened, centred)
// log values of one measured commit.
type segmentStats struct {
	index int
	n     float64
	sum   float64
	sumSq float64
}

// plus is the statistics of a's values and b's together.
func (a segmentStats) plus(b segmentStats) segmentStats {
	return segmentStats{index: a.index, n: a.n + b.n, sum: a.sum + b.sum, sumSq: a.sumSq + b.sumSq}
}

// minus is the statistics of a's values without b's, b a part of a.
func (a segmentStats) minus(b segmentStats) segmentStats {
	return segmentStats{index: a.index, n: a.n - b.n, sum: a.sum - b.sum, sumSq: a.sumSq - b.sumSq}
}

// posterior is the distribution of the first bad commit over the positions
// (lo, hi] of a range whose ends lo (good) and hi (bad) are measured.
//
// Positions between two consecutive measured commits split the data the
// same way, so they share one likelihood: the posterior is stored per
// interval (measured[j-1], measured[j]], each position of interval j having
// probability per[j].
//
// Fewer than two measured commits leave no interval and no position: cdf
// is 0 everywhere, best finds nothing and nearest −1. The search builds no
// such posterior (search.posterior); it would mean an end without a value.
type posterior struct {
	measured []int     // measured commits, lo first and hi last
	per      []float64 // per[j]: probability of each position in interval j (per[0] unused)
	cum      []float64 // cum[j]: probability of the positions ≤ measured[j]
}

// newPosterior computes the posterior of a single change point from the
// commits' statistics, which must be sorted by index, start at the range's
// good end and finish at its bad end. The prior is flat over positions; each
// segment mean gets a flat prior and the common σ the Jeffreys prior, so a
// split into a left part (nL values) and a right part (nR) has the marginal
// likelihood (nL·nR)^(−1/2) · (SS_L+SS_R)^(−(n−2)/2). Prefix sums make the
// whole posterior O(number of measured commits).
func newPosterior(stats []segmentStats) *posterior {
	j := len(stats)
	p := &posterior{measured: make([]int, j)}
	var total segmentStats
	for i, s := range stats {
		p.measured[i] = s.index
		total = total.plus(s)
	}
	df := total.n - 2
	// A floor on the sum of squares keeps identical values (a cache of
	// synthetic numbers) from producing log(0) for every split.
	floor := 1e-12 * max(total.n, 1)
	logLik := make([]float64, j)
	var left segmentStats
	for i := 1; i < j; i++ {
		left = left.plus(stats[i-1])
		right := total.minus(left)
		ss := max(sumSq(left)+sumSq(right), floor)
		width := float64(p.measured[i] - p.measured[i-1])
		logLik[i] = math.Log(width) - 0.5*math.Log(left.n) - 0.5*math.Log(right.n) - df/2*math.Log(ss)
	}
	return fromLogLik(p.measured, logLik)
}

// fromLogLik normalizes the log marginal likelihoods of the splits
// (logLik[i] for the interval (measured[i−1], measured[i]], logLik[0]
// unused) into the posterior.
func fromLogLik(measured []int, logLik []float64) *posterior {
	j := len(measured)
	p := &posterior{
		measured: measured,
		per:      make([]float64, j),
		cum:      make([]float64, j),
	}
	best := math.Inf(-1)
	for i := 1; i < j; i++ {
		best = max(best, logLik[i])
	}
	var z float64
	for i := 1; i < j; i++ {
		logLik[i] = math.Exp(logLik[i] - best)
		z += logLik[i]
	}
	for i := 1; i < j; i++ {
		mass := logLik[i] / z
		p.per[i] = mass / float64(p.measured[i]-p.measured[i-1])
		p.cum[i] = p.cum[i-1] + mass
	}
	return p
}

// sumSq returns the within sum of squares of a segment.
func sumSq(s segmentStats) float64 {
	if s.n == 0 {
		return 0
	}
	return max(s.sumSq-s.sum*s.sum/s.n, 0)
}

// mass returns the probability of interval j.
func (p *posterior) mass(j int) float64 { return p.cum[j] - p.cum[j-1] }

// cdf returns P(first bad commit ≤ m) for a position m of the range.
func (p *posterior) cdf(m int) float64 {
	j := p.interval(m)
	if j == 0 {
		return 0
	}
	return p.cum[j-1] + float64(m-p.measured[j-1])*p.per[j]
}

// interval returns the interval holding position m: the j with
// measured[j-1] < m ≤ measured[j], or 0 for m ≤ lo and where there is no
// interval.
func (p *posterior) interval(m int) int {
	lo, hi := 1, len(p.measured)-1
	if hi < 1 || m <= p.measured[0] {
		return 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if p.measured[mid] < m {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// resolved reports whether interval j holds a single possible culprit
// group: every position in it but its measured end is broken, so no further
// measurement can tell its positions apart.
func (p *posterior) resolved(j int, broken func(int) bool) bool {
	for m := p.measured[j-1] + 1; m < p.measured[j]; m++ {
		if !broken(m) {
			return false
		}
	}
	return true
}

// best returns the interval of the most probable single position and that
// position's probability, together with the most probable resolved interval
// and its mass (0, 0 if none is resolved).
func (p *posterior) best(broken func(int) bool) (pos int, posP float64, group int, groupP float64) {
	for j := 1; j < len(p.measured); j++ {
		if p.per[j] > posP {
			pos, posP = p.measured[j], p.per[j]
		}
		if m := p.mass(j); m > groupP && p.resolved(j, broken) {
			group, groupP = j, m
		}
	}
	return pos, posP, group, groupP
}

// nearest returns the probe-able position whose CDF is closest to target,
// and the best already-measured position, each with its distance; probe-able
// means strictly inside the range and not broken. m is −1 when there is none.
func (p *posterior) nearest(target float64, broken, taken func(int) bool) (ideal int, idealDist float64, measured int, measuredDist float64) {
	ideal, measured = -1, -1
	idealDist, measuredDist = math.Inf(1), math.Inf(1)
	last := len(p.measured) - 1
	consider := func(m int, isMeasured bool) {
		if m <= p.measured[0] || m >= p.measured[last] || broken(m) || taken(m) {
			return
		}
		d := math.Abs(p.cdf(m) - target)
		if d < idealDist {
			ideal, idealDist = m, d
		}
		if isMeasured && d < measuredDist {
			measured, measuredDist = m, d
		}
	}
	for j := 1; j <= last; j++ {
		a, b := p.measured[j-1], p.measured[j]
		consider(b, true)
		if b-a < 2 {
			continue
		}
		// The CDF grows linearly inside the interval; the best unmeasured
		// position is next to where it crosses the target.
		x := float64(a)
		if p.per[j] > 0 {
			x += (target - p.cum[j-1]) / p.per[j]
		}
		x = math.Max(float64(a+1), math.Min(float64(b-1), x))
		c := int(math.Round(x))
		for _, m := range []int{c, c - 1, c + 1} {
			consider(unbrokenNear(m, a, b, broken, taken), false)
		}
	}
	return ideal, idealDist, measured, measuredDist
}

// unbrokenNear returns the position closest to m strictly between a and b
// that is neither broken nor taken, or −1.
func unbrokenNear(m, a, b int, broken, taken func(int) bool) int {
	if m <= a || m >= b {
		return -1
	}
	for d := 0; m-d > a || m+d < b; d++ {
		if c := m - d; c > a && !broken(c) && !taken(c) {
			return c
		}
		if c := m + d; c < b && !broken(c) && !taken(c) {
			return c
		}
	}
	return -1
}

// twoChanges is the evidence of a range for two change points against
// one: a level between the ends' levels over a stretch of commits, which
// the single-change model cannot explain.
type twoChanges struct {
	// logBF is the log Bayes factor of two change points (in the same
	// direction) against one.
	logBF float64
	// middle[k] is the probability, under two change points, that the
	// k-th measured commit lies between them (after the first, before
	// the second).
	middle []float64
	// first and second are the most probable pair of change points, as
	// indices of the measured commits: the middle level is held by
	// commits first to second−1.
	first, second int
}

// newTwoChanges weighs two change points against one over the commits'
// statistics (as for newPosterior). Both models put the flat prior on the
// outer levels and the Jeffreys prior on σ, and a uniform prior on the
// positions of their change points (pairs of positions for two). The
// middle level of the two-change model needs a proper prior for the two
// marginal likelihoods to compare (a flat one would make the factor
// arbitrary): uniform between the outer levels, with the part within
// minStep of either of them left out, since a step that small is no
// change worth finding and a level that close to an end's is that end's.
// Its likelihood over that interval is the Student t of the middle's
// mean, the outer levels taken at their means.
func newTwoChanges(segs []segmentStats, minStep float64) twoChanges {
	m := len(segs)
	tc := twoChanges{logBF: math.Inf(-1), middle: make([]float64, m)}
	prefix := make([]segmentStats, m+1)
	for i, s := range segs {
		prefix[i+1] = prefix[i].plus(s)
	}
	seg := func(u, v int) segmentStats { return prefix[v].minus(prefix[u]) }
	total := prefix[m]
	if m < 3 || total.n <= 3 {
		return tc
	}
	floor := 1e-12 * total.n
	// logML is the log marginal likelihood of k segments with the flat
	// prior on each level, up to the terms both models share.
	logML := func(k int, ss float64, parts ...segmentStats) float64 {
		df := total.n - float64(k)
		g, _ := math.Lgamma(df / 2)
		l := g - df/2*math.Log(math.Pi*max(ss, floor))
		for _, p := range parts {
			l -= 0.5 * math.Log(p.n)
		}
		return l
	}
	width := func(i int) float64 { return float64(segs[i].index - segs[i-1].index) }
	positions := float64(segs[m-1].index - segs[0].index)
	one := make([]float64, 0, m)
	for i := 1; i < m; i++ {
		l, r := seg(0, i), seg(i, m)
		one = append(one, math.Log(width(i)/positions)+logML(2, sumSq(l)+sumSq(r), l, r))
	}
	pairs := positions * (positions - 1) / 2
	type term struct {
		i, j int
		l    float64
	}
	var two []term
	for i := 1; i < m; i++ {
		for j := i + 1; j < m; j++ {
			a, b, c := seg(0, i), seg(i, j), seg(j, m)
			ss := sumSq(a) + sumSq(b) + sumSq(c)
			ma, mb, mc := a.sum/a.n, b.sum/b.n, c.sum/c.n
			lo, hi := min(ma, mc)+minStep, max(ma, mc)-minStep
			if hi <= lo {
				continue // no room for two changes of minStep
			}
			df := total.n - 3
			se := math.Sqrt(max(ss, floor) / df / b.n)
			in := stats.StudentCDF((hi-mb)/se, df) - stats.StudentCDF((lo-mb)/se, df)
			if in <= 0 {
				continue
			}
			l := math.Log(width(i)*width(j)/pairs) + logML(3, ss, a, b, c) + math.Log(in/math.Abs(mc-ma))
			two = append(two, term{i, j, l})
		}
	}
	if len(two) == 0 {
		return tc
	}
	ls := make([]float64, len(two))
	for k, t := range two {
		ls[k] = t.l
	}
	z2 := logSumExp(ls)
	tc.logBF = z2 - logSumExp(one)
	best := 0
	for k := range two {
		if ls[k] > ls[best] {
			best = k
		}
	}
	tc.first, tc.second = two[best].i, two[best].j
	for k, t := range two {
		w := math.Exp(ls[k] - z2)
		for x := t.i; x < t.j; x++ {
			tc.middle[x] += w
		}
	}
	return tc
}

// logSumExp is log Σ exp(xs).
func logSumExp(xs []float64) float64 {
	best := math.Inf(-1)
	for _, x := range xs {
		best = max(best, x)
	}
	if math.IsInf(best, -1) {
		return best
	}
	var s float64
	for _, x := range xs {
		s += math.Exp(x - best)
	}
	return best + math.Log(s)
}
