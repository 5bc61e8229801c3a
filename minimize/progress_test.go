package minimize_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

// countingOracle counts the oracle calls a search makes and the calls
// made since the last step event, so that a test sees any measurement
// that went unreported.
type countingOracle struct {
	w      *bisecttest.SetWorld
	calls  int
	silent int
	maxGap int
}

func (o *countingOracle) Samples(ctx context.Context, set []string, n int) ([]float64, error) {
	o.calls++
	o.silent++
	o.maxGap = max(o.maxGap, o.silent)
	return o.w.Samples(ctx, set, n)
}

func (o *countingOracle) onStep(minimize.StepEvent) { o.silent = 0 }

func TestIsolateStopsWhenEndsCannotDiffer(t *testing.T) {
	// Ends that are one and the same (a change that touches nothing the
	// benchmark runs) or differ by much less than the effect worth
	// isolating: the search stops at the first comparison whose interval
	// shows it, after InitialRuns samples a side, not after the ends'
	// limit of 2×MaxRunsPerTest (240 samples in all).
	ids := bisecttest.Hunks(4)
	for _, tc := range []struct {
		name       string
		world      *bisecttest.SetWorld
		better     record.Better
		wantIs     error
		wantMsg    string
		maxSamples int
	}{
		{name: "no effect", world: &bisecttest.SetWorld{Elements: ids, CV: 0.01, Seed: 3}, wantIs: minimize.ErrEndsAlike, wantMsg: "within the 2.0% worth isolating", maxSamples: 40},
		{name: "effect below min_effect", world: bisecttest.OneCulprit(4, 1, math.Log(0.997), 0.01, 3), wantIs: minimize.ErrEndsAlike, wantMsg: "within the 2.0% worth isolating", maxSamples: 40},
		{name: "a host too noisy for the effect", world: bisecttest.OneCulprit(4, 1, math.Log(0.97), 0.15, 3), wantIs: minimize.ErrEndsAlike, wantMsg: "too wide to tell a change", maxSamples: 60},
		{name: "improvement of a higher-is-better metric", world: bisecttest.OneCulprit(4, 1, math.Log(1.10), 0.01, 3), better: record.Higher, wantIs: minimize.ErrNotWorse, maxSamples: 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &countingOracle{w: tc.world}
			_, err := minimize.Isolate(context.Background(), o, minimize.Options{
				Groups: flat(ids), MinEffect: 0.02, Better: tc.better, InitialRuns: 10, OnStep: o.onStep,
			})
			require.ErrorIs(t, err, tc.wantIs)
			assert.ErrorContains(t, err, tc.wantMsg)
			assert.LessOrEqual(t, tc.world.SamplesDrawn(), tc.maxSamples, "samples drawn before the search gave up")
			assert.Equal(t, 0, o.silent, "the last measurement was reported")
			assert.Equal(t, 1, o.maxGap, "every measurement was reported before the next one")
		})
	}
}

func TestIsolateWithoutMinEffectMeasuresToTheLimit(t *testing.T) {
	// Without MinEffect the ends alike are known only at their limit: the
	// cost the early stop saves.
	ids := bisecttest.Hunks(4)
	w := &bisecttest.SetWorld{Elements: ids, CV: 0.01, Seed: 3}
	_, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: flat(ids), InitialRuns: 10})
	require.ErrorIs(t, err, minimize.ErrEndsAlike)
	assert.Greater(t, w.SamplesDrawn(), 200)
}

func TestIsolateReportsEveryStep(t *testing.T) {
	w := bisecttest.OneCulprit(8, 2, drop, 0.02, 1)
	o := &countingOracle{w: w}
	phases := map[string]int{}
	var steps []minimize.StepEvent
	iso, err := minimize.Isolate(context.Background(), o, minimize.Options{
		Groups: flat(w.Elements), MinEffect: 0.02, Better: record.Higher,
		OnStep: func(e minimize.StepEvent) {
			o.onStep(e)
			phases[e.Phase]++
			steps = append(steps, e)
		},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"h02"}, iso.Minimal)
	assert.Equal(t, 1, o.maxGap, "no oracle call without a step event before the next")
	for _, p := range []string{minimize.PhaseEnds, minimize.PhaseTest, minimize.PhaseConfirm} {
		assert.Positive(t, phases[p], "phase %s reported", p)
	}
	require.NotEmpty(t, steps)
	assert.Equal(t, "good", steps[0].End)
	assert.Empty(t, steps[0].Set)
	assert.Equal(t, "bad", steps[1].End)
	assert.Len(t, steps[1].Set, 8)
}

func TestIsolateSearchesALargeEffectOnANoisyHost(t *testing.T) {
	// 15% noise, but a 30% drop: the ends are told apart, the search goes
	// on past them.
	w := bisecttest.OneCulprit(4, 1, math.Log(0.7), 0.15, 3)
	iso, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: flat(w.Elements), MinEffect: 0.02, Better: record.Higher, InitialRuns: 10})
	require.NoError(t, err)
	assert.Equal(t, []string{"h01"}, iso.Minimal)
}
