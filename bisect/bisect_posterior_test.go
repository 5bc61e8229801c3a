package bisect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statsOf builds commit statistics from log values per index.
func statsOf(values map[int][]float64) []segmentStats {
	var out []segmentStats
	for i := range 1 << 12 {
		v, ok := values[i]
		if !ok {
			continue
		}
		st := segmentStats{index: i, n: float64(len(v))}
		for _, y := range v {
			st.sum += y
			st.sumSq += y * y
		}
		out = append(out, st)
	}
	return out
}

// runs returns n values around level with a spread of about 0.02 and
// no randomness.
func runs(n int, level float64) []float64 {
	offsets := []float64{0.02, -0.02, 0.01, -0.01, 0.03, -0.03}
	out := make([]float64, n)
	for i := range out {
		out[i] = level + offsets[i%len(offsets)]
	}
	return out
}

func TestPosterior(t *testing.T) {
	// Commits 0..100; the change is at 61; 60 and 61 are measured six times.
	p := newPosterior(statsOf(map[int][]float64{
		0: runs(6, 0), 30: runs(2, 0), 60: runs(6, 0), 61: runs(6, -0.05), 80: runs(2, -0.05), 100: runs(6, -0.05),
	}))
	never := func(int) bool { return false }
	pos, posP, group, groupP := p.best(never)
	assert.Equal(t, 61, pos)
	require.Positive(t, group)
	assert.Equal(t, 61, p.measured[group])
	// The 30 positions in (30, 60] weigh against the single one at 61.
	assert.Greater(t, groupP, 0.95)
	assert.InDelta(t, groupP, posP, 1e-12)
	assert.InDelta(t, 1, p.cdf(100), 1e-9)
	assert.Zero(t, p.cdf(0))
	assert.Less(t, p.cdf(60), 0.05)
	assert.Greater(t, p.cdf(61), 0.95)

	// Between 0 and 30 all positions share one probability.
	assert.InDelta(t, p.cdf(10)-p.cdf(9), p.cdf(20)-p.cdf(19), 1e-15)
}

func TestPosteriorNearest(t *testing.T) {
	p := newPosterior(statsOf(map[int][]float64{0: runs(5, 0), 64: runs(5, -0.05)}))
	never := func(int) bool { return false }
	ideal, d, measured, _ := p.nearest(0.5, never, never)
	assert.Equal(t, 32, ideal, "a flat posterior is split in the middle")
	assert.Less(t, d, 0.01)
	assert.Equal(t, -1, measured, "the ends are not probes")

	broken := func(i int) bool { return i >= 30 && i <= 33 }
	ideal, _, _, _ = p.nearest(0.5, broken, never)
	assert.Contains(t, []int{29, 34}, ideal, "broken commits are stepped over")

	taken := func(i int) bool { return i == 32 }
	ideal, _, _, _ = p.nearest(0.5, never, taken)
	assert.Contains(t, []int{31, 33}, ideal, "a commit already in the round is not chosen twice")
}

// TestPosteriorWithoutPositions checks the posterior of a range that has
// no measured position left: no commit with a value, or only one, as when
// every run of an end was screened out. It holds no position and answers
// without failing; the search builds none (search.posterior).
func TestPosteriorWithoutPositions(t *testing.T) {
	tests := []struct {
		name  string
		stats []segmentStats
	}{
		{"no measured commit", nil},
		{"the good end only", statsOf(map[int][]float64{0: runs(12, 0)})},
		{"a middle commit only", statsOf(map[int][]float64{12: runs(2, -0.05)})},
	}
	never := func(int) bool { return false }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPosterior(tt.stats)
			for _, m := range []int{-1, 0, 12, 31} {
				assert.Zero(t, p.interval(m), "position %d", m)
				assert.Zero(t, p.cdf(m), "position %d", m)
			}
			_, posP, group, groupP := p.best(never)
			assert.Zero(t, posP)
			assert.Zero(t, group)
			assert.Zero(t, groupP)
			ideal, _, measured, _ := p.nearest(0.5, never, never)
			assert.Equal(t, -1, ideal)
			assert.Equal(t, -1, measured)
		})
	}
}

// TestTwoChanges: commits at a level between the ends' make two changes
// the better account; the same commits at an end's level, one change.
func TestTwoChanges(t *testing.T) {
	const minStep = 0.01
	two := newTwoChanges(statsOf(map[int][]float64{
		0: runs(6, 0), 40: runs(6, 0), 70: runs(6, -0.05), 120: runs(6, -0.05), 190: runs(6, -0.1), 256: runs(6, -0.1),
	}), minStep)
	assert.Greater(t, two.logBF, float64(splitLogBF))
	assert.Equal(t, []int{2, 4}, []int{two.first, two.second}, "the middle level is held by 70 and 120")
	assert.Greater(t, two.middle[2], middleSure)
	assert.Greater(t, two.middle[3], middleSure)
	assert.Less(t, two.middle[0]+two.middle[5], 0.01)

	one := newTwoChanges(statsOf(map[int][]float64{
		0: runs(6, 0), 40: runs(6, 0), 70: runs(6, -0.1), 120: runs(6, -0.1), 190: runs(6, -0.1), 256: runs(6, -0.1),
	}), minStep)
	assert.Less(t, one.logBF, float64(plausibleLogBF))
}
