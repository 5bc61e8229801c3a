package testbed

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fakeMeasurer plays a host whose metrics at a commit are its base values
// scaled by the commit's effects, with multiplicative noise and a slow
// drift over time, and whose broken commits do not build.
type fakeMeasurer struct {
	base    map[string]float64
	effects map[string]map[string]float64 // commit → metric → percent
	broken  map[string]bool
	failing map[string]error
	noise   float64
	rng     *rand.Rand
	calls   []string
}

var _ Measurer = (*fakeMeasurer)(nil)

func (f *fakeMeasurer) Measure(ctx context.Context, commit string, repeats int) (map[string][]float64, error) {
	f.calls = append(f.calls, commit)
	if err := f.failing[commit]; err != nil {
		return nil, err
	}
	if f.broken[commit] {
		return nil, fmt.Errorf("go test -c ./bench: %w", ErrBuildFailed)
	}
	drift := 1 + 0.0005*float64(len(f.calls))
	out := map[string][]float64{}
	// In a fixed order, so that the seeded noise falls the same way on
	// every run of the test (map order would vary it).
	for _, metric := range slices.Sorted(maps.Keys(f.base)) {
		v := f.base[metric]
		for range repeats {
			scale := 1 + f.effects[commit][metric]/100
			out[metric] = append(out[metric], v*scale*drift*(1+f.noise*f.rng.NormFloat64()))
		}
	}
	return out, nil
}

// scenario is a manifest of three changes on made-up commits and a fake
// host on which they have the given effects.
func scenario(measuredA, measuredG float64) (*Manifest, *fakeMeasurer) {
	m := &Manifest{Head: "h", Changes: []Change{
		{ID: "a", Kind: Regression, Commit: "a1", Parent: "a0", Effects: map[string]float64{VerifyTokS: -15, DecodeTokS: -20}},
		{ID: "e", Kind: BuildBreak, Commit: "e1", Parent: "e0", Fix: "e2"},
		{ID: "g", Kind: NonRuntime, Commit: "g1", Parent: "g0", Effects: map[string]float64{VerifyTokS: 0}},
	}}
	f := &fakeMeasurer{
		base: map[string]float64{VerifyTokS: 900, DecodeTokS: 1400, AllReduceGBps: 0.6},
		effects: map[string]map[string]float64{
			"a1": {VerifyTokS: measuredA, DecodeTokS: -20},
			"g1": {VerifyTokS: measuredG},
		},
		broken: map[string]bool{"e1": true},
		noise:  0.02,
		rng:    rand.New(rand.NewPCG(1, 2)),
	}
	return m, f
}

func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name      string
		measuredA float64
		measuredG float64
		fixBroken bool
		off       string
	}{
		{"as intended", -15, 0, false, ""},
		{"regression not reproduced", 0, 0, false, "a/verify_tok_s"},
		{"regression turned improvement", 12, 0, false, "a/verify_tok_s"},
		{"docs change moved a metric", -15, -9, false, "g/verify_tok_s"},
		{"broken commit builds", -15, 0, true, "e/build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, f := scenario(tc.measuredA, tc.measuredG)
			if tc.fixBroken {
				f.broken = nil
			}
			var out bytes.Buffer
			err := Verify(context.Background(), m, f, 10, &out)
			if tc.off == "" {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrNotAsIntended)
				assert.ErrorContains(t, err, tc.off)
			}
			assert.Contains(t, out.String(), "as intended")
		})
	}
}

func TestVerifyInterleaves(t *testing.T) {
	m, f := scenario(-15, 0)
	effects, err := MeasureEffects(context.Background(), m, f, 3)
	require.NoError(t, err)
	assert.Equal(t, []string{"a0", "a1", "a0", "a1", "a0", "a1", "e1", "g0", "g1", "g0", "g1", "g0", "g1"}, f.calls)
	require.Len(t, effects, 4, "a: two metrics, e: build, g: one metric")
	for _, e := range effects {
		if e.Kind != BuildBreak {
			assert.Len(t, e.Parent, 3)
			assert.Len(t, e.Candidate, 3)
		}
	}
}

func TestVerifyEstimates(t *testing.T) {
	m, f := scenario(-15, 0)
	effects, err := MeasureEffects(context.Background(), m, f, 10)
	require.NoError(t, err)
	e := effects[1] // a, verify_tok_s (metrics sorted by name)
	require.Equal(t, VerifyTokS, e.Metric)
	assert.InDelta(t, -15, e.Measured, 2, "estimate near the true effect")
	assert.Less(t, e.Lo, e.Measured)
	assert.Greater(t, e.Hi, e.Measured)
	assert.True(t, e.OutsideNoise())
	assert.True(t, e.AsIntended())
}

func TestVerifyStopsOnInfrastructureErrors(t *testing.T) {
	m, f := scenario(-15, 0)
	lost := errors.New("host unreachable")
	f.failing = map[string]error{"a1": lost}
	err := Verify(context.Background(), m, f, 10, &bytes.Buffer{})
	require.ErrorIs(t, err, lost)
	assert.NotErrorIs(t, err, ErrNotAsIntended)
	assert.ErrorContains(t, err, "change a")

	m, f = scenario(-15, 0)
	f.failing = map[string]error{"e1": lost}
	require.ErrorIs(t, Verify(context.Background(), m, f, 10, &bytes.Buffer{}), lost, "a build break's error must be a build failure")
}

func TestVerifyHonoursContext(t *testing.T) {
	m, f := scenario(-15, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, Verify(ctx, m, f, 10, &bytes.Buffer{}), context.Canceled)
	assert.Empty(t, f.calls)
}

func TestVerifyRejectsNoRepeats(t *testing.T) {
	m, f := scenario(-15, 0)
	require.ErrorContains(t, Verify(context.Background(), m, f, 0, &bytes.Buffer{}), "0 repeats")
}

func TestVerifyMissingMetric(t *testing.T) {
	m, f := scenario(-15, 0)
	m.Changes[0].Effects["tpot_ms"] = 5
	require.ErrorContains(t, Verify(context.Background(), m, f, 2, &bytes.Buffer{}), "no values for metric tpot_ms")
}

func TestWriteEffectsGolden(t *testing.T) {
	effects := []Effect{
		{Change: "a", Kind: Regression, Commit: "3f2a9c1d5e7b", Metric: VerifyTokS, Intended: -15, Measured: -14.81, Lo: -16.02, Hi: -13.5, Parent: make([]float64, 10), Candidate: make([]float64, 10)},
		{Change: "b", Kind: Regression, Commit: "77aa01bc9e", Metric: DecodeTokS, Intended: 0, Measured: 0.4, Lo: -1.1, Hi: 1.9, Parent: make([]float64, 10), Candidate: make([]float64, 10)},
		{Change: "c", Kind: Regression, Commit: "c0ffee1234", Metric: VerifyTokS, Intended: -4.5, Measured: -1.2, Lo: -3.3, Hi: 0.8, Parent: make([]float64, 10), Candidate: make([]float64, 10)},
		{Change: "d", Kind: Improvement, Commit: "d00d", Metric: VerifyTokS, Intended: 13, Measured: 12.6, Lo: -100, Hi: math.Inf(1), Parent: make([]float64, 3), Candidate: make([]float64, 3)},
		{Change: "e", Kind: BuildBreak, Commit: "e1e2e3e4e5e6", Metric: "build"},
	}
	var out bytes.Buffer
	require.NoError(t, WriteEffects(&out, effects))
	golden := filepath.Join("testdata", "effects.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), out.String())
}
