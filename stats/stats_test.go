package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// noisy returns n values around 1000 with relative Gaussian noise cv and a
// relative step of size step from index at on (at < 0: no step).
func noisy(rng *rand.Rand, n int, cv, step float64, at int) []float64 {
	s := make([]float64, n)
	for i := range s {
		level := 1000.0
		if at >= 0 && i >= at {
			level *= 1 + step
		}
		s[i] = level * (1 + cv*rng.NormFloat64())
	}
	return s
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name       string
		values     []float64
		confidence float64
		want       Summary
		warn       []string
	}{
		{name: "ten values, order statistics 2 and 9", values: []float64{7, 3, 10, 1, 5, 9, 2, 8, 6, 4}, confidence: 0.95,
			want: Summary{N: 10, Median: 5.5, Interval: record.Interval{Lo: 2, Hi: 9}, Confidence: 1 - 2*11.0/1024}},
		{name: "three values fall back to min and max", values: []float64{812, 790, 805}, confidence: 0.95,
			want: Summary{N: 3, Median: 805, Interval: record.Interval{Lo: 790, Hi: 812}, Confidence: 0.75},
			warn: []string{"need >= 6 samples for confidence interval at level 0.95", "covers the median with probability 0.750"}},
		{name: "one value", values: []float64{42}, confidence: 0.99,
			want: Summary{N: 1, Median: 42, Interval: record.Interval{Lo: 42, Hi: 42}, Confidence: 0}, warn: []string{"need >= 8 samples", "probability 0.000"}},
		{name: "confidence out of range", values: []float64{7, 3, 10, 1, 5, 9, 2, 8, 6, 4}, confidence: 95,
			want: Summary{N: 10, Median: 5.5, Interval: record.Interval{Lo: 2, Hi: 9}, Confidence: 1 - 2*11.0/1024}, warn: []string{"confidence 95 is not in (0, 1)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.values)
			got := Summarize(in, tc.confidence)
			require.Equal(t, tc.values, in, "input must not be reordered")
			require.Len(t, got.Warnings, len(tc.warn), "%q", got.Warnings)
			for i, w := range tc.warn {
				assert.Contains(t, got.Warnings[i], w)
			}
			got.Warnings = nil
			assert.Equal(t, tc.want.N, got.N)
			assert.Equal(t, tc.want.Median, got.Median)
			assert.Equal(t, tc.want.Lo, got.Lo)
			assert.Equal(t, tc.want.Hi, got.Hi)
			assert.InDelta(t, tc.want.Confidence, got.Confidence, 1e-12)
		})
	}
	t.Run("empty", func(t *testing.T) {
		got := Summarize(nil, 0.95)
		assert.Zero(t, got.N)
		assert.True(t, math.IsNaN(got.Median) && math.IsNaN(got.Lo) && math.IsNaN(got.Hi))
		assert.Equal(t, []string{"no values"}, got.Warnings)
	})
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name  string
		a, b  []float64
		wantP float64
		warn  string
	}{
		{name: "separated 5 vs 5", a: []float64{100, 101, 102, 103, 104}, b: []float64{95, 96, 94, 97, 93}, wantP: 2.0 / 252},
		{name: "3 vs 3 cannot reach 0.05", a: []float64{100, 101, 102}, b: []float64{90, 91, 92}, wantP: 0.1,
			warn: "need >= 4 samples to detect a difference at alpha level 0.05"},
		{name: "same values", a: []float64{5, 5, 5, 5}, b: []float64{5, 5, 5, 5}, wantP: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := slices.Clone(tc.a), slices.Clone(tc.b)
			p, warnings := Compare(a, b)
			assert.InDelta(t, tc.wantP, p, 1e-9)
			assert.Equal(t, tc.a, a)
			assert.Equal(t, tc.b, b)
			if tc.warn != "" {
				assert.Contains(t, warnings, tc.warn)
			}
		})
	}
}

