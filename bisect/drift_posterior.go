package bisect

import (
	"cmp"
	"math"
	"slices"
)

// driftModel is the host's drift as a latent process shared by every run:
// a run's log value is its segment's level plus the host's state at its
// place in time plus its own noise, the state an AR(1) process over the
// runs' places in time (Run.Seq) with variance ratio·σ² and correlation
// rho from one place to the next.
//
// Runs close in time share the state, so their difference cancels most of
// it: a probe taken between runs whose level is known is compared with
// them at the host's state of that moment. removeDrift corrects each run
// by the runs of other commits around it, which a probe run once cannot
// use (its residual is zero by construction) and so keeps the whole drift;
// the change-point posterior under this model ties each probe to the level
// of its segment and lets every run, the probes included, tell the state
// at its neighbours.
type driftModel struct {
	ratio, rho float64
}

// whitened are the runs of several commits seen through the drift model:
// their log values and each commit's indicator multiplied by L⁻¹, L a
// square root of the runs' covariance V = I + ratio·R, so that least
// squares on them is generalized least squares on the runs.
type whitened struct {
	n      int
	logDet float64     // log |V|
	y      []float64   // whitened values, centred on their mean first
	u      [][]float64 // u[j]: whitened indicator of the runs of commit j
}

// whiten prepares values[j] (the log values of commit j, taken at the
// places in time at[j]) for generalized least squares under m. The
// drift is a Markov process, so L⁻¹ is the Kalman filter's standardized
// innovations over the runs in time order: linear in the values, with
// gains that do not depend on them, and O(runs) per vector where a
// Cholesky factor of V would cost the cube of the runs.
func whiten(values [][]float64, at [][]int, m driftModel) whitened {
	type point struct {
		y  float64
		at int
		g  int
	}
	var pts []point
	for j := range values {
		for k, y := range values[j] {
			pts = append(pts, point{y: y, at: at[j][k], g: j})
		}
	}
	slices.SortStableFunc(pts, func(a, b point) int { return cmp.Compare(a.at, b.at) })
	n := len(pts)
	mean := 0.0
	for _, p := range pts {
		mean += p.y
	}
	mean /= float64(max(n, 1))
	// The filter's gains: a[t] carries the state from run t−1 to run t,
	// f[t] is the innovation's variance and k[t] the gain.
	a, f, k := make([]float64, n), make([]float64, n), make([]float64, n)
	w := whitened{n: n, y: make([]float64, n), u: make([][]float64, len(values))}
	p := m.ratio
	for t := range n {
		if t > 0 {
			a[t] = math.Pow(m.rho, float64(pts[t].at-pts[t-1].at))
			p = a[t]*a[t]*p + m.ratio*(1-a[t]*a[t])
		}
		f[t] = p + 1
		k[t] = p / f[t]
		p *= 1 - k[t]
		w.logDet += math.Log(f[t])
	}
	filter := func(x func(t int) float64, out []float64) {
		h := 0.0
		for t := range n {
			h *= a[t]
			v := x(t) - h
			out[t] = v / math.Sqrt(f[t])
			h += k[t] * v
		}
	}
	filter(func(t int) float64 { return pts[t].y - mean }, w.y)
	for j := range values {
		w.u[j] = make([]float64, n)
		filter(func(t int) float64 {
			if pts[t].g == j {
				return 1
			}
			return 0
		}, w.u[j])
	}
	return w
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// driftPosterior is newPosterior under the drift model: the same single
// change point, flat priors on the two levels and the Jeffreys prior on
// σ, but with the runs' covariance V = I + ratio·R (R the AR(1)
// correlation over their places in time), so that a split's marginal
// likelihood is |V|^(−1/2)·|XᵀV⁻¹X|^(−1/2)·RSS^(−(n−2)/2), RSS the
// generalized least-squares residual. The drift's parameters are not
// taken as known: the likelihood is averaged over the grid of them (and
// a steady host), each weighted by how well it explains the runs, so that
// a search is no surer of its culprit than its runs make it of the drift.
// values[j] and at[j] are the log values of measured[j] and their places
// in time.
func driftPosterior(measured []int, values [][]float64, at [][]int) *posterior {
	models := []driftModel{{}}
	for _, rho := range driftRhos {
		for _, ratio := range driftRatios {
			models = append(models, driftModel{ratio: ratio, rho: rho})
		}
	}
	per := make([][]float64, len(models))
	for k, m := range models {
		per[k] = splitLogLik(measured, values, at, m)
	}
	logLik := make([]float64, len(values))
	for i := 1; i < len(values); i++ {
		top := math.Inf(-1)
		for k := range models {
			top = max(top, per[k][i])
		}
		var z float64
		for k := range models {
			z += math.Exp(per[k][i] - top)
		}
		logLik[i] = top + math.Log(z)
	}
	return fromLogLik(measured, logLik)
}

// splitLogLik returns the log marginal likelihood of every split under
// drift model m (logLik[i] for the interval (measured[i−1], measured[i]]).
func splitLogLik(measured []int, values [][]float64, at [][]int, m driftModel) []float64 {
	w := whiten(values, at, m)
	n := w.n
	all := make([]float64, n)
	for j := range w.u {
		for i := range n {
			all[i] += w.u[j][i]
		}
	}
	yy := dot(w.y, w.y)
	df := float64(n - 2)
	logLik := make([]float64, len(values))
	left := make([]float64, n)
	right := make([]float64, n)
	for i := 1; i < len(values); i++ {
		for k := range n {
			left[k] += w.u[i-1][k]
			right[k] = all[k] - left[k]
		}
		a11, a12, a22 := dot(left, left), dot(left, right), dot(right, right)
		b1, b2 := dot(left, w.y), dot(right, w.y)
		det := max(a11*a22-a12*a12, 1e-300)
		rss := yy - (a22*b1*b1-2*a12*b1*b2+a11*b2*b2)/det
		rss = max(rss, 1e-12*max(float64(n), 1))
		width := float64(measured[i] - measured[i-1])
		logLik[i] = math.Log(width) - 0.5*w.logDet - 0.5*math.Log(det) - df/2*math.Log(rss)
	}
	return logLik
}

// glsFit is the generalized least-squares fit of every commit's level:
// the levels beta, the inverse of the normal matrix (the levels'
// covariance in units of σ²), the residual sum of squares and the log
// determinant of the normal matrix. ok is false when the runs leave no
// degree of freedom.
type glsFit struct {
	beta   []float64
	inv    [][]float64
	rss    float64
	logDet float64
	df     float64
}

func fitLevels(w whitened) (glsFit, bool) {
	k := len(w.u)
	if w.n <= k {
		return glsFit{}, false
	}
	// Gauss–Jordan on [A | I], A = UᵀU (k, the commits measured, is small).
	m := make([][]float64, k)
	for i := range k {
		m[i] = make([]float64, 2*k)
		for j := range k {
			m[i][j] = dot(w.u[i], w.u[j])
		}
		m[i][k+i] = 1
	}
	logDet := 0.0
	for col := range k {
		piv := col
		for r := col + 1; r < k; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[piv][col]) {
				piv = r
			}
		}
		m[col], m[piv] = m[piv], m[col]
		p := m[col][col]
		if math.Abs(p) < 1e-300 {
			return glsFit{}, false
		}
		logDet += math.Log(math.Abs(p))
		for j := range 2 * k {
			m[col][j] /= p
		}
		for r := range k {
			if r == col || m[r][col] == 0 {
				continue
			}
			f := m[r][col]
			for j := range 2 * k {
				m[r][j] -= f * m[col][j]
			}
		}
	}
	c := make([]float64, k)
	for i := range k {
		c[i] = dot(w.u[i], w.y)
	}
	f := glsFit{beta: make([]float64, k), inv: make([][]float64, k), logDet: logDet, df: float64(w.n - k)}
	for i := range k {
		f.inv[i] = m[i][k:]
		for j := range k {
			f.beta[i] += f.inv[i][j] * c[j]
		}
	}
	f.rss = max(dot(w.y, w.y)-dot(f.beta, c), 1e-12)
	return f, true
}

