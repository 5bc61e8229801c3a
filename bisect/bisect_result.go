package bisect

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfbot/perfbot/record"
)

// z95 is the normal quantile of a two-sided 95% interval; medianEfficiency
// is the ratio of the median's standard error to the mean's under Gaussian
// noise (√(π/2)).
const (
	z95              = 1.959964
	medianEfficiency = 1.2533
)

// finish assembles the result from the search state and the changes found.
func (s *search) finish(res *Result, changes []found) *Result {
	slices.SortFunc(changes, func(a, b found) int { return a.first - b.first })
	good, bad := 0, len(s.chain)-1
	res.Good = s.endSummary(good)
	res.Bad = s.endSummary(bad)
	for _, f := range changes {
		if f.first != f.last {
			for i := f.first; i <= f.last; i++ {
				res.Candidates = append(res.Candidates, s.chain[i])
			}
			continue
		}
		res.Culprits = append(res.Culprits, s.culprit(f, changes))
	}
	switch {
	case res.Verdict != "":
	case len(res.Culprits) > 0:
		res.Verdict = record.OutcomeCulprit
		if len(res.Candidates) > 0 {
			s.warnf("a further change hides among commits that do not build: %v", res.Candidates)
		}
	case len(res.Candidates) > 0:
		res.Verdict = record.OutcomeCandidates
	default:
		res.Verdict = record.OutcomeInconclusive
	}
	for i, c := range s.commits {
		switch {
		case c.broken:
			res.Skipped = append(res.Skipped, s.chain[i])
			res.Probes = append(res.Probes, Probe{Commit: s.chain[i], Index: i, Status: StatusBroken})
		case len(c.raw) > 0:
			res.Probes = append(res.Probes, Probe{
				Commit: s.chain[i],
				Index:  i,
				N:      len(c.raw),
				Median: median(c.raw),
				Status: StatusOK,
				Side:   side(i, changes),
			})
		}
	}
	if len(res.Skipped) > 0 {
		s.warnf("%d commits do not build and were skipped", len(res.Skipped))
	}
	if n := s.screened(); n > 0 {
		s.warnf("%d outlier runs were left out of the comparison", n)
	}
	res.Samples = s.samples
	res.Warnings = s.warnings
	return res
}

// side places commit i relative to the changes found.
func side(i int, changes []found) string {
	switch {
	case len(changes) == 0:
		return ""
	case i < changes[0].first:
		return "good"
	case i >= changes[len(changes)-1].last:
		return "bad"
	}
	return ""
}

// endSummary describes an end of the chain.
func (s *search) endSummary(i int) EndSummary {
	c := s.commits[i]
	e := EndSummary{Commit: s.chain[i], N: len(c.raw)}
	if len(c.clean) == 0 {
		return e
	}
	m := median(c.clean)
	half := z95 * medianEfficiency * s.spread() / math.Sqrt(float64(len(c.clean)))
	e.Median, e.Lo, e.Hi = math.Exp(m), math.Exp(m-half), math.Exp(m+half)
	return e
}

// culprit describes a change found at a single commit. Its effect is the
// ratio of the medians of the segments on either side, each reaching to
// the neighbouring change (or the end of the chain), so that a second
// culprit does not dilute the first.
func (s *search) culprit(f found, changes []found) Culprit {
	lo, hi := 0, len(s.chain)-1
	for _, g := range changes {
		if g.last < f.first {
			lo = max(lo, g.last)
		}
		if g.first > f.last {
			hi = min(hi, g.first-1)
		}
	}
	left := s.segmentValues(lo, f.first-1)
	right := s.segmentValues(f.first, hi)
	d := median(right) - median(left)
	se := medianEfficiency * s.spread() * math.Sqrt(1/float64(len(left))+1/float64(len(right)))
	c := Culprit{
		Commit:     s.chain[f.first],
		Index:      f.first,
		Confidence: f.p,
		DeltaPct:   100 * math.Expm1(d),
		CILoPct:    100 * math.Expm1(d-z95*se),
		CIHiPct:    100 * math.Expm1(d+z95*se),
		Direction:  record.Improvement,
	}
	if s.worse*d > 0 {
		c.Direction = record.Regression
	}
	return c
}

// spread is the standard deviation of one run's log value: the robust
// pooled scale when there are enough runs for it, else the classical
// pooled one.
func (s *search) spread() float64 {
	if s.scale > 0 {
		return s.scale
	}
	sigma, _ := s.pooledSigma()
	return sigma
}

// segmentValues returns the clean log values of the commits lo..hi.
func (s *search) segmentValues(lo, hi int) []float64 {
	var out []float64
	for _, i := range s.measured {
		if i >= lo && i <= hi {
			out = append(out, s.commits[i].clean...)
		}
	}
	return out
}

// screened counts the runs left out as outliers.
func (s *search) screened() int {
	n := 0
	for _, i := range s.measured {
		n += len(logValues(s.commits[i].raw)) - len(s.commits[i].clean)
	}
	return n
}

// String formats a culprit for logs: "c0123 −5.1% [−5.6, −4.6] p=0.993".
func (c Culprit) String() string {
	return fmt.Sprintf("%s %+.1f%% [%+.1f, %+.1f] p=%.3f", c.Commit, c.DeltaPct, c.CILoPct, c.CIHiPct, c.Confidence)
}