func TestDelta(t *testing.T) {
	good := []float64{812, 815, 809, 811, 814, 813, 810, 816}
	scaled := make([]float64, len(good))
	for i, g := range good {
		scaled[i] = 0.9 * g
	}
	tests := []struct {
		name      string
		good, bad []float64
		want      float64
		finite    bool
	}{
		{name: "exactly 10% lower", good: good, bad: scaled, want: -10, finite: true},
		{name: "exactly 10% lower, reversed is +11.1%", good: scaled, bad: good, want: 100.0 / 9, finite: true},
		{name: "no change", good: good, bad: good, want: 0, finite: true},
		{name: "4+4 is the least with a 95% interval", good: good[:4], bad: scaled[:4], want: -10, finite: true},
		{name: "3+3 has no 95% interval", good: good[:3], bad: scaled[:3], want: -10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Delta(tc.good, tc.bad, 0.95)
			pct, lo, hi := e.Pct, e.Lo, e.Hi
			assert.InDelta(t, tc.want, pct, 1e-9)
			if tc.finite {
				assert.LessOrEqual(t, lo, pct)
				assert.GreaterOrEqual(t, hi, pct)
				assert.False(t, math.IsInf(lo, 0) || math.IsInf(hi, 0))
				assert.Greater(t, lo, -100.0)
			} else {
				assert.Equal(t, -100.0, lo)
				assert.True(t, math.IsInf(hi, 1))
			}
		})
	}
	for name, in := range map[string][2][]float64{
		"empty good": {nil, good}, "zero value": {good, {0, 1, 2}}, "negative": {{-1, 2}, good},
	} {
		t.Run(name, func(t *testing.T) {
			e := Delta(in[0], in[1], 0.95)
			assert.True(t, math.IsNaN(e.Pct) && math.IsNaN(e.Lo) && math.IsNaN(e.Hi))
		})
	}
}

func TestMosesRank(t *testing.T) {
	// Critical values of the two-sided Mann–Whitney test at 0.05
	// (standard tables): U ≤ 23 for 10+10, U ≤ 0 for 4+4, none for 3+3.
	assert.Equal(t, 24, mosesRank(10, 10, 0.95))
	assert.Equal(t, 1, mosesRank(4, 4, 0.95))
	assert.Equal(t, 0, mosesRank(3, 3, 0.95))
	// Where the two meet, the normal approximation used above 30 values a
	// side is never more than one rank narrower (liberal) than the exact
	// interval, and at most two ranks wider.
	for _, conf := range []float64{0.9, 0.95, 0.99} {
		for _, n := range [][2]int{{30, 30}, {12, 30}, {30, 20}} {
			exact, approx := mosesRank(n[0], n[1], conf), mosesRankNormal(n[0], n[1], conf)
			assert.LessOrEqual(t, approx, exact+1, "%v at %v", n, conf)
			assert.GreaterOrEqual(t, approx, exact-2, "%v at %v", n, conf)
		}
	}
}

// TestDeltaCoverage checks in a seeded simulation that Delta's 95%
// interval covers the true change in at least 93% of 400 trials (10+10
// lognormal values with 3% noise, a true change of −5%).
func TestDeltaCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const trials = 400
	covered := 0
	for range trials {
		var a, b []float64
		for range 10 {
			a = append(a, 1000*math.Exp(0.03*rng.NormFloat64()))
			b = append(b, 950*math.Exp(0.03*rng.NormFloat64()))
		}
		if Delta(a, b, 0.95).Contains(-5) {
			covered++
		}
	}
	assert.GreaterOrEqual(t, covered, trials*93/100, "covered %d of %d", covered, trials)
}

// TestCUSUM states what the detector does on 200 seeded series of 200
// nights with 2% noise and a 5% step at night 100, with the defaults
// (κ = 1.5%, h = 8σ, a 20-night baseline): at least 197 drops are found
// within 12 nights (mean delay under 5), and false alarms stay below 2
// per 1000 in-control nights. Measured: 198 found (one 4 nights early),
// mean delay 3.6, about 1 false alarm per 1000 nights. The 2 late ones
// (23 and 45 nights) follow a false alarm a few nights before the step:
// the restarted baseline then straddles the step and absorbs part of it.
func TestCUSUM(t *testing.T) {
	const series, nights, at = 200, 200, 100
	found, falseAlarms, delays := 0, 0, 0
	for seed := range uint64(series) {
		rng := rand.New(rand.NewPCG(seed, 1))
		alarms, err := CUSUM(noisy(rng, nights, 0.02, -0.05, at), CUSUMConfig{Watch: Drop})
		require.NoError(t, err)
		hit := false
		for _, a := range alarms {
			switch {
			case a < at-5:
				falseAlarms++
			case !hit && a <= at+12:
				hit = true
				delays += max(0, a-at)
			}
		}
		if hit {
			found++
		}
	}
	assert.GreaterOrEqual(t, found, series-3)
	assert.Less(t, float64(delays)/float64(found), 5.0)
	assert.Less(t, float64(falseAlarms)/float64(series*(at-20))*1000, 2.0)
}

