package stats

import (
	"errors"
	"math"

	"github.com/aclements/go-moremath/stats"
)

// minSegment is the fewest values on either side of a change point. With
// 3 (the least a t-test takes) a tail of three noisy values passed as a
// level in 8% of seeded trials; 5 brings that to 3% (stats_test.go). A
// change in the last few nights is CUSUM's job.
const minSegment = 5

// ChangePoints finds the points where the level of series changes, the
// way Hunter/Apache Otava does (Fleming et al., ICPE 2023), and returns
// their indexes in increasing order. Index i means that series[i] is the
// first value of a new level.
//
// Split: E-divisive means (Matteson & James 2014) places each candidate
// where the energy distance between the two sides is largest, and
// recurses into both sides while the split passes a two-sided Welch
// t-test at 10·maxP. Merge: each candidate is then tested again against
// its neighbouring segments, and the weakest one (largest p, or smallest
// relative change of the means when every p passes) is removed until
// every remaining point has p < maxP and a change of at least
// minMagnitude (a fraction of the left segment's mean). The relaxed split
// threshold and the strict merge keep the selection over split points
// from passing noise off as a change.
//
// Otava's defaults are maxP = 0.001 and minMagnitude = 0. Series of fewer
// than 2·5 values have no change point, and neither has a series holding
// NaN or an infinity (there is no level to compare).
func ChangePoints(series []float64, maxP float64, minMagnitude float64) []int {
	if len(series) < 2*minSegment {
		return nil
	}
	for _, x := range series {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	}
	var cps []int
	var split func(lo, hi int)
	split = func(lo, hi int) {
		tau, ok := bestSplit(series[lo:hi])
		if !ok {
			return
		}
		tau += lo
		if p, _ := splitTest(series[lo:tau], series[tau:hi]); p >= 10*maxP {
			return
		}
		split(lo, tau)
		cps = append(cps, tau)
		split(tau, hi)
	}
	split(0, len(series))

	for len(cps) > 0 {
		weakest, weakP, weakMag := -1, -1.0, math.Inf(1)
		allPass := true
		for i, cp := range cps {
			lo, hi := 0, len(series)
			if i > 0 {
				lo = cps[i-1]
			}
			if i+1 < len(cps) {
				hi = cps[i+1]
			}
			p, mag := splitTest(series[lo:cp], series[cp:hi])
			pass := p < maxP && mag >= minMagnitude
			allPass = allPass && pass
			// Prefer dropping the point with the largest p; among
			// points with equal p, the smallest change.
			if p > weakP || (p == weakP && mag < weakMag) {
				weakest, weakP, weakMag = i, p, mag
			}
		}
		if allPass {
			break
		}
		if weakP < maxP {
			// Every p passes: the failure is a magnitude; drop the
			// smallest change instead.
			weakest = smallestChange(series, cps)
		}
		cps = append(cps[:weakest], cps[weakest+1:]...)
	}
	if len(cps) == 0 {
		return nil
	}
	return cps
}

// smallestChange returns the index in cps of the point whose relative
// change against its neighbouring segments is smallest.
func smallestChange(series []float64, cps []int) int {
	best, bestMag := 0, math.Inf(1)
	for i, cp := range cps {
		lo, hi := 0, len(series)
		if i > 0 {
			lo = cps[i-1]
		}
		if i+1 < len(cps) {
			hi = cps[i+1]
		}
		if _, mag := splitTest(series[lo:cp], series[cp:hi]); mag < bestMag {
			best, bestMag = i, mag
		}
	}
	return best
}

// splitTest returns the two-sided Welch t-test p-value for a difference
// of means between left and right, and the relative change of the means.
func splitTest(left, right []float64) (p, magnitude float64) {
	l, r := stats.Sample{Xs: left}, stats.Sample{Xs: right}
	ml, mr := l.Mean(), r.Mean()
	magnitude = math.Abs(mr-ml) / math.Abs(ml)
	res, err := stats.TwoSampleWelchTTest(l, r, stats.LocationDiffers)
	switch {
	case err == nil:
		return res.P, magnitude
	case errors.Is(err, stats.ErrZeroVariance) && ml != mr:
		return 0, magnitude // two constant, different levels
	}
	return 1, magnitude
}

// bestSplit returns the split τ of x (x[:τ] | x[τ:], each side at least
// minSegment long) that maximises the E-divisive energy statistic with
// exponent 1:
//
//	Q(τ) = mn/(m+n) · (2/(mn)·Σ|xᵢ−yⱼ| − 1/C(m,2)·Σ|xᵢ−xₖ| − 1/C(n,2)·Σ|yⱼ−yₖ|).
//
// Sums are updated as τ moves, so the search is O(len(x)²).
func bestSplit(x []float64) (int, bool) {
	n := len(x)
	if n < 2*minSegment {
		return 0, false
	}
	dist := func(i, j int) float64 { return math.Abs(x[i] - x[j]) }
	// Start with τ = minSegment: within-left, within-right and cross sums.
	var wl, wr, cross float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			switch {
			case j < minSegment:
				wl += dist(i, j)
			case i >= minSegment:
				wr += dist(i, j)
			default:
				cross += dist(i, j)
			}
		}
	}
	best, bestQ := 0, math.Inf(-1)
	for tau := minSegment; tau <= n-minSegment; tau++ {
		m, k := float64(tau), float64(n-tau)
		q := m * k / (m + k) * (2*cross/(m*k) - wl/(m*(m-1)/2) - wr/(k*(k-1)/2))
		if q > bestQ {
			best, bestQ = tau, q
		}
		// Move x[tau] from the right side to the left.
		var toLeft, toRight float64
		for i := 0; i < tau; i++ {
			toLeft += dist(i, tau)
		}
		for j := tau + 1; j < n; j++ {
			toRight += dist(tau, j)
		}
		wl += toLeft
		wr -= toRight
		cross += toRight - toLeft
	}
	return best, true
}
