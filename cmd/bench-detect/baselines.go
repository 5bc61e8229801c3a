package main

import (
	"math"
	"slices"

	"github.com/perfbot/perfbot/detect"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// An event is one alert of a strategy: the night it fired on, the night it
// places the change at, the sign of the change (−1 a fall, +1 a rise) and,
// for perfbot, the range of nights it gives the change (else −1, −1).
type event struct {
	night, change int
	sign          float64
	first, last   int
}

// A strategy watches a series night by night and returns its alerts; on
// night k it may use nights 0…k only. drops are the nights the series'
// drops land on: only a strategy that bisects its alerts uses them, as
// the bisection would measure them.
type strategy struct {
	name string
	run  func(series []detect.Point, drops []int) ([]event, error)
}

// perfbotStrategy is detect with its defaults, one night at a time
// (detect.Detector, the same alerts as Detect on every prefix).
func perfbotStrategy() strategy {
	return strategy{name: "perfbot detect", run: func(series []detect.Point, _ []int) ([]event, error) {
		d, err := detect.NewDetector(detect.Config{Better: "higher"})
		if err != nil {
			return nil, err
		}
		var events []event
		for _, n := range series {
			a, fired, err := d.Add(n)
			if err != nil {
				return nil, err
			}
			if fired {
				events = append(events, event{night: a.Night, change: a.Change, sign: math.Copysign(1, a.DeltaPct),
					first: a.First, last: a.Last})
			}
		}
		return events, nil
	}}
}

// watchStrategy is what the nightly service acts on: detect.Watch with
// detection's defaults over the series as nights, each new alert acted on
// the night it is decided, and its job, whose bisection finds the change
// only when the range it bisects holds a drop of the series (a fall from
// the night two before First to night Last, as the service bisects it).
// An alert the bisection does not find is refuted: its first point leaves
// the series, and the alerts that this lets out are seen the night after
// the refuted one.
func watchStrategy() strategy {
	return strategy{name: "perfbot watch", run: func(series []detect.Point, drops []int) ([]event, error) {
		w := detect.Watch{Metric: "m", Config: detect.Config{Better: record.Higher}, Decided: map[string]record.Alert{}}
		for i, p := range series {
			w.Nights = append(w.Nights, record.Night{Seq: uint64(i + 1), Time: p.Time, Tip: p.Commit, Status: record.StatusOK,
				Metrics: map[string]record.NightMetric{"m": {Values: p.Values, Level: p.Level}}})
		}
		var events []event
		seen := 0 // the first night an alert decided next can be seen on
		for {
			calls, err := w.Decide()
			if err != nil {
				return nil, err
			}
			var next *detect.Call
			for i, c := range calls {
				if c.Earlier == nil && (next == nil || c.Night < next.Night) {
					next = &calls[i]
				}
			}
			if next == nil {
				return events, nil
			}
			e := event{night: max(next.Night, seen), change: next.Change, sign: math.Copysign(1, next.DeltaPct), first: next.First, last: next.Last}
			events = append(events, e)
			a := record.Alert{Metric: "m", Direction: next.Direction, Good: next.Good, Bad: next.Bad, Decision: next.Decision,
				Outcome: record.AlertConfirmed}
			if !slices.ContainsFunc(drops, func(d int) bool { return e.sign < 0 && e.first-1 <= d && d <= e.last }) {
				a.Outcome = record.AlertRefuted
				seen = e.night + 1
			}
			w.Decided[next.Key] = a
		}
	}}
}

// perfherder is a Perfherder-style sliding-window t-test as Treeherder's
// perfalert describes it, with windows counted in nights: a candidate
// night j is compared with the nights before it (12, growing up to 24
// while no change has been seen) and the 12 nights from j on, each window
// averaged over all of its nights' repeats with linear weights that favour
// the nights nearest j (weight (n−i)/n for the i-th nearest of n), and
// the variance taken about that weighted mean. A night alerts when |t| >
// 7, its t is at least that of both neighbours, and the averages differ by
// at least 2%. Run nightly, night j can be decided on night j+11, when its
// forward window is full (its right neighbour's t then has 11 nights); as
// in Treeherder, only nights after the last alert are candidates.
type perfherder struct {
	minBack, maxBack, fore int
	t, minPct              float64
}

func perfherderStrategy() strategy {
	p := perfherder{minBack: 12, maxBack: 24, fore: 12, t: 7, minPct: 2}
	return strategy{name: "perfherder t-test", run: func(series []detect.Point, _ []int) ([]event, error) { return p.run(series) }}
}

func (p perfherder) run(series []detect.Point) ([]event, error) {
	var nights [][]float64
	var index []int
	for i, n := range series {
		if len(n.Values) > 0 {
			nights, index = append(nights, n.Values), append(index, i)
		}
	}
	// ts[j] is night j's final t (its forward window full); sinceChange
	// counts the nights before j whose t stayed under the threshold.
	ts := make([]float64, len(nights))
	sinceChange := 0
	lastAlert := -1
	var events []event
	for k := range nights {
		j := k - p.fore + 1
		if j < 1 {
			continue
		}
		back := min(max(sinceChange, p.minBack), p.maxBack)
		t, pct := p.score(nights, j, back, k)
		ts[j] = t
		if t <= p.t {
			sinceChange++
		} else {
			sinceChange = 0
		}
		if j < p.minBack || j <= lastAlert || t <= p.t || math.Abs(pct) < p.minPct || ts[j-1] > t {
			continue
		}
		// The right neighbour's t, with the forward window it has tonight.
		nextBack := min(max(sinceChange, p.minBack), p.maxBack)
		if j+1 <= k {
			if next, _ := p.score(nights, j+1, nextBack, k); next > t {
				continue
			}
		}
		lastAlert = j
		events = append(events, event{night: index[k], change: index[j], sign: math.Copysign(1, pct), first: -1, last: -1})
	}
	return events, nil
}

// score returns |t| and the change in percent of the window averages for
// candidate night j: back nights before it, the nights j…min(j+fore−1, k)
// after.
func (p perfherder) score(nights [][]float64, j, back, k int) (t, pct float64) {
	var prev, next [][]float64
	for i := j - 1; i >= max(0, j-back); i-- {
		prev = append(prev, nights[i])
	}
	for i := j; i <= min(j+p.fore-1, k); i++ {
		next = append(next, nights[i])
	}
	m1, v1, n1 := weighted(prev)
	m2, v2, n2 := weighted(next)
	if n1 == 0 || n2 == 0 || m1 == m2 {
		return 0, 0
	}
	pct = (m2 - m1) / m1 * 100
	if v1 == 0 && v2 == 0 {
		return math.Inf(1), pct
	}
	return math.Abs(m2-m1) / math.Sqrt(v1/float64(n1)+v2/float64(n2)), pct
}

// weighted returns the linearly weighted mean of the windows' values
// (nearest night first), their variance about it and their count.
func weighted(window [][]float64) (mean, variance float64, n int) {
	var sum, weights float64
	for i, values := range window {
		w := float64(len(window)-i) / float64(len(window))
		for _, v := range values {
			sum += w * v
			weights += w
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	mean = sum / weights
	if n < 2 {
		return mean, 0, n
	}
	for _, values := range window {
		for _, v := range values {
			variance += (v - mean) * (v - mean)
		}
	}
	return mean, variance / float64(n-1), n
}

// otava is an Otava-style e-divisive: each night, stats.ChangePoints
// (E-divisive means with Otava's split/merge t-tests, max p 0.001) over
// the medians of the last 50 nights. A change point is new, and alerts,
// when no change point already alerted lies within 5 nights of it.
type otava struct {
	window, dedupe int
	maxP           float64
}

func otavaStrategy() strategy {
	o := otava{window: 50, dedupe: 5, maxP: 0.001}
	return strategy{name: "otava e-divisive", run: func(series []detect.Point, _ []int) ([]event, error) { return o.run(series) }}
}

func (o otava) run(series []detect.Point) ([]event, error) {
	var medians []float64
	var index []int
	for i, n := range series {
		if len(n.Values) > 0 {
			medians, index = append(medians, stats.Median(n.Values)), append(index, i)
		}
	}
	var seen []int
	var events []event
	for k := range medians {
		from := max(0, k+1-o.window)
		window := medians[from : k+1]
		cps := stats.ChangePoints(window, o.maxP, 0)
		for c, cp := range cps {
			at := cp + from
			if near(seen, at, o.dedupe) {
				continue
			}
			seen = append(seen, at)
			lo, hi := 0, len(window)
			if c > 0 {
				lo = cps[c-1]
			}
			if c+1 < len(cps) {
				hi = cps[c+1]
			}
			sign := math.Copysign(1, stats.Mean(window[cp:hi])-stats.Mean(window[lo:cp]))
			events = append(events, event{night: index[k], change: index[at], sign: sign, first: -1, last: -1})
		}
	}
	return events, nil
}

func near(points []int, at, gap int) bool {
	for _, p := range points {
		if at-p <= gap && p-at <= gap {
			return true
		}
	}
	return false
}
