package detect

import (
	"math"

	"github.com/perfbot/perfbot/stats"
)

// The paired test of a young series (see young).
const (
	// youngLimit is the most a run of nights must lie beyond the level, in
	// estimated standard deviations of its mean (a Student t), to alarm;
	// with more degrees of freedom the limit is that of youngP, when that
	// is less.
	youngLimit = 4.3
	// youngP is the one-sided p-value of the t a run of nights must reach
	// once the repeats of the nights so far tell the noise well.
	youngP = 1e-4
	// youngLean is the t each night of a run of two or more must reach on
	// its own, the same way: a run is not one outlying night and others
	// at the level.
	youngLean = 1.5
	// youngDF is the fewest degrees of freedom of the noise the test
	// needs: one night of five repeats.
	youngDF = 4
)

// young tests night t while the series has fewer than Warmup nights with
// values, too few for the noise between nights and so for the CUSUMs.
//
// Every point was measured beside the reference, its values scaled to the
// level the reference is known at (Point.Level): while no change has been
// placed since the reference came to that level, a commit like the
// reference has its values around Level, so the level needs no nights of
// history, and the noise of a night's value is what its repeats show,
// pooled over the nights so far (a Student t with their degrees of
// freedom). After a change, or without a level, the level is the median
// of the current level's nights before the run, with its own error.
//
// The run of the last k nights (k = 1…MinLevel, all after the level's
// first) alarms when its mean lies beyond the limit (youngLimit, or the t
// of youngP when that is less) and MinEffect from the level, each of its
// nights leaning the same way (youngLean): one night far off alarms at
// once, two or more nights less far together. A level younger than
// MinLevel nights after a change is tested only in that change's
// direction, as forming does.
func (d *Detector) young(t int) (Alert, bool) {
	if d.df < youngDF {
		return Alert{}, false
	}
	sigma := max(math.Sqrt(d.ss/float64(d.df)), d.cfg.MinSigma)
	df := float64(d.df)
	limit := youngLimit
	if q := stats.StudentQuantile(1-youngP, df); q < limit {
		limit = q
	}
	forming := d.prevChange == d.level && d.prevChange >= 0 && t-d.level < d.cfg.MinLevel
	for k := 1; k <= d.cfg.MinLevel; k++ {
		from := t - k + 1
		if from <= d.level {
			break
		}
		mu, baseVar, ok := d.youngLevel(from, sigma)
		if !ok {
			break
		}
		sign, mean, meanVar, leans := 0.0, 0.0, 0.0, true
		for j := from; j <= t; j++ {
			x := d.nights[j]
			v := sigma * sigma * medianVariance(len(x.logs))
			dev := x.y - mu
			if j == from {
				sign = math.Copysign(1, dev)
			}
			if k > 1 && sign*dev/math.Sqrt(v+baseVar) < youngLean {
				leans = false
				break
			}
			mean += dev / float64(k)
			meanVar += v / float64(k*k)
		}
		if !leans || forming && sign != d.prevSign {
			continue
		}
		sd := math.Sqrt(meanVar + baseVar)
		if sign*mean/sd <= limit || sign*math.Expm1(mean) < d.cfg.MinEffect {
			continue
		}
		return d.youngAlarm(sign, from, t, mu, sigma, baseVar)
	}
	return Alert{}, false
}

// youngLevel returns the log level the paired test compares the nights
// from on with, and the variance of its error: the reference's level
// while it holds for the current level (the error of Level that the
// reference runs' weight leaves in the values), else the median of the
// current level's nights before from.
func (d *Detector) youngLevel(from int, sigma float64) (mu, variance float64, ok bool) {
	x := d.nights[from]
	if d.anchored(from) {
		w := 1 - x.weight
		return math.Log(x.level), w * w * sigma * sigma * medianVariance(len(x.logs)), true
	}
	if from-d.level < 1 {
		return 0, 0, false
	}
	ys := make([]float64, 0, from-d.level)
	for _, n := range d.nights[d.level:from] {
		ys = append(ys, n.y)
	}
	return stats.Median(ys), sigma * sigma * medianVariance(len(x.logs)) * medianVariance(len(ys)), true
}

// youngAlarm places the change of the paired test's alarm at night t, on
// the run of nights from on that lies beyond the level mu, and returns
// its alert, unless the nights from the change on are less than
// MinEffect from the level. The level restarts at the change.
func (d *Detector) youngAlarm(sign float64, from, t int, mu, sigma, baseVar float64) (Alert, bool) {
	x := d.nights[t]
	sd := math.Sqrt(sigma*sigma*medianVariance(len(x.logs)) + baseVar)
	d.base.mu = mu
	c := side{sign: sign, start: from}
	p := d.place(&c, t, sd)
	tau := p.at
	after := d.values(tau, t+1)
	a := stats.Median(after)
	b := math.Exp(mu)
	if n := tau - max(d.level, tau-d.cfg.Window); !d.anchored(tau) && n > 0 {
		b = stats.Median(d.values(tau-n, tau))
	}
	rel := a/b - 1
	if sign*rel < d.cfg.MinEffect {
		return Alert{}, false
	}
	lr := math.Log(a / b)
	se := math.Sqrt(sigma*sigma*medianVariance(len(x.logs))*medianVariance(len(after)) + baseVar)
	return d.fire(d.alert(sign, t, p, b, a, lr, se), tau, sign)
}

// anchored reports whether night i's Level is the level of the current
// level's nights: the reference came to it (at anchorAt) with no change
// placed since, and night i has it.
func (d *Detector) anchored(i int) bool {
	return d.nights[i].level > 0 && d.level <= d.anchorAt && d.anchorAt <= i
}
