package bisect

import (
	"math"
	"slices"

	"github.com/perfbot/perfbot/stats"
)

// Host drift: a shared machine changes speed while a bisection runs (its
// neighbours come and go, it throttles after a burst of builds), and runs
// taken in a slow minute look like a regression of whichever commit was
// measured then. The search takes its runs one after another, commits
// interleaved, so runs close in time share the host's state; removeDrift
// estimates that state from the other commits' runs around each run (by
// the runs' places in time, Run.Seq) and takes it out before the runs are
// screened and compared.
const (
	// driftNeighbours is how many runs of other commits on each side of a
	// run estimate the host's state at that run.
	driftNeighbours = 4
	// driftMinRuns is the number of timed runs below which drift is not
	// estimated.
	driftMinRuns = 12
	// driftReach is how far (in Seq) a run of another commit may be and
	// still tell the host's state at a run.
	driftReach = 8 * driftNeighbours
	// driftSignificance is how many standard errors the lag-one
	// covariance of the residuals must exceed zero by before any drift is
	// removed: on a steady host the correction would only add noise.
	driftSignificance = 1.5
)

// timedRun is one run of a group with its place in the order of runs.
type timedRun struct {
	group, index int // groups[group][index]
	at           int
}

// removeDrift returns copies of the groups of log values with the host's
// drift removed, and whether there was a drift to remove. at[g][k] is the
// place in time (Run.Seq) of run k of group g, or −1 for a run of unknown
// time, which is used for the groups' levels but neither corrected nor used
// to estimate the drift.
//
// The drift is an empirical-Bayes estimate. Each timed run's residual is
// its value minus the mean of its group's other runs. Residuals of runs of
// different commits that follow each other covary by the drift's variance
// τ² (and not at all on a steady host); the rest of their variance is the
// run noise σ². The drift at a run is the mean residual of the nearest runs
// of other commits, shrunk by τ²/(τ²+σ²/k) for k such runs, so that a
// steady host is left untouched and a wandering one is followed closely.
func removeDrift(groups [][]float64, at [][]int) (_ [][]float64, drifting bool) {
	out := make([][]float64, len(groups))
	for g := range groups {
		out[g] = slices.Clone(groups[g])
	}
	var runs []timedRun
	for g := range groups {
		for k := range groups[g] {
			if k < len(at[g]) && at[g][k] >= 0 && len(groups[g]) >= 2 {
				runs = append(runs, timedRun{group: g, index: k, at: at[g][k]})
			}
		}
	}
	if len(runs) < driftMinRuns {
		return out, false
	}
	slices.SortFunc(runs, func(a, b timedRun) int { return a.at - b.at })

	resid := make([]float64, len(runs))
	weight := make([]float64, len(runs))
	for t, r := range runs {
		g := groups[r.group]
		n := float64(len(g))
		others := (stats.Mean(g)*n - g[r.index]) / (n - 1)
		resid[t] = g[r.index] - others
		// A leave-one-out residual has variance σ²·n/(n−1).
		weight[t] = (n - 1) / n
	}
	clipResiduals(resid)

	tau2, sigma2, ok := driftVariance(runs, resid)
	if !ok {
		return out, false
	}
	for t, r := range runs {
		var s, w float64
		for _, u := range neighbours(runs, t) {
			s += weight[u] * resid[u]
			w += weight[u]
		}
		if w == 0 {
			continue
		}
		h := s / w * tau2 / (tau2 + sigma2/w)
		out[r.group][r.index] -= h
	}
	return out, true
}

// driftVariance estimates the drift variance τ² and the run noise σ² from
// the residuals of consecutive runs of different commits, and reports
// whether τ² is significantly above zero.
func driftVariance(runs []timedRun, resid []float64) (tau2, sigma2 float64, ok bool) {
	var c0, c1 float64
	var n0, n1 int
	for t := range runs {
		c0 += resid[t] * resid[t]
		n0++
		if t > 0 && runs[t-1].group != runs[t].group {
			c1 += resid[t-1] * resid[t]
			n1++
		}
	}
	if n1 < driftMinRuns || c0 == 0 {
		return 0, 0, false
	}
	gamma0, gamma1 := c0/float64(n0), c1/float64(n1)
	// Under no drift the lag-one products have standard error about
	// γ0·√(2/n) (leave-one-out residuals are a little wider than σ).
	if gamma1-driftSignificance*gamma0*math.Sqrt(2/float64(n1)) <= 0 {
		return 0, 0, false
	}
	return gamma1, max(gamma0-gamma1, 1e-12), true
}

// neighbours returns the positions of up to driftNeighbours runs of other
// groups on each side of run t, nearest first, looking at most
// 4·driftNeighbours runs and driftReach in time away.
func neighbours(runs []timedRun, t int) []int {
	out := make([]int, 0, 2*driftNeighbours)
	g := runs[t].group
	for _, step := range []int{-1, 1} {
		found := 0
		for u := t + step; u >= 0 && u < len(runs) && found < driftNeighbours && abs(u-t) <= 4*driftNeighbours && abs(runs[u].at-runs[t].at) <= driftReach; u += step {
			if runs[u].group != g {
				out = append(out, u)
				found++
			}
		}
	}
	return out
}

// clipResiduals limits the residuals to outlierCut robust standard
// deviations, so that one disturbed run does not move its neighbours.
func clipResiduals(r []float64) {
	cut := stats.OutlierCut * stats.MAD(r)
	if cut == 0 {
		return
	}
	for i, x := range r {
		r[i] = max(-cut, min(cut, x))
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
