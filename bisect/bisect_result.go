package bisect

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// summaryConfidence is the confidence of the end summaries and of the
// culprits' effect intervals.
const summaryConfidence = 0.95

// finish assembles the result from the search state and the changes found.
func (s *search) finish(res *Result, changes []found) *Result {
	slices.SortFunc(changes, func(a, b found) int { return a.first - b.first })
	good, bad := 0, len(s.chain)-1
	res.Good = summarize(s.chain[good], s.commits[good].countedRuns())
	res.Bad = summarize(s.chain[bad], s.commits[bad].countedRuns())
	for _, f := range changes {
		if f.first != f.last {
			for i := f.first; i <= f.last; i++ {
				res.Candidates = append(res.Candidates, s.chain[i])
			}
			continue
		}
		res.Culprits = append(res.Culprits, s.culprit(f))
	}
	switch {
	case res.Verdict != "":
	case len(res.Culprits) > 0:
		res.Verdict = record.OutcomeCulprit
		if len(res.Candidates) > 0 {
			s.warn(record.Warning{Kind: record.WarnHiddenChange, Commits: res.Candidates})
		}
	case len(res.Candidates) > 0:
		res.Verdict = record.OutcomeCandidates
	default:
		res.Verdict = record.OutcomeInconclusive
	}
	res.held = map[string][]Run{}
	for i, c := range s.commits {
		switch {
		case c.broken && c.infraSkip():
			res.Skipped = append(res.Skipped, s.chain[i])
			res.SkippedInfra = append(res.SkippedInfra, s.chain[i])
			res.Probes = append(res.Probes, Probe{Commit: s.chain[i], Index: i, N: len(c.runs), Status: StatusInfra})
		case c.broken:
			res.Skipped = append(res.Skipped, s.chain[i])
			res.Probes = append(res.Probes, Probe{Commit: s.chain[i], Index: i, Status: StatusBroken})
		case len(c.runs) > 0:
			res.held[s.chain[i]] = c.runs
			res.Probes = append(res.Probes, Probe{
				Commit: s.chain[i],
				Index:  i,
				N:      len(c.runs),
				Median: medianOrZero(Values(c.runs)),
				Status: StatusOK,
				Side:   side(i, changes),
			})
		}
	}
	if n := len(res.Skipped) - len(res.SkippedInfra); n > 0 {
		s.warn(record.Warning{Kind: record.WarnSkipped, Count: n})
	}
	if n := len(res.SkippedInfra); n > 0 {
		s.warn(record.Warning{Kind: record.WarnSkippedInfra, Count: n, Commits: res.SkippedInfra})
	}
	if n := s.screened(); n > 0 {
		s.warn(record.Warning{Kind: record.WarnOutliers, Count: n})
	}
	if n := s.stale(); n > 0 {
		s.warn(record.Warning{Kind: record.WarnStaleRuns, Count: n})
	}
	res.Samples = s.samples
	res.Rounds = s.rounds
	res.Since, res.Drifting = s.since, s.drifting
	res.Noise = s.noise()
	res.Warnings = record.MergeWarnings(s.warnings)
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

// summarize describes runs of a commit with stats.Summarize.
func summarize(commit string, runs []Run) EndSummary {
	e := EndSummary{Commit: commit, N: len(runs)}
	if len(runs) == 0 {
		return e
	}
	sum := stats.Summarize(Values(runs), summaryConfidence)
	e.Median, e.Interval, e.Confidence = sum.Median, sum.Interval, sum.Confidence
	return e
}

// culprit describes a change found at a single commit, its effect
// estimated from the runs of it and of its parent taken side by side.
func (s *search) culprit(f found) Culprit {
	c := Culprit{Commit: s.chain[f.first], Index: f.first, Confidence: f.p}
	parent, self := s.commits[f.first-1].countedRuns(), s.commits[f.first].countedRuns()
	e := effectOf(parent, self, minPairs)
	c.Effect = e.Effect
	c.Parent = summarize(s.chain[f.first-1], e.parent)
	c.Self = summarize(c.Commit, e.self)
	c.Direction = record.Improvement
	if s.worse*math.Log1p(c.Effect.Pct/100) > 0 {
		c.Direction = record.Regression
	}
	return c
}

// effect is the change from a parent to a culprit with the runs it rests
// on.
type effect struct {
	record.Effect
	parent, self []Run
}

// effectOf estimates the change from parent to self: stats.Delta of the
// runs paired in time, or, when fewer than least pairs exist, of all the
// runs given.
func effectOf(parent, self []Run, least int) effect {
	ip, is := pairs(parent, self)
	e := effect{parent: pick(parent, ip), self: pick(self, is)}
	if len(ip) < least {
		e.parent, e.self = parent, self
	}
	e.Effect = stats.Delta(Values(e.parent), Values(e.self), summaryConfidence)
	return e
}

// screened counts the runs that count but were left out as outliers.
func (s *search) screened() int {
	n := 0
	for _, i := range s.measured {
		n += s.commits[i].n - len(s.commits[i].clean)
	}
	return n
}

// stale counts the runs that do not count: taken at another time with no
// run of another commit beside them.
func (s *search) stale() int {
	n := 0
	for _, i := range s.measured {
		n += len(usableRuns(s.commits[i].runs)) - s.commits[i].n
	}
	return n
}

// String formats a culprit for logs: "c0123 −5.1% [−5.6%, −4.6%] p=0.993".
func (c Culprit) String() string {
	return fmt.Sprintf("%s %s p=%.3f", c.Commit, c.Effect, c.Confidence)
}
