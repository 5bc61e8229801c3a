package detect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// paired returns nightly's series as the nightly service measures it:
// each repeat of the tip scaled by the reference run beside it to the
// reference's level, 1000.
func paired(seed uint64, n int, cv float64, steps ...step) []Point {
	series := nightly(seed, n, cv, steps...)
	for i := range series {
		series[i].Level, series[i].Weight = 1000, 1
	}
	return series
}

// atLevel sets the reference's level of the points from i on, as a new
// reference does (the culprit of a triaged finding, at the level of the
// nights since it landed).
func atLevel(series []Point, i int, level float64) []Point {
	for j := i; j < len(series); j++ {
		series[j].Level = level
	}
	return series
}

func TestYoungScenarios(t *testing.T) {
	higher, lower := Config{Better: record.Higher}, Config{Better: record.Lower}
	tests := []struct {
		name   string
		series []Point
		cfg    Config
		want   []want
	}{
		{name: "a quiet young series", series: paired(1, 20, 0.02), cfg: higher},
		{name: "a 5% drop on the second night", series: paired(2, 30, 0.02, step{1, 0.95}), cfg: higher,
			want: []want{{record.Regression, 1, 1, 2, false}}},
		{name: "an 8% drop on the eighth night", series: paired(3, 30, 0.02, step{7, 0.92}), cfg: higher,
			want: []want{{record.Regression, 7, 7, 7, false}}},
		{name: "a 5% rise on the fifth night, lower is better: a regression", series: paired(4, 30, 0.02, step{4, 1.05}), cfg: lower,
			want: []want{{record.Regression, 4, 4, 5, true}}},
		{name: "a 3% drop on the sixth night waits for a run of nights", series: paired(5, 40, 0.02, step{5, 0.97}), cfg: higher,
			want: []want{{record.Regression, 5, 6, 25, true}}},
		{name: "a drop, then another after the reference moved to the new level",
			series: atLevel(paired(6, 30, 0.02, step{4, 0.92}, step{14, 0.95}), 10, 920), cfg: higher,
			want: []want{{record.Regression, 4, 4, 5, false}, {record.Regression, 14, 14, 15, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assertDetects(t, tc.series, tc.cfg, tc.want) })
	}
}

// TestYoungAccuracy states what the paired test of a young series does
// with detection's defaults on seeded series of 5 repeats a night at 2%
// noise: a 5% drop landing on night 2, 5 or 10 of a new series is found
// in each of 200 series, alerted within 1.5 nights on average (the night
// it lands counts 1), and the first 20 nights of 2,000 quiet series raise
// at most 1 alarm per 1,000 nights (about 0.4 per 1,000 over 300,000).
func TestYoungAccuracy(t *testing.T) {
	cfg := Config{Better: record.Higher}
	alarms := 0
	for i := range uint64(2000) {
		alerts, err := Detect(paired(9000+i, 20, 0.02), cfg)
		require.NoError(t, err)
		alarms += len(alerts)
	}
	t.Logf("%d alarms in the first 20 nights of 2,000 quiet series", alarms)
	assert.LessOrEqual(t, alarms, 40, "alarms in the first 20 nights of 2,000 quiet series")

	for _, night := range []int{2, 5, 10} {
		found, delays := 0, 0
		for i := range uint64(200) {
			at := night - 1
			alerts, err := Detect(paired(11000+i, at+10, 0.02, step{at, 0.95}), cfg)
			require.NoError(t, err)
			for _, a := range alerts {
				if a.Night >= at && a.Direction == record.Regression {
					found++
					delays += a.Night - at + 1
					break
				}
			}
		}
		assert.Equal(t, 200, found, "drop on night %d", night)
		assert.LessOrEqual(t, float64(delays)/float64(found), 1.5, "drop on night %d: mean nights to the alert", night)
	}
}

// The reference's level carries a night's error that a weight below 1
// leaves in the values: the paired test counts it, and so raises no more
// alarms on quiet series whose level is off by that error.
func TestYoungCountsTheLevelsError(t *testing.T) {
	cfg := Config{Better: record.Higher}
	alarms := 0
	for i := range uint64(300) {
		series := paired(13000+i, 20, 0.02)
		// The level is one night's median, with its error, and the values
		// were not scaled by the reference at all.
		level := series[0].Values
		for j := range series {
			series[j].Level, series[j].Weight = median5(level), 0
		}
		alerts, err := Detect(series, cfg)
		require.NoError(t, err)
		alarms += len(alerts)
	}
	assert.LessOrEqual(t, alarms, 3, "alarms in the first 20 nights of 300 quiet series")
}

func median5(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// ratioNights returns a series shaped like perfbot demo's verify_cost, a
// ratio within one run that the host's speed hardly moves: 5 repeats a
// night at 3.3% noise a run and 1.5% a night (the night's build), scaled
// by the reference with weight 0.25, the reference's level the first
// night's median (measured alone), and a step of factor from night at on
// (at < 0: none).
func ratioNights(seed uint64, n, at int, factor float64) []Point {
	rng := rand.New(rand.NewPCG(seed, 77))
	out := make([]Point, n)
	for i := range out {
		level := 5.3
		if at >= 0 && i >= at {
			level *= factor
		}
		shift := 0.015 * rng.NormFloat64()
		values := make([]float64, 5)
		for r := range values {
			values[r] = level * math.Exp(shift+0.033*rng.NormFloat64())
		}
		out[i] = Point{Time: day0.Add(time.Duration(i) * 24 * time.Hour), Commit: fmt.Sprintf("c%03d", i), Values: values, Weight: 0.25}
	}
	level := median5(out[0].Values)
	for i := range out {
		out[i].Level = level
	}
	out[0].Weight = 1
	return out
}

// A metric the reference's runs hardly scale (a ratio within one run)
// has a level, the first night's median, with a night's error: the
// paired test weighs it with the later nights' median, and reads the
// noise between nights as well as within. An 8% step on the tenth night
// is alerted within 3 nights in 286 of 300 series (223 against the
// first night's level alone). The noise of a night's build, which its
// repeats do not show, costs alarms before the differences between
// nights tell it: 43 in the first 20 nights of 300 quiet series (what
// detect.confirm_nights is for).
func TestYoungRatioMetric(t *testing.T) {
	cfg := Config{Better: record.Lower, MinEffect: 0.03}
	found, alarms := 0, 0
	for seed := range uint64(300) {
		alerts, err := Detect(ratioNights(seed, 20, 9, 1.08), cfg)
		require.NoError(t, err)
		if slices.ContainsFunc(alerts, func(a Alert) bool { return a.Direction == record.Regression && a.Night >= 9 && a.Night <= 11 }) {
			found++
		}
		quiet, err := Detect(ratioNights(seed+1000, 20, -1, 1), cfg)
		require.NoError(t, err)
		alarms += len(quiet)
	}
	t.Logf("the step alerted within 3 nights in %d of 300 series; %d alarms in 6,000 quiet nights", found, alarms)
	assert.GreaterOrEqual(t, found, 270)
	assert.LessOrEqual(t, alarms, 60)
}
