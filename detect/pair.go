package detect

import (
	"math"
	"slices"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// Alone is the point of metric values of a commit measured without a
// reference beside it (a series' first night, or a night whose reference
// no longer builds): its values as they ran, and their median the level
// the reference is known at from then on.
func Alone(tip []float64) record.NightMetric {
	return record.NightMetric{Tip: tip, Level: stats.Median(tip), Values: slices.Clone(tip)}
}

// Pair is the point of one metric of a commit measured beside the
// reference: tip are its runs and ref the reference runs beside them (run
// i of the tip right after run i of the reference), level the level the
// reference is known at. Each tip run is scaled by the reference run
// beside it to that level, with the weight the metric's pairs of the past
// nights and tonight's give it (RefWeight), so that a host that runs 30%
// slower tonight does not look like a regression. With cfg.Best the
// point's Estimate is level × best(tip) / best(ref). It is false when the
// tip or the reference has no runs or the level is not positive.
func Pair(past []record.Night, metric string, tip, ref []float64, level float64, cfg Config) (record.NightMetric, bool) {
	if len(tip) == 0 || len(ref) == 0 || !(level > 0) {
		return record.NightMetric{}, false
	}
	w := refWeight(past, metric, tip, ref, level)
	nm := record.NightMetric{Tip: tip, Ref: ref, Level: level, RefWeight: w, Values: scaled(tip, ref, level, w)}
	if cfg.Best {
		nm.Estimate = level * best(tip, cfg.Better) / best(ref, cfg.Better)
	}
	return nm, true
}

// minWeightPairs is the fewest pairs of runs (tip and reference) from
// which refWeight estimates a metric's weight; with fewer it is 1.
const minWeightPairs = 15

// refWeight is how much of the reference runs' deviation from their level
// to take out of the tip runs beside them, for metric: the weight that
// makes the scaled tip's variance least, Cov(tip, ref)/Var(ref) in log
// values, over the pairs of every recorded night and tonight's, clamped
// to [0, 1]. Scaling pays when the two move together and costs when they
// do not: a host whose speed changes from night to night, or flips from
// one run to the next, moves tip and reference tok/s alike (about 1),
// while a ratio within one run (verify time over decode time) does not
// follow the host, and dividing by the reference only adds the
// reference's noise to it (about 0).
//
// The covariance has two parts. Within a night, each pair's deviations
// from the night's medians are multiplied (a run-to-run flip of the host
// shared by a pair). Between nights, the tip and the reference of one
// night share the night's host, so the covariance is the part of the
// spread of the reference's nightly medians about its level that their
// within-night noise does not explain. Deviations are clipped at three
// robust standard deviations, so that one outlying run does not set the
// weight. With fewer than minWeightPairs pairs the weight is 1: each run
// scaled by its pair.
func refWeight(past []record.Night, metric string, tip, ref []float64, level float64) float64 {
	type night struct {
		x, y  []float64 // within-night deviations of the pairs' logs
		shift float64   // the reference's median log less its level's
	}
	var nights []night
	var all []float64
	add := func(t, r []float64, lvl float64) {
		if len(t) != len(r) || len(t) < 3 || !(lvl > 0) || slices.ContainsFunc(t, nonPositive) || slices.ContainsFunc(r, nonPositive) {
			return
		}
		lt, lr := stats.Logs(t), stats.Logs(r)
		mt, mr := stats.Median(lt), stats.Median(lr)
		n := night{shift: mr - math.Log(lvl)}
		for i := range lt {
			n.x, n.y = append(n.x, lt[i]-mt), append(n.y, lr[i]-mr)
		}
		nights = append(nights, n)
		all = append(all, n.y...)
	}
	for _, n := range past {
		if nm, ok := n.Metrics[metric]; ok {
			add(nm.Tip, nm.Ref, nm.Level)
		}
	}
	add(tip, ref, level)
	if len(all) < minWeightPairs {
		return 1
	}
	sigma := stats.MAD(all) // a run's noise within a night
	c := 3 * sigma
	clip := func(v float64) float64 { return min(max(v, -c), c) }
	var cov, vr float64
	for _, n := range nights {
		k := float64(len(n.y))
		for i := range n.y {
			cov += clip(n.x[i]) * clip(n.y[i])
			vr += clip(n.y[i]) * clip(n.y[i])
		}
		// A median of k runs varies by about π/2·σ²/k from night to night.
		noise := math.Pi / 2 * sigma * sigma / k
		cov += k * max(0, n.shift*n.shift-noise)
		vr += k * n.shift * n.shift
	}
	if vr == 0 {
		return 1
	}
	return min(max(cov/vr, 0), 1)
}

func nonPositive(v float64) bool { return !(v > 0) || math.IsInf(v, 1) }

// scaled returns the tip's values at the reference's level, the
// reference's deviation taken out with weight w (see refWeight). Run i
// of the tip was taken right after run i of the reference, so each is
// scaled by its own pair: a host whose speed flips between states every
// second or two puts most pairs in one state, and the median of the
// pairs' ratios stays put where the ratio of the two medians jumps with
// the share of fast runs on each side. Without pairs (a run without the
// metric) the tip is scaled by the reference's median.
func scaled(tip, ref []float64, level, w float64) []float64 {
	out := make([]float64, len(tip))
	if len(tip) != len(ref) {
		scale := math.Pow(level/stats.Median(ref), w)
		for i, v := range tip {
			out[i] = v * scale
		}
		return out
	}
	for i, v := range tip {
		out[i] = v * math.Pow(level/ref[i], w)
	}
	return out
}

// best is the best of the runs: the highest of a higher-is-better metric,
// the lowest of a lower-is-better one.
func best(vs []float64, better record.Better) float64 {
	if better == record.Lower {
		return slices.Min(vs)
	}
	return slices.Max(vs)
}