func TestCUSUMScenarios(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	latency := noisy(rng, 80, 0.01, +0.08, 50)
	twoSteps := noisy(rng, 150, 0.01, 0, -1)
	for i := 50; i < 150; i++ {
		twoSteps[i] *= 0.95
	}
	for i := 100; i < 150; i++ {
		twoSteps[i] *= 0.95
	}
	flat := make([]float64, 60)
	for i := range flat {
		flat[i] = 100
	}
	tests := []struct {
		name    string
		series  []float64
		cfg     CUSUMConfig
		want    []int // alarms must fall in [want[2i], want[2i+1]]
		wantErr string
	}{
		{name: "latency rise", series: latency, cfg: CUSUMConfig{Watch: Rise}, want: []int{50, 55}},
		{name: "a rise is not a drop", series: latency, cfg: CUSUMConfig{Watch: Drop}},
		{name: "two drops, restart on the new level", series: twoSteps, cfg: CUSUMConfig{Watch: Drop}, want: []int{50, 55, 100, 105}},
		{name: "identical values use MinSigma", series: flat, cfg: CUSUMConfig{Watch: Drop}},
		{name: "missing Watch", series: flat, wantErr: "Watch must be Drop or Rise"},
		{name: "window too small", series: flat, cfg: CUSUMConfig{Watch: Drop, Window: 3}, wantErr: "bad configuration"},
		{name: "zero value", series: []float64{1, 0, 1}, cfg: CUSUMConfig{Watch: Drop}, wantErr: "value 1 is 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alarms, err := CUSUM(tc.series, tc.cfg)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, alarms, len(tc.want)/2, "alarms %v", alarms)
			for i, a := range alarms {
				assert.GreaterOrEqual(t, a, tc.want[2*i])
				assert.LessOrEqual(t, a, tc.want[2*i+1])
			}
		})
	}
}

// TestChangePoints states the split/merge detector's accuracy on 200
// seeded series of 120 nights: with 1% noise and a 5% drop at night 60
// it reports exactly that one point (±2) in at least 190 (measured 194),
// and on flat series with 2% noise it reports a change in at most 6
// (measured 3), with Otava's maxP = 0.001.
func TestChangePoints(t *testing.T) {
	exact, falsePositives := 0, 0
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		cps := ChangePoints(noisy(rng, 120, 0.01, -0.05, 60), 0.001, 0)
		if len(cps) == 1 && cps[0] >= 58 && cps[0] <= 62 {
			exact++
		}
		if len(ChangePoints(noisy(rng, 120, 0.02, 0, -1), 0.001, 0)) > 0 {
			falsePositives++
		}
	}
	assert.GreaterOrEqual(t, exact, 190)
	assert.LessOrEqual(t, falsePositives, 6)
}

func TestChangePointsScenarios(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	dropAndRecover := noisy(rng, 120, 0.01, 0, -1)
	for i := 40; i < 80; i++ {
		dropAndRecover[i] *= 0.93
	}
	levels := []float64{5, 5, 5, 5, 5, 5, 7, 7, 7, 7, 7, 7}
	tests := []struct {
		name         string
		series       []float64
		minMagnitude float64
		want         []int
	}{
		{name: "a drop masked by a later recovery", series: dropAndRecover, want: []int{40, 80}},
		{name: "constant levels", series: levels, want: []int{6}},
		{name: "5% step below a 10% minimum magnitude", series: noisy(rng, 120, 0.01, -0.05, 60), minMagnitude: 0.10},
		{name: "too short", series: []float64{1, 1, 1, 2, 2, 2}},
		{name: "NaN", series: append(slices.Clone(levels), math.NaN())},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ChangePoints(tc.series, 0.001, tc.minMagnitude))
		})
	}
}

func TestBestSplitMatchesDirectSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	x := noisy(rng, 40, 0.02, 0.04, 17)
	q := func(tau int) float64 {
		var cross, wl, wr float64
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				d := math.Abs(x[i] - x[j])
				switch {
				case j < tau:
					wl += d
				case i >= tau:
					wr += d
				default:
					cross += d
				}
			}
		}
		m, n := float64(tau), float64(len(x)-tau)
		return m * n / (m + n) * (2*cross/(m*n) - wl/(m*(m-1)/2) - wr/(n*(n-1)/2))
	}
	want, wantQ := 0, math.Inf(-1)
	for tau := minSegment; tau <= len(x)-minSegment; tau++ {
		if v := q(tau); v > wantQ {
			want, wantQ = tau, v
		}
	}
	got, ok := bestSplit(x)
	require.True(t, ok)
	assert.Equal(t, want, got)
}

