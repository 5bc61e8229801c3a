package detect

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// recorded turns a series into the nights the nightly service records,
// one point a night, the point its tip, of metric "m".
func recorded(series []Point) []record.Night {
	nights := make([]record.Night, len(series))
	for i, p := range series {
		nights[i] = record.Night{Seq: uint64(i + 1), Time: p.Time, Tip: p.Commit, Status: record.StatusOK,
			Metrics: map[string]record.NightMetric{"m": {Values: p.Values, Level: 1000}}}
	}
	return nights
}

// earlier is an alert an earlier night decided on: the change at point
// change (its range the points before it and at it).
type earlier struct {
	dir      record.Direction
	change   int
	decision record.Decision
	outcome  record.AlertOutcome
}

// call is an expected call: its decision, its change's night, and whether
// it fired on the last night and was decided before.
type call struct {
	decision record.Decision
	night    int
	tonight  bool
	earlier  bool
}

func TestWatchScenarios(t *testing.T) {
	higher := Config{Better: record.Higher}
	confirm := Config{Better: record.Higher, ConfirmNights: 1}
	note := Config{Better: record.Higher, NoteImprovements: true}
	drop := nightly(2, 61, 0.01, step{60, 0.95})
	outlier := timesAt(nightly(10, 63, 0.01), 60, 0.9) // two nights after it: one waits, two decide
	tests := []struct {
		name    string
		series  []Point
		cfg     Config
		earlier []earlier
		want    []call
	}{
		{name: "a quiet branch", series: nightly(1, 100, 0.01), cfg: higher},
		{name: "a drop is acted on the night it shows", series: drop, cfg: higher,
			want: []call{{record.DecisionAct, 60, true, false}}},
		{name: "a rise is noted when improvements are", series: nightly(3, 61, 0.01, step{60, 1.05}), cfg: note,
			want: []call{{record.DecisionNoted, 60, true, false}}},
		{name: "a drop is acted on when improvements are noted", series: drop, cfg: note,
			want: []call{{record.DecisionAct, 60, true, false}}},
		{name: "confirm nights: the first night waits", series: drop, cfg: confirm,
			want: []call{{record.DecisionWait, 60, true, false}}},
		{name: "confirm nights: the next night agrees", series: nightly(2, 62, 0.01, step{60, 0.95}), cfg: confirm,
			want: []call{{record.DecisionAct, 60, false, false}}},
		{name: "confirm nights: one outlying night waits, then leaves the series", series: outlier, cfg: confirm,
			want: []call{{record.DecisionTransient, 60, false, false}}},
		{name: "acted on before, seen again tonight", series: drop, cfg: higher,
			earlier: []earlier{{record.Regression, 60, record.DecisionAct, ""}},
			want:    []call{{record.DecisionAct, 60, true, true}}},
		{name: "acted on before, its job confirmed it", series: nightly(2, 70, 0.01, step{60, 0.95}), cfg: higher,
			earlier: []earlier{{record.Regression, 60, record.DecisionAct, record.AlertConfirmed}},
			want:    []call{{record.DecisionAct, 60, false, true}}},
		{name: "refuted by its job: the outlier leaves and the change after it shows",
			series: timesAt(nightly(4, 66, 0.01, step{63, 0.93}), 60, 0.9), cfg: higher,
			earlier: []earlier{{record.Regression, 60, record.DecisionAct, record.AlertRefuted}},
			want:    []call{{record.DecisionRefuted, 60, false, true}, {record.DecisionAct, 63, false, false}}},
		{name: "transient on an earlier night stays out", series: outlier, cfg: confirm,
			earlier: []earlier{{record.Regression, 60, record.DecisionTransient, ""}},
			want:    []call{{record.DecisionTransient, 60, false, true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Watch{Metric: "m", Config: tc.cfg, Nights: recorded(tc.series), Decided: map[string]record.Alert{}}
			for _, e := range tc.earlier {
				a := record.Alert{Metric: "m", Direction: e.dir, Good: tc.series[e.change-1].Commit, Bad: tc.series[e.change].Commit,
					Night: uint64(e.change + 1), Decision: e.decision, Outcome: e.outcome, Job: fmt.Sprintf("alert-%d", e.change)}
				w.Decided[a.Key()] = a
			}
			calls, err := w.Decide()
			require.NoError(t, err)
			require.Len(t, calls, len(tc.want), "calls %+v", calls)
			for i, want := range tc.want {
				c := calls[i]
				assert.Equal(t, want.decision, c.Decision, "call %d", i)
				assert.Equal(t, want.night, c.ChangeNight, "call %d", i)
				assert.Equal(t, want.tonight, c.Tonight, "call %d", i)
				assert.Equal(t, want.earlier, c.Earlier != nil, "call %d", i)
				assert.Equal(t, record.AlertKey("m", c.Direction, c.Good, c.Bad), c.Key)
				if c.Earlier != nil {
					assert.Equal(t, w.Decided[c.Key], *c.Earlier)
				}
			}
		})
	}
}

// A night that sampled one of its new commits has two points: the
// sampled commit's, then the tip's. A change between them is placed at
// the tip's point, and its night is the night of both.
func TestWatchSampledCommits(t *testing.T) {
	series := nightly(5, 2*70, 0.01, step{2*60 + 1, 0.95}) // point 121: night 60's tip
	var nights []record.Night
	for i := 0; i+1 < len(series); i += 2 {
		s, tip := series[i], series[i+1]
		nights = append(nights, record.Night{Seq: uint64(len(nights) + 1), Time: s.Time, Tip: tip.Commit, Status: record.StatusOK,
			Metrics: map[string]record.NightMetric{"m": {Values: tip.Values}},
			Sampled: []record.NightCommit{{Commit: s.Commit, Status: record.StatusOK, Metrics: map[string]record.NightMetric{"m": {Values: s.Values}}}}})
	}
	pts, at := Series(nights, "m")
	require.Len(t, pts, len(series))
	assert.Equal(t, series[121].Commit, pts[121].Commit)
	assert.Equal(t, 60, at[121])
	assert.Len(t, Tips(nights, "m"), len(nights))

	calls, err := Watch{Metric: "m", Config: Config{Better: record.Higher}, Nights: nights}.Decide()
	require.NoError(t, err)
	require.Len(t, calls, 1, "%+v", calls)
	assert.Equal(t, 60, calls[0].ChangeNight)
	assert.Equal(t, series[120].Commit, calls[0].Good, "the sampled commit of the same night")
	assert.Equal(t, series[121].Commit, calls[0].Bad)
}

// A night's sampled commits are measured a few runs each, like its tip:
// one sampled before the change can show it by chance, and detection then
// places the change, and the last night it may lie on, a commit early.
// The tip of that night (LateBad) bounds a range that holds it.
func TestWatchLateBad(t *testing.T) {
	const perNight = 3 // two sampled commits, then the tip
	series := nightly(7, perNight*70, 0.01, step{perNight*60 + 1, 0.95})
	series = timesAt(series, perNight*60, 0.95) // the first sampled commit of night 60 looks changed
	var nights []record.Night
	for i := 0; i+perNight-1 < len(series); i += perNight {
		tip := series[i+perNight-1]
		n := record.Night{Seq: uint64(len(nights) + 1), Time: tip.Time, Tip: tip.Commit, Status: record.StatusOK,
			Metrics: map[string]record.NightMetric{"m": {Values: tip.Values}}}
		for _, s := range series[i : i+perNight-1] {
			n.Sampled = append(n.Sampled, record.NightCommit{Commit: s.Commit, Status: record.StatusOK, Metrics: map[string]record.NightMetric{"m": {Values: s.Values}}})
		}
		nights = append(nights, n)
	}
	calls, err := Watch{Metric: "m", Config: Config{Better: record.Higher}, Nights: nights}.Decide()
	require.NoError(t, err)
	require.Len(t, calls, 1, "%+v", calls)
	c := calls[0]
	index := func(commit string) int {
		return slices.IndexFunc(series, func(p Point) bool { return p.Commit == commit })
	}
	require.Equal(t, perNight*60, index(c.WideBad), "the scenario: the change's last possible point is the sampled commit before it")
	assert.Equal(t, series[perNight*60+2].Commit, c.LateBad, "the tip of that night")
	assert.Less(t, index(c.WideGood), perNight*60+1)
}

// An alert its job refuted is no change: the nights of the excursion that
// raised it are not summed into another alarm the next night, and the
// next, as they were when only its first point left the series (a noisy
// metric then had a bisection a night for a week). On quiet series at 5%
// noise a run, the alerts the nights act on, each refuted, are no more
// than detection's own.
func TestWatchRefutedExcursionsDoNotCascade(t *testing.T) {
	acted, detected := 0, 0
	for seed := range uint64(40) {
		series := nightly(20000+seed, 1000, 0.05)
		alerts, err := Detect(series, Config{Better: record.Higher})
		require.NoError(t, err)
		detected += len(alerts)
		w := Watch{Metric: "m", Config: Config{Better: record.Higher}, Nights: recorded(series), Decided: map[string]record.Alert{}}
		for {
			calls, err := w.Decide()
			require.NoError(t, err)
			i := slices.IndexFunc(calls, func(c Call) bool { return c.Earlier == nil })
			if i < 0 {
				break
			}
			acted++
			c := calls[i]
			w.Decided[c.Key] = record.Alert{Metric: "m", Direction: c.Direction, Good: c.Good, Bad: c.Bad, Decision: c.Decision, Outcome: record.AlertRefuted}
		}
	}
	t.Logf("%d alerts acted on and refuted, %d detected, in 40,000 quiet nights", acted, detected)
	assert.LessOrEqual(t, acted, detected)
}
