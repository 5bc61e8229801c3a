package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/perfbot/perfbot/bisect/bisecttest"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// logSamples asks the oracle for at least n values of chain[i] and returns
// the logarithms of the first n.
func logSamples(ctx context.Context, o *bisecttest.Oracle, chain []string, i, n int) ([]float64, error) {
	v, err := o.Samples(ctx, chain[i], n)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for j := range out {
		out[j] = math.Log(v[j].Value)
	}
	return out, nil
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// runPlain is textbook bisection with k runs per probe: both ends get k
// runs once, and each probe goes to the side whose end mean is nearer to
// the probe's mean (the nearest-centroid rule of algorithms.md §1.5).
func runPlain(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle, k int) (outcome, error) {
	chain := h.Chain()
	lo, hi := 0, len(chain)-1
	g, err := logSamples(ctx, o, chain, lo, k)
	if err != nil {
		return outcome{}, err
	}
	b, err := logSamples(ctx, o, chain, hi, k)
	if err != nil {
		return outcome{}, err
	}
	good, bad := meanOf(g), meanOf(b)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		p, err := logSamples(ctx, o, chain, mid, k)
		if err != nil {
			return outcome{}, err
		}
		if m := meanOf(p); math.Abs(m-bad) < math.Abs(m-good) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return outcome{culprits: []int{hi}, reproduced: true, runs: o.Runs(), build: o.Builds()}, nil
}

// Pinpoint's constants (catapult dashboard/pinpoint/models/compare and
// job_state.py; the Skia rewrite's iteration cap).
const (
	pinpointInitial     = 10   // attempts per change
	pinpointIncrease    = 10   // more attempts on an unknown comparison
	pinpointMaxAttempts = 160  // an unknown comparison at this size counts as same
	pinpointLow         = 0.01 // p at or below: different
	pinpointSpeculation = 2    // levels: 2^2−1 = 3 midpoints per different range
	pinpointMaxRuns     = 5000 // a safety net for the simulation
)

type verdict int

const (
	same verdict = iota
	different
	unknown
)

// runPinpoint is a Pinpoint-like explorer: it keeps a sorted list of
// changes, compares every adjacent pair each round with min(KS, MWU), adds
// attempts on unknown pairs, inserts midpoints into different ranges, and
// reports every different pair of neighbours as a culprit. magnitude is the
// expected change in log units, which Pinpoint turns into a "same"
// threshold after normalising by the samples' interquartile range.
func runPinpoint(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle, magnitude float64) (outcome, error) {
	chain := h.Chain()
	vals := map[int][]float64{}
	measure := func(i, n int) error {
		v, err := logSamples(ctx, o, chain, i, n)
		vals[i] = v
		return err
	}
	changes := []int{0, len(chain) - 1}
	for _, i := range changes {
		if err := measure(i, pinpointInitial); err != nil {
			return outcome{}, err
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return outcome{}, err
		}
		var culprits, added []int
		progress := false
		for j := 1; j < len(changes); j++ {
			a, b := changes[j-1], changes[j]
			switch compare(vals[a], vals[b], magnitude) {
			case different:
				if b-a == 1 {
					culprits = append(culprits, b)
					continue
				}
				parts := 1 << pinpointSpeculation
				for q := 1; q < parts; q++ {
					m := a + (b-a)*q/parts
					if m > a && m < b && !slices.Contains(added, m) {
						added = append(added, m)
					}
				}
				progress = true
			case unknown:
				fewer := a
				if len(vals[b]) < len(vals[a]) {
					fewer = b
				}
				if n := len(vals[fewer]); n < pinpointMaxAttempts && o.Runs() < pinpointMaxRuns {
					if err := measure(fewer, n+pinpointIncrease); err != nil {
						return outcome{}, err
					}
					progress = true
				}
			}
		}
		for _, m := range added {
			if err := measure(m, pinpointInitial); err != nil {
				return outcome{}, err
			}
			changes = append(changes, m)
		}
		sort.Ints(changes)
		if !progress {
			return outcome{culprits: culprits, reproduced: len(culprits) > 0, runs: o.Runs(), build: o.Builds()}, nil
		}
	}
}

// compare is Pinpoint's comparison: different when min(KS p, MWU p) is at
// most the low threshold, same when it exceeds the high threshold for the
// magnitude (in IQRs) and sample size, unknown in between.
func compare(a, b []float64, magnitude float64) verdict {
	p := min(ksPValue(a, b), mwuPValue(a, b))
	if p <= pinpointLow {
		return different
	}
	iqr := max(interquartile(a), interquartile(b))
	if iqr == 0 {
		return unknown
	}
	if p > highThreshold(magnitude/iqr, len(a), len(b)) {
		return same
	}
	return unknown
}

// highThreshold approximates Pinpoint's table: the 99th percentile of the
// Mann-Whitney p-value when the samples really differ by shift IQRs.
// Pinpoint simulates it; this uses the normal approximation of U, with the
// shift of Gaussian samples (an IQR is 1.349 σ).
func highThreshold(shift float64, na, nb int) float64 {
	d := shift * 1.349
	fa, fb := float64(na), float64(nb)
	sd := math.Sqrt(fa * fb * (fa + fb + 1) / 12)
	z := fa * fb * (normalCDF(d/math.Sqrt2) - 0.5) / sd
	p := 2 * (1 - normalCDF(z-2.326))
	return max(min(p, 1), pinpointLow)
}

func interquartile(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	q := func(f float64) float64 {
		pos := f * float64(len(s)-1)
		i := int(pos)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (pos-float64(i))*(s[i+1]-s[i])
	}
	return q(0.75) - q(0.25)
}

func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// ksPValue is the two-sample Kolmogorov–Smirnov test with the asymptotic
// distribution and Stephens' small-sample correction.
func ksPValue(a, b []float64) float64 {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	var d float64
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		v := min(x[i], y[j])
		for i < len(x) && x[i] == v {
			i++
		}
		for j < len(y) && y[j] == v {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(len(x))-float64(j)/float64(len(y))))
	}
	ne := float64(len(x)*len(y)) / float64(len(x)+len(y))
	lambda := (math.Sqrt(ne) + 0.12 + 0.11/math.Sqrt(ne)) * d
	var p float64
	sign := 1.0
	for k := 1; k <= 100; k++ {
		term := sign * math.Exp(-2*float64(k*k)*lambda*lambda)
		p += term
		if math.Abs(term) < 1e-10 {
			break
		}
		sign = -sign
	}
	return max(0, min(1, 2*p))
}