func TestMAD(t *testing.T) {
	assert.True(t, math.IsNaN(MAD(nil)))
	// |d| = 1, 1, 2, 3, 4: the median is 2, whatever the signs.
	assert.InDelta(t, 2*1.4826, MAD([]float64{-1, 1, 2, -3, 4}), 1e-12)
	// Consistent for Gaussian noise, and one wild value moves it little.
	rng := rand.New(rand.NewPCG(3, 0))
	devs := make([]float64, 20001)
	for i := range devs {
		devs[i] = 0.02 * rng.NormFloat64()
	}
	assert.InDelta(t, 0.02, MAD(devs), 0.0005)
	devs[0] = 1e6
	assert.InDelta(t, 0.02, MAD(devs), 0.0005)
}

func TestStudentQuantile(t *testing.T) {
	for _, tc := range []struct{ p, df, want float64 }{
		{0.975, 4, 2.776445}, {0.999, 8, 4.500791}, {0.9999, 20, 4.538521}, {0.5, 3, 0}, {0.025, 10, -2.228139},
	} {
		assert.InDelta(t, tc.want, StudentQuantile(tc.p, tc.df), 1e-5, "p %v, df %v", tc.p, tc.df)
	}
	assert.True(t, math.IsNaN(StudentQuantile(1, 5)))
}

func TestDeltaNoise(t *testing.T) {
	tests := []struct {
		name         string
		good, bad    []float64
		sigma, df    float64
		wantPct      float64
		excludesZero bool
	}{
		{name: "a third slower, 1% noise, two runs a side", good: []float64{100, 101}, bad: []float64{67, 67.5}, sigma: 0.01, df: 20, wantPct: -33.08, excludesZero: true},
		{name: "5% lower, 3% noise, two runs a side is not shown", good: []float64{100, 100}, bad: []float64{95, 95}, sigma: 0.03, df: 20, wantPct: -5, excludesZero: false},
		{name: "5% lower, 3% noise, three runs a side is", good: []float64{100, 100, 100}, bad: []float64{95, 95, 95}, sigma: 0.03, df: 20, wantPct: -5, excludesZero: true},
		{name: "noise of few degrees of freedom widens it", good: []float64{100, 100, 100}, bad: []float64{95, 95, 95}, sigma: 0.03, df: 2, wantPct: -5, excludesZero: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := DeltaNoise(tc.good, tc.bad, tc.sigma, tc.df, 0.95)
			assert.InDelta(t, tc.wantPct, e.Pct, 0.01)
			assert.Less(t, e.Lo, e.Pct)
			assert.Greater(t, e.Hi, e.Pct)
			assert.Equal(t, tc.excludesZero, e.Hi < 0, "interval %v", e)
			assert.Equal(t, e, DeltaNoiseLogs(Logs(tc.good), Logs(tc.bad), tc.sigma, tc.df, 0.95), "the same rule on the logs")
		})
	}
	for name, in := range map[string]struct {
		good, bad []float64
		sigma, df float64
	}{
		"empty bad": {good: []float64{1}, sigma: 0.01, df: 9}, "zero value": {good: []float64{1}, bad: []float64{0}, sigma: 0.01, df: 9},
		"no sigma": {good: []float64{1}, bad: []float64{2}, df: 9}, "no df": {good: []float64{1}, bad: []float64{2}, sigma: 0.01},
	} {
		t.Run(name, func(t *testing.T) {
			assert.True(t, math.IsNaN(DeltaNoise(in.good, in.bad, in.sigma, in.df, 0.95).Pct))
		})
	}
	t.Run("a log value that is not finite", func(t *testing.T) {
		assert.True(t, math.IsNaN(DeltaNoiseLogs([]float64{0}, []float64{math.Inf(-1)}, 0.01, 9, 0.95).Pct))
	})
}

func TestPooled(t *testing.T) {
	tests := []struct {
		name      string
		groups    [][]float64
		sigma, df float64
	}{
		{name: "two groups of two", groups: [][]float64{{1, 3}, {10, 12}}, sigma: math.Sqrt(2), df: 2},
		{name: "a single value adds nothing", groups: [][]float64{{1, 3}, {7}}, sigma: math.Sqrt(2), df: 1},
		{name: "no group of two", groups: [][]float64{{1}, nil}, sigma: 0, df: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sigma, df := Pooled(tc.groups...)
			assert.InDelta(t, tc.sigma, sigma, 1e-12)
			assert.Equal(t, tc.df, df)
		})
	}
}
