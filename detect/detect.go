package detect

import (
	"fmt"
	"math"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// Point is one point of a metric's series: the values of one commit
// measured in one night (the night's tip, or a new commit it sampled
// before the tip), already normalized by the caller for the host's speed:
// the caller measures each commit interleaved with a reference commit and
// scales each run by the reference run beside it (see Pair).
type Point struct {
	// Time orders the series; the points of one night (the commits it
	// sampled before its tip) share it.
	Time   time.Time
	Commit string    // the commit measured: the night's tip, or one it sampled
	Values []float64 // the repeats; empty = no successful measurement that night
	// Estimate, when positive, is the point's value as the caller
	// estimated it from the repeats (a best-of-N on a host whose speed
	// flips between states); zero takes the median of Values. Values
	// still give the repeats and their spread.
	Estimate float64
	// Level is the level the reference commit is known at, to which the
	// values were scaled (record.NightMetric.Level); 0 when there is no
	// reference. While no change has been placed since the reference came
	// to that level, a commit like the reference has its values around
	// Level: the paired test of a young series compares them with it.
	Level float64
	// Weight is the weight with which the reference runs' deviation from
	// Level was taken out of the values (record.NightMetric.RefWeight): 1
	// fully, so that Level's own error cancels; with less, part of it
	// stays, and the paired test counts it.
	Weight float64
}

// Alert is a change of a metric's level that detection fired on.
type Alert struct {
	// Direction is record.Regression or record.Improvement, from
	// Config.Better and the sign of the change.
	Direction record.Direction
	// Night is the index into the series of the point at which the alert
	// fired: it was decided with points 0…Night only. (The indexes of an
	// alert are points of the series; a night that sampled commits has
	// several.)
	Night int
	// Change is the index of the first point at the new level; Change ≤
	// Night, and point Change has values.
	Change int
	// GoodNight is the index of the last point with values before
	// Change: Change−1 unless that night has no values.
	GoodNight int
	// Good and Bad are the commits of points GoodNight and Change: the
	// range to bisect.
	Good, Bad string
	// First and Last bound the points the change may have happened on,
	// the smallest set holding 95% of the posterior over the change
	// point: First ≤ Change ≤ Last ≤ Night (see the package doc).
	First, Last int
	// WideGood and WideBad are the commits of the last point with values
	// before First and of point Last: a range to bisect that holds every
	// point the change may be on, at the cost of a few more probes.
	WideGood, WideBad string
	// Before and After are the robust levels: the median of the nights'
	// values (each the median of its repeats) of up to Window nights
	// before Change, and of the nights Change…Night.
	Before, After float64
	// DeltaPct is (After−Before)/Before·100.
	DeltaPct float64
	// Lo and Hi bound DeltaPct with about 95% confidence, from the noise
	// of a night's value that detection estimated (see the package doc).
	Lo, Hi float64
}

// Value is the point's robust value: the median of its Values with the
// distribution-free interval of stats.Summarize at 95% (for fewer than 6
// repeats that is [min, max], which covers the median with lower
// probability: 0.94 for 5). ok is false when the point has no values or
// one that is not positive and finite.
func Value(n Point) (median, lo, hi float64, ok bool) {
	if len(n.Values) == 0 || checkValues(n.Values) != nil {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	s := stats.Summarize(n.Values, 0.95)
	if n.Estimate > 0 {
		return n.Estimate, min(s.Lo, n.Estimate), max(s.Hi, n.Estimate), true
	}
	return s.Median, s.Lo, s.Hi, true
}

// Detect returns the alerts of a series (oldest night first). Nearby
// change points of one change are merged into one alert. It is
// deterministic and pure, and causal: the alerts of series[:k+1] are
// exactly the alerts of series whose Night is at most k. Nights without
// values are skipped. A night whose values are not positive and finite,
// or whose time is not after the previous night's, is an error naming it.
func Detect(series []Point, cfg Config) ([]Alert, error) {
	d, err := NewDetector(cfg)
	if err != nil {
		return nil, err
	}
	var alerts []Alert
	for _, n := range series {
		a, fired, err := d.Add(n)
		if err != nil {
			return nil, err
		}
		if fired {
			alerts = append(alerts, a)
		}
	}
	return alerts, nil
}

// Missing reports the trailing run of nights without values: count, and
// the index of the first of them (-1 if none).
func Missing(series []Point) (count, since int) {
	since = -1
	for i := len(series) - 1; i >= 0 && len(series[i].Values) == 0; i-- {
		count, since = count+1, i
	}
	return count, since
}

// Outage is a trailing run of nights without values long enough to
// report: the metric stopped being measured (a benchmark that began to
// fail, a tip that no longer builds).
type Outage struct {
	// Since is the index of the first night without values, and Nights
	// the length of the run (to the end of the series).
	Since, Nights int
	// LastNight is the index of the last night with values before the
	// run, -1 if the series never had values.
	LastNight int
	// LastCommit is the commit of night LastNight ("" if none) and
	// FirstCommit that of night Since: the range in which the metric
	// broke.
	LastCommit, FirstCommit string
}

// CheckMissing reports the trailing run of nights without values when it
// is at least cfg.MissingNights long.
func CheckMissing(series []Point, cfg Config) (Outage, bool, error) {
	if err := cfg.Validate(); err != nil {
		return Outage{}, false, err
	}
	cfg = cfg.WithDefaults()
	count, since := Missing(series)
	if count < cfg.MissingNights {
		return Outage{}, false, nil
	}
	o := Outage{Since: since, Nights: count, LastNight: since - 1, FirstCommit: series[since].Commit}
	if o.LastNight >= 0 {
		o.LastCommit = series[o.LastNight].Commit
	}
	return o, true, nil
}

// checkNight returns what is wrong with night i, given the night before
// it (the zero Point for the first). Points of one night (its sampled
// commits and its tip) share the night's time; a point twice does not.
func checkNight(i int, n, prev Point) error {
	if i > 0 && (n.Time.Before(prev.Time) || n.Time.Equal(prev.Time) && n.Commit == prev.Commit) {
		return fmt.Errorf("detect: night %d (%s): time %s is not after night %d's (%s); nights must be in time order",
			i, n.Commit, n.Time.Format(time.RFC3339), i-1, prev.Time.Format(time.RFC3339))
	}
	if err := checkValues(n.Values); err != nil {
		return fmt.Errorf("detect: night %d (%s): %w", i, n.Commit, err)
	}
	if n.Estimate < 0 || math.IsNaN(n.Estimate) || math.IsInf(n.Estimate, 0) {
		return fmt.Errorf("detect: night %d (%s): estimate %v; want a positive finite value, or 0 for the median", i, n.Commit, n.Estimate)
	}
	if n.Level < 0 || math.IsNaN(n.Level) || math.IsInf(n.Level, 0) || !(n.Weight >= 0 && n.Weight <= 1) {
		return fmt.Errorf("detect: night %d (%s): level %v, weight %v; want a positive finite level (0 for none) and a weight in [0, 1]", i, n.Commit, n.Level, n.Weight)
	}
	return nil
}

func checkValues(values []float64) error {
	for j, v := range values {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("value %d is %v; values must be positive and finite", j, v)
		}
	}
	return nil
}