// mwuPValue is the two-sided Mann-Whitney U test with the normal
// approximation, tie and continuity corrections.
func mwuPValue(a, b []float64) float64 {
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	n := float64(len(all))
	var rankA, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2
		t := float64(j - i)
		ties += t*t*t - t
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankA += rank
			}
		}
		i = j
	}
	na, nb := float64(len(a)), float64(len(b))
	u := rankA - na*(na+1)/2
	mu := na * nb / 2
	sd := math.Sqrt(na * nb / 12 * ((n + 1) - ties/(n*(n-1))))
	if sd == 0 {
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / sd
	return max(0, min(1, 2*(1-normalCDF(z))))
}

// floorConfidence is where the known-levels search stops: the accuracy
// the single-change targets ask for, so that its runs are the fewest a
// search calibrated to that accuracy could spend.
const floorConfidence = 0.995

// runKnownLevels is probabilistic bisection told what no real search
// knows: the log levels of both ends and the noise σ. It keeps the
// posterior over the first bad commit exactly (a run at c of value x
// multiplies each hypothesis by the density of x at the level it gives c),
// runs the commit that splits the posterior most evenly, one run at a
// time, and stops once one commit holds floorConfidence. Its runs mark
// the floor the other strategies are read against (see the package
// documentation).
func runKnownLevels(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle) (outcome, error) {
	chain := h.Chain()
	n := len(chain) - 1
	good, bad := math.Log(h.Level(0)), math.Log(h.Level(n))
	sigma := math.Sqrt(math.Log1p(h.CV * h.CV))
	// logW[k] for k in 1..n: the first bad commit is k.
	logW := make([]float64, n+1)
	logW[0] = math.Inf(-1)
	runs := make([]int, n+1)
	p := make([]float64, n+1)
	for {
		if err := ctx.Err(); err != nil {
			return outcome{}, err
		}
		top := math.Inf(-1)
		for _, w := range logW[1:] {
			top = max(top, w)
		}
		var sum float64
		for k := 1; k <= n; k++ {
			p[k] = math.Exp(logW[k] - top)
			sum += p[k]
		}
		best := 1
		for k := 1; k <= n; k++ {
			p[k] /= sum
			if p[k] > p[best] {
				best = k
			}
		}
		if p[best] >= floorConfidence || o.Runs() >= pinpointMaxRuns {
			return outcome{culprits: []int{best}, reproduced: true, runs: o.Runs(), build: o.Builds()}, nil
		}
		// Commit c is bad when k ≤ c: the most even split, and of two as
		// even the commit with fewer runs (the two beside a culprit take
		// turns).
		probe, score, cdf := -1, -1.0, 0.0
		for c := 0; c < n; c++ {
			cdf += p[c]
			s := math.Round(min(cdf, 1-cdf)*1e9) / 1e9
			if s > score || (s == score && runs[c] < runs[probe]) {
				probe, score = c, s
			}
		}
		runs[probe]++
		v, err := logSamples(ctx, o, chain, probe, runs[probe])
		if err != nil {
			return outcome{}, err
		}
		x := v[len(v)-1]
		dGood, dBad := (x-good)/sigma, (x-bad)/sigma
		for k := 1; k <= n; k++ {
			if probe >= k {
				logW[k] -= dBad * dBad / 2
			} else {
				logW[k] -= dGood * dGood / 2
			}
		}
	}
}
