package bisect

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Runs in time. A host's speed wanders (its neighbours come and go, it
// throttles after a burst of builds), so two runs compare fairly only when
// they were taken close together. The oracle stamps every run with its
// place in time (Run.Seq), and the searches use that place in two ways:
//
//   - A run counts in a comparison only when a run of another commit of
//     the search lies within pairWindow of it. Runs taken at another time
//     with nothing beside them (the cache of an earlier stretch, an
//     earlier night, runs of one commit in a long row) say nothing about
//     the difference to a commit measured now, whatever the host was doing
//     then; they are left out, and a comparison that needs them measures
//     both sides again, interleaved.
//   - Confirm pairs a run of the parent with a run of the culprit taken
//     next to it (pairs), and estimates the effect from those pairs only.

// pairWindow is how far apart (in Seq) runs of two commits may be and
// still count as taken side by side: a reference run or two between them
// leaves them paired, a long row of one commit does not.
const pairWindow = 3

// pairTime is how far apart in time (Run.At, where both are known) two runs
// may have started and still be side by side: long enough for a build
// between them, too short for a night.
const pairTime = time.Hour

// besides reports whether runs a and b were taken side by side.
func besides(a, b Run) bool {
	if a.Seq == 0 || b.Seq == 0 || dist(a.Seq, b.Seq) > pairWindow {
		return false
	}
	if a.At.IsZero() || b.At.IsZero() {
		return true
	}
	d := a.At.Sub(b.At)
	return d <= pairTime && d >= -pairTime
}

// runRef names run k of commit (group) g with its place in time.
type runRef struct {
	g, k int
	run  Run
}

// anchored reports, for run k of group g, whether a run of another group
// lies within pairWindow of it in time. Runs of unknown time (Seq 0) are
// never anchored.
func anchored(groups [][]Run) [][]bool {
	out := make([][]bool, len(groups))
	var refs []runRef
	for g, runs := range groups {
		out[g] = make([]bool, len(runs))
		for k, r := range runs {
			if r.Seq > 0 {
				refs = append(refs, runRef{g: g, k: k, run: r})
			}
		}
	}
	slices.SortFunc(refs, func(a, b runRef) int { return cmp.Compare(a.run.Seq, b.run.Seq) })
	for t, r := range refs {
		for _, step := range []int{-1, 1} {
			for u := t + step; u >= 0 && u < len(refs) && dist(refs[u].run.Seq, r.run.Seq) <= pairWindow; u += step {
				if refs[u].g != r.g && besides(refs[u].run, r.run) {
					out[r.g][r.k] = true
					break
				}
			}
		}
	}
	return out
}

// pairs matches runs of a with runs of b taken side by side (besides) on
// one machine, each run used once, and returns the indexes of the matched
// runs of a and of b, in the order of a's runs. It finds as many pairs as
// there can be: in time order, a run takes the earliest run of the other
// commit still waiting within reach, the one that would go unpaired first
// (closest first would strand it: in A A B B with the window 3, pairing
// the middle two leaves the outer two too far apart).
func pairs(a, b []Run) (ia, ib []int) {
	type ref struct {
		side, k int
		run     Run
	}
	var refs []ref
	for side, runs := range [][]Run{a, b} {
		for k, r := range runs {
			if r.Seq > 0 {
				refs = append(refs, ref{side: side, k: k, run: r})
			}
		}
	}
	slices.SortStableFunc(refs, func(p, q ref) int { return cmp.Compare(p.run.Seq, q.run.Seq) })
	var waiting [2][]ref
	matched := map[int]int{}
	for _, r := range refs {
		other := 1 - r.side
		// Runs of the other commit too early to pair with this one pair
		// with no later run either.
		waiting[other] = slices.DeleteFunc(waiting[other], func(w ref) bool { return r.run.Seq-w.run.Seq > pairWindow })
		i := slices.IndexFunc(waiting[other], func(w ref) bool {
			return w.run.machine() == r.run.machine() && besides(w.run, r.run)
		})
		if i < 0 {
			waiting[r.side] = append(waiting[r.side], r)
			continue
		}
		w := waiting[other][i]
		waiting[other] = slices.Delete(waiting[other], i, i+1)
		if r.side == 0 {
			matched[r.k] = w.k
		} else {
			matched[w.k] = r.k
		}
	}
	for i := range a {
		if j, ok := matched[i]; ok {
			ia = append(ia, i)
			ib = append(ib, j)
		}
	}
	return ia, ib
}

func dist(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// usable reports whether a run's value can be compared at all: it is
// positive and finite, so that its logarithm exists.
func usable(r Run) bool { return r.Value > 0 && !math.IsInf(r.Value, 1) }

// usableRuns returns the runs of rs whose value can be compared.
func usableRuns(rs []Run) []Run {
	var out []Run
	for _, r := range rs {
		if usable(r) {
			out = append(out, r)
		}
	}
	return out
}

// pick returns the runs of rs at the given indexes.
func pick(rs []Run, idx []int) []Run {
	out := make([]Run, len(idx))
	for i, k := range idx {
		out[i] = rs[k]
	}
	return out
}
