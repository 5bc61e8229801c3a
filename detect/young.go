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
	youngLimit = 4.1
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
	// youngScaleDiffs is the number of successive differences between
	// repeats from which the noise is stats.Scale's, robust to outlying
	// runs, rather than the repeats' standard deviation.
	youngScaleDiffs = 60
)

// young tests night t while the series has fewer than Warmup nights with
// values, too few for the noise between nights and so for the CUSUMs.
//
// Every point was measured beside the reference, its values scaled to the
// level the reference is known at (Point.Level): while no change has been
// placed since the reference came to that level, a commit like the
// reference has its values around Level, so the level needs no nights of
// history (youngLevel), and the noise of a night's value is what its
// repeats show, pooled over the nights so far, and what the differences
// between the nights show once there are a few (youngNoise,
// youngBetween): a Student t with their degrees of freedom. After a
// change, or without a level, the level is the median of the current
// level's nights before the run, with its own error.
//
// The run of the last k nights (k = 1…MinLevel, all after the level's
// first) alarms when its mean lies beyond the limit (youngLimit, or the t
// of youngP when that is less) and MinEffect from the level, each of its
// nights leaning the same way (youngLean): one night far off alarms at
// once, two or more nights less far together. A level younger than
// MinLevel nights after a change is tested only in that change's
// direction, as forming does.
func (d *Detector) young(t int) (Alert, bool) {
	sigma, df := d.youngNoise()
	if df < youngDF {
		return Alert{}, false
	}
	forming := d.prevChange == d.level && d.prevChange >= 0 && t-d.level < d.cfg.MinLevel
	for k := 1; k <= d.cfg.MinLevel; k++ {
		from := t - k + 1
		if from <= d.level {
			break
		}
		nz := noise{run: sigma, runDF: df}
		nz.between, nz.betweenDF = d.youngBetween(from)
		limit := min(youngLimit, stats.StudentQuantile(1-youngP, nz.runDF+nz.betweenDF))
		mu, baseVar, ok := d.youngLevel(from, nz)
		if !ok {
			break
		}
		sign, mean, meanVar, leans := 0.0, 0.0, 0.0, true
		for j := from; j <= t; j++ {
			x := d.nights[j]
			v := nz.night(len(x.logs))
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
		return d.youngAlarm(sign, from, t, mu, nz, baseVar)
	}
	return Alert{}, false
}

// noise is what the paired test knows of the noise: the standard
// deviation of one repeat's log, and of a night's value from the
// differences between nights, each with its degrees of freedom.
type noise struct {
	run, runDF         float64
	between, betweenDF float64
}

// night returns the variance of the log value of a night of n repeats:
// the repeats' estimate pooled with the nights' by their degrees of
// freedom. On a host whose runs flip between states the nights tell the
// noise of a median better than the repeats' spread does, and the nights
// hold what varies only from night to night (a build that lands fast or
// slow); on a quiet host both tell the same, and pooled they tell it
// with more certainty.
func (nz noise) night(n int) float64 {
	within := nz.run * nz.run * medianVariance(n)
	if nz.betweenDF == 0 {
		return within
	}
	return (nz.runDF*within + nz.betweenDF*nz.between*nz.between) / (nz.runDF + nz.betweenDF)
}

// youngBetweenDiffs is the fewest successive differences between nights
// from which the paired test reads the noise between nights too.
const youngBetweenDiffs = 5

// youngBetween returns the standard deviation of a night's value from the
// successive differences of the nights before night from (betweenScale),
// with its degrees of freedom (two thirds of the differences': each night
// is in two of them); zero when there are fewer than youngBetweenDiffs.
func (d *Detector) youngBetween(from int) (sigma, df float64) {
	if from-1 < youngBetweenDiffs {
		return 0, 0
	}
	diffs := make([]float64, 0, from-1)
	for i := 1; i < from; i++ {
		diffs = append(diffs, math.Abs(d.nights[i].y-d.nights[i-1].y))
	}
	return betweenScale(diffs), 2 * float64(len(diffs)) / 3
}

// youngNoise returns the standard deviation of one repeat's log, and its
// degrees of freedom: while the nights are few, the repeats' spread about
// their night's mean, pooled; from youngScaleDiffs successive differences
// on, stats.Scale of the nights' repeats, with the degrees of freedom of
// its efficiency (a third of the differences'). A host whose speed flips
// between states puts a run or two of many nights far off, which
// inflates the standard deviation, and so the noise the test reads, well
// beyond the noise of the nights' medians; Scale holds.
func (d *Detector) youngNoise() (sigma, df float64) {
	if d.df < youngScaleDiffs {
		if d.df == 0 {
			return 0, 0
		}
		return max(math.Sqrt(d.ss/float64(d.df)), d.cfg.MinSigma), float64(d.df)
	}
	groups := make([][]float64, 0, len(d.nights))
	for _, x := range d.nights {
		groups = append(groups, x.logs)
	}
	return max(stats.Scale(groups), d.cfg.MinSigma), float64(d.df) / 3
}

// youngLevel returns the log level the paired test compares the nights
// from on with, and the variance of its error. While the reference's
// level holds for the current level, it is that level (with the error of
// Level that the reference runs' weight leaves in the values), weighed by
// precision with the median of the level's nights after the one that
// brought it (whose runs often are Level's own): the reference's level
// alone when the values were scaled fully, mostly the nights' median when
// they hardly were (a ratio within one run, which the host's speed does
// not move). Otherwise it is the median of the current level's nights
// before from.
func (d *Detector) youngLevel(from int, nz noise) (mu, variance float64, ok bool) {
	x := d.nights[from]
	night := nz.night(len(x.logs)) // the variance of a night's value
	anchored := d.anchored(from)
	lo := d.level
	if anchored {
		lo = max(lo, d.anchorAt+1)
	}
	var hist, histVar float64
	if from > lo {
		ys := make([]float64, 0, from-lo)
		for _, n := range d.nights[lo:from] {
			ys = append(ys, n.y)
		}
		hist, histVar = stats.Median(ys), night*medianVariance(len(ys))
	}
	if !anchored {
		return hist, histVar, histVar > 0
	}
	w := 1 - x.weight
	mu, variance = math.Log(x.level), w*w*night
	if variance == 0 || histVar == 0 {
		return mu, variance, true
	}
	p, q := 1/variance, 1/histVar
	return (mu*p + hist*q) / (p + q), 1 / (p + q), true
}

// youngAlarm places the change of the paired test's alarm at night t, on
// the run of nights from on that lies beyond the level mu, and returns
// its alert, unless the nights from the change on are less than
// MinEffect from the level. The level restarts at the change.
func (d *Detector) youngAlarm(sign float64, from, t int, mu float64, nz noise, baseVar float64) (Alert, bool) {
	x := d.nights[t]
	sd := math.Sqrt(nz.night(len(x.logs)) + baseVar)
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
	se := math.Sqrt(nz.night(len(x.logs))*medianVariance(len(after)) + baseVar)
	return d.fire(d.alert(sign, t, p, b, a, lr, se), tau, sign)
}

// anchored reports whether night i's Level is the level of the current
// level's nights: the reference came to it (at anchorAt) with no change
// placed since, and night i has it.
func (d *Detector) anchored(i int) bool {
	return d.nights[i].level > 0 && d.level <= d.anchorAt && d.anchorAt <= i
}
