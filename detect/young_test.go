package detect

import (
	"testing"

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
		t.Run(tc.name, func(t *testing.T) {
			alerts, err := Detect(tc.series, tc.cfg)
			require.NoError(t, err)
			require.Len(t, alerts, len(tc.want), "alerts %+v", alerts)
			for i, w := range tc.want {
				a := alerts[i]
				assert.Equal(t, w.dir, a.Direction, "alert %d", i)
				if w.near {
					assert.True(t, a.First <= w.change && w.change <= a.Last, "alert %d: %+v", i, a)
				} else {
					assert.Equal(t, w.change, a.Change, "alert %d", i)
				}
				assert.GreaterOrEqual(t, a.Night, w.night, "alert %d", i)
				assert.LessOrEqual(t, a.Night, w.nightHi, "alert %d", i)
				assertConsistent(t, tc.series, a)
			}
		})
	}
}

// TestYoungAccuracy states what the paired test of a young series does
// with detection's defaults on seeded series of 5 repeats a night at 2%
// noise: a 5% drop landing on night 2, 5 or 10 of a new series is found
// in each of 200 series, alerted within 1.5 nights on average (the night
// it lands counts 1), and the first 20 nights of 500 quiet series raise
// at most 1 alarm per 1,000 nights (8 in these 10,000; about 0.4 per
// 1,000 over 300,000).
func TestYoungAccuracy(t *testing.T) {
	cfg := Config{Better: record.Higher}
	alarms := 0
	for i := range uint64(500) {
		alerts, err := Detect(paired(9000+i, 20, 0.02), cfg)
		require.NoError(t, err)
		alarms += len(alerts)
	}
	assert.LessOrEqual(t, alarms, 10, "alarms in the first 20 nights of 500 quiet series")

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
