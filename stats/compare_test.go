package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noisy returns n log-normal values around level with coefficient of
// variation cv.
func noisyLog(r *rand.Rand, n int, level, cv float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level * math.Exp(cv*r.NormFloat64())
	}
	return out
}

func TestClassify(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	good := noisyLog(r, 20, 100, 0.02)
	bad := noisyLog(r, 20, 95, 0.02)
	tests := []struct {
		name   string
		probe  []float64
		lo, hi float64
	}{
		{"probe at the bad level", []float64{95, 95.8, 94.2}, 0.99, 1},
		{"probe at the good level", []float64{100, 101, 99}, 0, 0.01},
		{"one run at the bad level", []float64{95}, 0.8, 1},
		{"one run at the good level", []float64{100}, 0, 0.2},
		{"halfway is undecided", []float64{97.47}, 0.3, 0.7},
		{"no probe runs", nil, 0.5, 0.5},
		{"only unusable values", []float64{0, -3, math.NaN()}, 0.5, 0.5},
		{"stalled run among good runs", []float64{100, 101, 99, 100.5, 80}, 0, 0.01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Classify(good, bad, tt.probe)
			assert.GreaterOrEqual(t, p, tt.lo)
			assert.LessOrEqual(t, p, tt.hi)
		})
	}
}

func TestClassifyUninformative(t *testing.T) {
	assert.Equal(t, 0.5, Classify(nil, []float64{1, 2}, []float64{1}))
	assert.Equal(t, 0.5, Classify([]float64{1}, nil, []float64{1}))
	assert.Equal(t, 0.5, Classify([]float64{1}, []float64{2}, nil))
	// Identical ends cannot tell anything apart.
	assert.Equal(t, 0.5, Classify([]float64{5, 5}, []float64{5, 5}, []float64{5}))
}

// TestClassifySymmetric checks that swapping the ends swaps the answer and
// that the direction of the metric plays no part.
func TestClassifySymmetric(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	good := noisyLog(r, 6, 50, 0.05)
	bad := noisyLog(r, 6, 45, 0.05)
	probe := noisyLog(r, 2, 47, 0.05)
	p := Classify(good, bad, probe)
	assert.InDelta(t, 1-p, Classify(bad, good, probe), 1e-12)
}

// TestClassifyCalibrated checks that Classify is a probability, not a
// score: among probes it calls bad with probability about p, a fraction
// about p really is bad.
func TestClassifyCalibrated(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	type bin struct{ sumP, bad, n float64 }
	bins := map[string]*bin{"0.6-0.9": {}, "0.9-1": {}}
	for range 4000 {
		good := noisyLog(r, 20, 100, 0.05)
		bad := noisyLog(r, 20, 95, 0.05)
		isBad := r.IntN(2) == 1
		level := 100.0
		if isBad {
			level = 95
		}
		p := Classify(good, bad, noisyLog(r, 2, level, 0.05))
		var b *bin
		switch {
		case p >= 0.9:
			b = bins["0.9-1"]
		case p >= 0.6:
			b = bins["0.6-0.9"]
		default:
			continue
		}
		b.sumP += p
		b.n++
		if isBad {
			b.bad++
		}
	}
	for name, b := range bins {
		require.Greater(t, b.n, 100.0, name)
		assert.InDelta(t, b.sumP/b.n, b.bad/b.n, 0.05, "bin %s", name)
	}
}

func TestStudentCDF(t *testing.T) {
	// Reference values from tables of Student's t.
	tests := []struct{ t, df, want float64 }{
		{0, 5, 0.5},
		{2.015, 5, 0.95},
		{-2.015, 5, 0.05},
		{4.501, 8, 0.999},
		{1.96, 1e6, 0.975},
		{12.706, 1, 0.975},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, StudentCDF(tt.t, tt.df), 1e-3, "t=%v df=%v", tt.t, tt.df)
	}
}

func TestScreen(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	gauss := func(n int, level float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = level + 0.01*r.NormFloat64()
		}
		return out
	}
	good := append(gauss(12, 0), -0.2)
	bad := gauss(12, -0.05)
	probe := []float64{-0.3}
	groups := [][]float64{good, bad, probe}
	got := Screen(groups, Scale(groups), 0, 1)
	require.Len(t, got, 3)
	assert.Len(t, got[0], 12, "the stalled good run is dropped")
	assert.Len(t, got[1], 12)
	assert.Empty(t, got[2], "a lone run far outside both ends is dropped")

	small := [][]float64{{0, 0.01, -0.5}, {-0.05, -0.04, -0.06}}
	few := Screen(small, Scale(small), 0, 1)
	assert.Len(t, few[0], 3, "six runs are too few to know what an outlier is")
}
