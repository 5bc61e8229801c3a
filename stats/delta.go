package stats

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"

	"github.com/perfbot/perfbot/record"
)

// exactUMax bounds the sample sizes for which Delta uses the exact
// distribution of the Mann–Whitney U statistic; above it the normal
// approximation is accurate to well under one order statistic.
const exactUMax = 30

// Delta estimates the change of bad relative to good, in percent (−10
// means bad is 10% lower), with a confidence interval, in percent too.
//
// The change is estimated in log space, so that it is a ratio: −50% and
// +100% are the same size of change, and samples with different spreads
// combine sensibly. The estimate is the Hodges–Lehmann shift, the median
// of all pairwise differences log(b) − log(a), and the interval is the
// matching distribution-free (Moses) interval: the k-th smallest and k-th
// largest pairwise differences, with k from the exact distribution of the
// Mann–Whitney U statistic (its normal approximation beyond 30 values a
// side). It is the interval that agrees with Compare's test, and it needs
// no random resampling, so the same data always give the same answer.
//
// Values must be positive (throughputs, latencies). Empty samples or
// non-positive values give NaN. When the samples are too small for an
// interval at this confidence (fewer than 4+4 values at 0.95), the bounds
// are −100 and +Inf: "no bound".
func Delta(good, bad []float64, confidence float64) record.Effect {
	if len(good) == 0 || len(bad) == 0 || !(confidence > 0 && confidence < 1) {
		return nanEffect()
	}
	diffs := make([]float64, 0, len(good)*len(bad))
	for _, g := range good {
		for _, b := range bad {
			if !(g > 0 && b > 0) {
				return nanEffect()
			}
			diffs = append(diffs, math.Log(b)-math.Log(g))
		}
	}
	slices.Sort(diffs)
	shift := median(diffs)
	lo, hi := math.Inf(-1), math.Inf(1)
	if k := mosesRank(len(good), len(bad), confidence); k >= 1 {
		lo, hi = diffs[k-1], diffs[len(diffs)-k]
	}
	return record.Effect{Pct: percent(shift), Interval: record.Interval{Lo: percent(lo), Hi: percent(hi)}}
}

// mosesRank returns the largest k such that the interval between the k-th
// smallest and k-th largest of the n1·n2 pairwise differences covers the
// shift with at least the given confidence: the largest k with
// P(U ≤ k−1) ≤ (1−confidence)/2. It returns 0 when no k qualifies.
func mosesRank(n1, n2 int, confidence float64) int {
	tail := (1 - confidence) / 2
	if n1 <= exactUMax && n2 <= exactUMax {
		d := stats.UDist{N1: n1, N2: n2}
		k := 0
		for u := 0; u < n1*n2/2 && d.CDF(float64(u)) <= tail; u++ {
			k = u + 1
		}
		return k
	}
	return mosesRankNormal(n1, n2, confidence)
}

// mosesRankNormal is mosesRank with the normal approximation to U (no
// ties, continuity-corrected).
func mosesRankNormal(n1, n2 int, confidence float64) int {
	mean := float64(n1*n2) / 2
	sd := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
	z := stats.StdNormal.InvCDF(1 - (1-confidence)/2)
	// P(U ≤ k−1) ≈ Φ((k − 1 + 0.5 − mean)/sd) ≤ tail.
	return max(0, int(math.Floor(mean-z*sd+0.5)))
}

func percent(logRatio float64) float64 {
	return 100 * math.Expm1(logRatio)
}

// median returns the median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// DeltaNoise estimates the change of bad relative to good as Delta does,
// in percent with an interval, for samples too small for Delta's
// distribution-free interval, when the size of the noise is known from
// elsewhere: sigma is the standard deviation of one value's logarithm,
// estimated with df degrees of freedom (runs of many commits, pooled). The
// estimate is the difference of the mean logs and the interval Student's t
// with df degrees of freedom gives it (DeltaNoiseLogs). It rests on that
// noise being the noise of these values too: normal on the log scale, the
// same for every commit.
//
// Empty samples, non-positive values, a sigma that is not positive and
// finite or df below 1 give NaN.
func DeltaNoise(good, bad []float64, sigma, df, confidence float64) record.Effect {
	for _, v := range slices.Concat(good, bad) {
		if !(v > 0) {
			return nanEffect()
		}
	}
	return DeltaNoiseLogs(Logs(good), Logs(bad), sigma, df, confidence)
}

// DeltaNoiseLogs is DeltaNoise on values already on the log scale: for
// callers that compare log values of their own (corrected for a host's
// speed, screened of outliers) rather than raw metric values.
//
// Empty samples, values that are not finite, a sigma that is not positive
// and finite or df below 1 give NaN.
func DeltaNoiseLogs(good, bad []float64, sigma, df, confidence float64) record.Effect {
	if len(good) == 0 || len(bad) == 0 || !(sigma > 0) || math.IsInf(sigma, 0) || df < 1 || !(confidence > 0 && confidence < 1) {
		return nanEffect()
	}
	for _, y := range slices.Concat(good, bad) {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return nanEffect()
		}
	}
	shift := Mean(bad) - Mean(good)
	half := StudentQuantile(1-(1-confidence)/2, df) * sigma * math.Sqrt(1/float64(len(good))+1/float64(len(bad)))
	return record.Effect{Pct: percent(shift), Interval: record.Interval{Lo: percent(shift - half), Hi: percent(shift + half)}}
}

// nanEffect is the effect of samples that cannot be compared.
func nanEffect() record.Effect {
	return record.Effect{Pct: math.NaN(), Interval: record.Interval{Lo: math.NaN(), Hi: math.NaN()}}
}
