package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/perfbot/perfbot/detect"
)

// repeats is the number of runs a night.
const repeats = 5

// A scenario is one row's kind of series: nights of 5 repeats with
// log-normal noise of CV cv around a level of 1000, and, when at ≥ 0, a
// step of drop (a fraction: 0.05 is −5%) from night at on. A metric of
// these series is better higher, so a drop is a regression. The nights are
// the points the nightly service makes: each repeat of the tip scaled by
// the reference run beside it to the reference's level, 1000 (Point.Level):
// the noise of a repeat is that of the pair.
type scenario struct {
	name   string
	cv     float64
	nights int
	at     int
	drop   float64
	// trials multiplies the row's trials: a row of short series needs more
	// of them for as many nights.
	trials int
	// earlier, when positive, is a first drop (a fraction) earlierBy
	// nights before at: the row scores the second, whose level before it
	// is young.
	earlier   float64
	earlierBy int
}

// youngDropNights are the nights (from 1) of a new series on which the
// young drop rows' 5% drop lands.
var youngDropNights = []int{2, 5, 10, 30}

// Before a drop, 60 quiet nights: more than every strategy's window needs
// (Otava's 50, Perfherder's 24, detect's 30). After it, 30 nights for the
// alert.
const (
	dropAt      = 60
	dropHorizon = 30
)

// youngNights is how long a series is young: the nights before the
// history detector (the CUSUMs, from detect.DefaultWarmup nights) adds
// its sensitivity, watched by the paired test alone.
const youngNights = 20

func scenarios(quietNights int) []scenario {
	var out []scenario
	for _, cv := range []float64{0.01, 0.02, 0.05} {
		out = append(out, scenario{name: fmt.Sprintf("quiet CV %g%%", 100*cv), cv: cv, nights: quietNights, at: -1})
	}
	for _, drop := range []float64{0.03, 0.05, 0.10} {
		out = append(out, scenario{name: fmt.Sprintf("%g%% drop CV 2%%", 100*drop), cv: 0.02,
			nights: dropAt + dropHorizon, at: dropAt, drop: drop})
	}
	// The testbed's b and c on this host: a second, smaller step a week
	// after a first, near the noise of a night (CV 5% of a run, 2.3% of a
	// night's median of 5).
	out = append(out, scenario{name: "5% drop 7 nights after 8%, CV 5%", cv: 0.05,
		nights: dropAt + dropHorizon, at: dropAt, drop: 0.05, earlier: 0.08, earlierBy: 7})
	// Rows added later come last: a row's series are drawn from its place
	// in this list, so that the rows above keep theirs.
	// The first nights of new series alone (a new branch, a new install):
	// as many nights as a quiet row's.
	out = append(out, scenario{name: fmt.Sprintf("quiet CV 2%%, first %d nights", youngNights), cv: 0.02, nights: youngNights, at: -1,
		trials: max(1, quietNights/youngNights)})
	// A drop in the first nights of a new series: detection has the
	// paired comparison of each night and few nights of history.
	for _, night := range youngDropNights {
		out = append(out, scenario{name: fmt.Sprintf("5%% drop on night %d, CV 2%%", night), cv: 0.02,
			nights: night - 1 + dropHorizon, at: night - 1, drop: 0.05})
	}
	return out
}

// series draws one series of sc.
func (sc scenario) series(rng *rand.Rand) []detect.Point {
	start := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	out := make([]detect.Point, sc.nights)
	for i := range out {
		level := 1000.0
		if sc.earlier > 0 && i >= sc.at-sc.earlierBy {
			level *= 1 - sc.earlier
		}
		if sc.at >= 0 && i >= sc.at {
			level *= 1 - sc.drop
		}
		values := make([]float64, repeats)
		for r := range values {
			values[r] = level * math.Exp(sc.cv*rng.NormFloat64())
		}
		out[i] = detect.Point{Time: start.Add(time.Duration(i) * 24 * time.Hour), Commit: fmt.Sprintf("c%04d", i), Values: values,
			Level: 1000, Weight: 1}
	}
	return out
}

// drops are the nights sc's drops land on.
func (sc scenario) drops() []int {
	var out []int
	if sc.earlier > 0 {
		out = append(out, sc.at-sc.earlierBy)
	}
	if sc.at >= 0 {
		out = append(out, sc.at)
	}
	return out
}

// score is one strategy's results over a row's trials.
type score struct {
	nights      int // nights watched in quiet rows
	falseAlarms int // alerts in quiet rows
	trials      int
	detected    int
	delays      []int // nights until the alert, of the detected drops
	placed      int   // detected drops whose change night is the drop's
	ranged      int   // detected drops with a range of nights
	covered     int   // detected drops whose range holds the drop night
}

func (s score) perThousand() float64 { return 1000 * float64(s.falseAlarms) / float64(s.nights) }

func (s score) meanDelay() float64 {
	var sum int
	for _, d := range s.delays {
		sum += d
	}
	return float64(sum) / float64(len(s.delays))
}

func (s score) p90Delay() int {
	d := slices.Clone(s.delays)
	slices.Sort(d)
	return d[int(math.Ceil(0.9*float64(len(d))))-1]
}

// add scores one trial's events. In a quiet series every alert is false;
// after a drop, the first alert of a fall on or after the drop night is
// the detection, and its delay counts the alert's night itself (an alert
// on the first night at the new level is 1 night).
func (s *score) add(sc scenario, events []event) {
	s.trials++
	if sc.at < 0 {
		s.nights += sc.nights
		s.falseAlarms += len(events)
		return
	}
	for _, e := range events {
		if sc.earlier > 0 && e.change < sc.at-2 {
			continue // the first drop's
		}
		if e.night >= sc.at && e.sign < 0 {
			s.detected++
			s.delays = append(s.delays, e.night-sc.at+1)
			if e.change == sc.at {
				s.placed++
			}
			if e.first >= 0 {
				s.ranged++
				if e.first <= sc.at && sc.at <= e.last {
					s.covered++
				}
			}
			return
		}
	}
}

// simulate runs every strategy on the same trials of sc: trial i's series
// is drawn from the seed, the row and i.
func simulate(ctx context.Context, row int, sc scenario, strategies []strategy, trials int, seed uint64) ([]score, error) {
	scores := make([]score, len(strategies))
	for i := range trials * max(sc.trials, 1) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		series := sc.series(rand.New(rand.NewPCG(seed, uint64(row)<<32|uint64(i))))
		for k, st := range strategies {
			events, err := st.run(series, sc.drops())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", st.name, err)
			}
			scores[k].add(sc, events)
		}
	}
	return scores, nil
}