// driftDelta estimates the difference of the levels of commits b and a
// (indexes into values) by generalized least squares under m, every
// commit of values with a level of its own, and returns it with its
// standard error and degrees of freedom (σ from the residuals of all of
// them). ok is false when the runs leave no degree of freedom.
func driftDelta(values [][]float64, at [][]int, m driftModel, a, b int) (delta, se, df float64, ok bool) {
	f, ok := fitLevels(whiten(values, at, m))
	if !ok {
		return 0, 0, 0, false
	}
	v := f.inv[a][a] + f.inv[b][b] - 2*f.inv[a][b]
	return f.beta[b] - f.beta[a], math.Sqrt(max(v, 0) * f.rss / f.df), f.df, true
}

// Grids of the drift model's parameters that fitDriftModel searches.
var (
	driftRhos   = []float64{0.6, 0.8, 0.9, 0.95}
	driftRatios = []float64{1, 3, 10, 30}
)

// fitDriftModel weighs the drifting models of the grid against a steady
// host by their restricted likelihoods (every commit with a level of its
// own, σ profiled out), the steady host holding half the prior and the
// grid's models sharing the other half. It reports the most likely
// drifting model, and whether drift is the more probable explanation of
// how the runs of the commits wander together in time: the best of many
// models explains any runs a little better than one, so the best alone
// would find drift on every host.
func fitDriftModel(values [][]float64, at [][]int) (driftModel, bool) {
	reml := func(m driftModel) (float64, bool) {
		w := whiten(values, at, m)
		f, ok := fitLevels(w)
		if !ok {
			return 0, false
		}
		return -0.5*w.logDet - 0.5*f.logDet - f.df/2*math.Log(f.rss), true
	}
	steady, ok := reml(driftModel{})
	if !ok {
		return driftModel{}, false
	}
	var out driftModel
	best := math.Inf(-1)
	var ls []float64
	for _, rho := range driftRhos {
		for _, ratio := range driftRatios {
			m := driftModel{ratio: ratio, rho: rho}
			if l, ok := reml(m); ok {
				ls = append(ls, l)
				if l > best {
					best, out = l, m
				}
			}
		}
	}
	if len(ls) == 0 {
		return driftModel{}, false
	}
	// log of the mean likelihood of the drifting models, against the
	// steady host's.
	drift := logSumExp(ls) - math.Log(float64(len(ls)))
	return out, drift > steady
}
