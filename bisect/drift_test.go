package bisect

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/perfbot/perfbot/stats"
)

// interleaved draws rounds of one run per group, groups taken in turn, with
// the given level per group and host state per run.
func interleaved(r *rand.Rand, levels []float64, rounds int, sigma float64, host func(t int) float64) ([][]float64, [][]int) {
	groups := make([][]float64, len(levels))
	at := make([][]int, len(levels))
	t := 0
	for range rounds {
		for g, l := range levels {
			groups[g] = append(groups[g], l+host(t)+sigma*r.NormFloat64())
			at[g] = append(at[g], t)
			t++
		}
	}
	return groups, at
}

func TestRemoveDriftLeavesSteadyHostAlone(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	groups, at := interleaved(r, []float64{0, 0.05, 0.02}, 20, 0.02, func(int) float64 { return 0 })
	fixed, drifting := removeDrift(groups, at)
	assert.False(t, drifting)
	assert.Equal(t, groups, fixed, "no drift is removed where the host does not drift")
}

func TestRemoveDriftFollowsSlowEpisode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// Runs 30 to 59 are taken while the host is 15% slower.
	slow := func(t int) float64 {
		if t >= 30 && t < 60 {
			return math.Log(0.85)
		}
		return 0
	}
	levels := []float64{0, -0.05, 0}
	groups, at := interleaved(r, levels, 30, 0.01, slow)
	fixed, drifting := removeDrift(groups, at)
	assert.True(t, drifting)
	for g := range groups {
		before, after := spread(groups[g]), spread(fixed[g])
		assert.Less(t, after, 0.4*before, "group %d: standard deviation %.4f before, %.4f after", g, before, after)
	}
	// The difference between the groups is kept.
	assert.InDelta(t, -0.05, stats.Mean(fixed[1])-stats.Mean(fixed[0]), 0.01)
}

func TestRemoveDriftIgnoresUntimedRuns(t *testing.T) {
	groups := [][]float64{{0.1, 0.2, 0.3}, {0.4, 0.5}}
	at := [][]int{{-1, -1, -1}, {-1, -1}}
	fixed, drifting := removeDrift(groups, at)
	assert.False(t, drifting)
	assert.Equal(t, groups, fixed)
}

func spread(xs []float64) float64 {
	return math.Sqrt(stats.SumSquares(xs) / float64(len(xs)-1))
}
