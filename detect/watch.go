package detect

import (
	"fmt"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// Watch is detection over one metric's nights as the nightly service
// keeps them: it reads the metric's series from the nights, detects, and
// decides what each alert asks of the service, given what earlier nights
// decided and what the jobs they enqueued found. It is pure: the service
// measures and records the nights, stores the decisions and acts on them.
type Watch struct {
	Metric string
	Config Config
	// Nights are the nights of the branch, oldest first: those whose tip
	// is on its current first-parent chain.
	Nights []record.Night
	// Decided are the alerts earlier nights decided on, by key
	// (record.AlertKey), with what their jobs found (Outcome).
	Decided map[string]record.Alert
}

// A Call is one alert of the metric's series and what the nights decide
// about it.
type Call struct {
	Alert // its indexes are points of Series(Nights, Metric)
	Key   string
	// Decision is act, noted or wait for a new alert (Earlier is nil), or
	// transient when its later nights went back to the old level; for an
	// alert decided on an earlier night, what was decided then, or refuted
	// when its job did not see the change.
	Decision record.Decision
	// Earlier is the alert as an earlier night decided it; nil for a new
	// one.
	Earlier *record.Alert
	// Tonight is set when the alert fired on the last point: the last
	// night's.
	Tonight bool
	// ChangeNight is the index in Nights of the night of the change's
	// first point.
	ChangeNight int
	// EarlyGood is the commit of the second point with values before
	// First: a range from there also holds a change whose first night
	// landed at the old level (a build that came out fast), which places
	// the change a night late.
	EarlyGood string
	// LateBad is the commit of the last point with values of point
	// Last's night (its tip, unless the tip did not measure): a range to
	// there also holds a change that a sampled commit of that night,
	// measured a few runs like every point, showed a commit early.
	LateBad string
}

// Decide returns the calls of the metric's series, in the order the
// alerts fire.
//
// An alert that earlier nights judged transient, or whose job refuted it
// (its bisection measured the ends again and did not show the change),
// and a new alert whose later nights are back at the old level, are
// rejected: the level does not restart at the change, the CUSUMs start
// again from zero, and the change's first point leaves the series. Such a
// point is an outlier (a build can land a third faster or slower than the
// next commit's), and left in, it would restart the level at itself and
// hide a real change of the nights after it; and the nights of an
// excursion that the bisection found to be no change are not summed into
// another alarm the next night.
//
// A new alert waits until Config.ConfirmNights points follow its first,
// and is acted on when their median lies past the midpoint of the two
// levels, on the new level's side. With the median on the old side it
// waits one night more, and is transient when that night does not bring
// the median across either. A real change judged transient is not lost:
// its later nights stay in the series, so detection alerts again from the
// next one.
func (w Watch) Decide() ([]Call, error) {
	pts, at := Series(w.Nights, w.Metric)
	d, err := NewDetector(w.Config)
	if err != nil {
		return nil, fmt.Errorf("detect %s: %w", w.Metric, err)
	}
	var calls []Call
	d.reject = func(a Alert) bool {
		c := w.call(a, pts, at)
		calls = append(calls, c)
		if c.Decision != record.DecisionTransient && c.Decision != record.DecisionRefuted {
			return false
		}
		pts[a.Change].Values, pts[a.Change].Estimate = nil, 0
		return true
	}
	for _, p := range pts {
		if _, _, err := d.Add(p); err != nil {
			return nil, fmt.Errorf("detect %s: %w", w.Metric, err)
		}
	}
	return calls, nil
}

// call decides alert a of series pts.
func (w Watch) call(a Alert, pts []Point, at []int) Call {
	c := Call{Alert: a, Key: record.AlertKey(w.Metric, a.Direction, a.Good, a.Bad), Tonight: a.Night == len(pts)-1,
		ChangeNight: at[a.Change], EarlyGood: pointBefore(pts, a.First, 2), LateBad: lastOfNight(pts, at, a.Last)}
	if e, ok := w.Decided[c.Key]; ok {
		c.Earlier = &e
		c.Decision = e.Decision
		if e.Outcome == record.AlertRefuted {
			c.Decision = record.DecisionRefuted
		}
		return c
	}
	switch hold(a, pts, w.Config.ConfirmNights) {
	case holdWait:
		c.Decision = record.DecisionWait
	case holdTransient:
		c.Decision = record.DecisionTransient
	case holdAct:
		c.Decision = record.DecisionAct
		if a.Direction == record.Improvement && w.Config.NoteImprovements {
			c.Decision = record.DecisionNoted
		}
	}
	return c
}

// Series is the metric's series of the nights: each night's sampled
// commits that measured, then its tip (a point without values when the
// tip did not measure). at[i] is the index in nights of point i's night.
func Series(nights []record.Night, metric string) (pts []Point, at []int) {
	pts = make([]Point, 0, len(nights))
	for i, n := range nights {
		for _, s := range n.Sampled {
			if m, ok := s.Metrics[metric]; ok && s.Status == record.StatusOK {
				pts = append(pts, point(n, s.Commit, m))
				at = append(at, i)
			}
		}
		pts = append(pts, point(n, n.Tip, n.Metrics[metric]))
		at = append(at, i)
	}
	return pts, at
}

// Tips is the metric's series of the nights' tips alone.
func Tips(nights []record.Night, metric string) []Point {
	out := make([]Point, 0, len(nights))
	for _, n := range nights {
		out = append(out, point(n, n.Tip, n.Metrics[metric]))
	}
	return out
}

// point is the point of one commit's metric m in night n.
func point(n record.Night, commit string, m record.NightMetric) Point {
	p := Point{Time: n.Time, Commit: commit, Values: m.Values, Estimate: m.Estimate, Level: max(m.Level, 0), Weight: min(max(m.RefWeight, 0), 1)}
	if len(m.Ref) == 0 {
		p.Weight = 1 // measured alone: its values are the level's own runs
	}
	return p
}

// pointBefore is the commit of the k-th point with values before point i
// of pts, or "" when there is none.
func pointBefore(pts []Point, i, k int) string {
	for j := i - 1; j >= 0; j-- {
		if _, _, _, ok := Value(pts[j]); !ok {
			continue
		}
		if k--; k == 0 {
			return pts[j].Commit
		}
	}
	return ""
}

// lastOfNight is the commit of the last point with values of point i's
// night (point i's own when no later one has values).
func lastOfNight(pts []Point, at []int, i int) string {
	last := pts[i].Commit
	for j := i + 1; j < len(pts) && at[j] == at[i]; j++ {
		if _, _, _, ok := Value(pts[j]); ok {
			last = pts[j].Commit
		}
	}
	return last
}

// What the points after a new alert's first say of it.
type holdVerdict int

const (
	holdAct       holdVerdict = iota // they agree: act on it
	holdWait                         // too few yet: decide on a later night
	holdTransient                    // they are back at the old level
)

// hold judges alert a by the points of pts after its first at the new
// level (see Decide).
func hold(a Alert, pts []Point, confirm int) holdVerdict {
	if confirm <= 0 {
		return holdAct
	}
	var after []float64
	for _, n := range pts[a.Change+1:] {
		if v, _, _, ok := Value(n); ok {
			after = append(after, v)
		}
	}
	if len(after) < confirm {
		return holdWait
	}
	mid := (a.Before + a.After) / 2
	if (stats.Median(after) > mid) == (a.After > a.Before) {
		return holdAct
	}
	if len(after) > confirm {
		return holdTransient
	}
	return holdWait
}
