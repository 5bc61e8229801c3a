package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/specdecode"
)

// specCycle takes the breakdown's terms out of one run's metric values;
// false when the run lacks one of them.
func specCycle(s *config.Speculative, values map[string]float64) (specdecode.Cycle, bool) {
	var c specdecode.Cycle
	var ok bool
	c.VerifyMs, c.DraftMs, c.DecodeMs, c.Accept, ok = s.Terms(values)
	return c, ok
}

// specCycles are the cycles of the runs whose values are given metric by
// metric, run i of every metric taken together: the runs of one night, in
// the order they ran. Metrics with a different number of runs (a run
// that lacked one) cannot be paired, and give no cycles.
func specCycles(s *config.Speculative, byMetric map[string][]float64) []specdecode.Cycle {
	n := -1
	for _, name := range s.Metrics() {
		if name == s.TokS {
			continue
		}
		if k := len(byMetric[name]); n < 0 || k == n {
			n = k
		} else {
			return nil
		}
	}
	var out []specdecode.Cycle
	for i := 0; i < n; i++ {
		values := map[string]float64{}
		for _, name := range s.Metrics() {
			if vs := byMetric[name]; i < len(vs) {
				values[name] = vs[i]
			}
		}
		if c, ok := specCycle(s, values); ok {
			out = append(out, c)
		}
	}
	return out
}

// cyclesOf are the breakdown's terms of every ok run among runs.
func cyclesOf(s *config.Speculative, runs []record.Run) []specdecode.Cycle {
	var out []specdecode.Cycle
	for _, r := range okRuns(runs) {
		if c, ok := specCycle(s, r.Values); ok {
			out = append(out, c)
		}
	}
	return out
}

// specEvidence is the breakdown at the finding's two ends from their runs
// and, when the finding is about the speculative throughput, the change
// split into its terms. It is nil without a speculative block, or when an
// end has no run that measured every term (the breakdown is evidence; its
// absence is no error).
func (b *Bot) specEvidence(f *record.Finding, good, bad []record.Run) *record.SpecAttribution {
	s := b.Config.Speculative
	if s == nil || f.Good.Commit.Hash == "" || f.Bad.Commit.Hash == "" {
		return nil
	}
	a, err := specdecode.Attribute(cyclesOf(s, good), cyclesOf(s, bad), config.SpecConfidence)
	if err != nil {
		return nil
	}
	a.Metric, a.Tokens, a.TimeUnit = s.TokS, s.Tokens, b.specTimeUnit()
	if f.Metric != s.TokS {
		a.Terms, a.ExpectedPct = nil, 0
	}
	return &a
}

// specTimeUnit is the unit of the speculative block's decode time metric,
// which the verify and draft times share; "" for ms (or no such metric).
func (b *Bot) specTimeUnit() string {
	s := b.Config.Speculative
	if s == nil {
		return ""
	}
	m, err := b.Config.Metric(s.DecodeMs)
	if err != nil {
		return ""
	}
	return record.SpecTimeUnit(m.Unit)
}

// speculationFinding raises a finding when, on the last night, the tip's
// speculative decoding was slower than plain decoding with the
// breakdown's confidence. Its id depends on the first night of the
// stretch since speculation last paid, so a later night that is still
// slower files nothing again; a night whose interval spans 1 (a noisy
// host) or that has no breakdown does not end the stretch, only a night
// on which speculation pays does. It returns the finding's id, or "".
func (b *Bot) speculationFinding(ctx context.Context, nights []record.Night) (string, error) {
	s := b.Config.Speculative
	if s == nil || len(nights) == 0 {
		return "", nil
	}
	breakdown := func(n record.Night) (record.SpecBreakdown, bool) {
		byMetric := map[string][]float64{}
		for _, name := range s.Metrics() {
			byMetric[name] = n.Metrics[name].Tip
		}
		bd, err := specdecode.Summarize(specCycles(s, byMetric), config.SpecConfidence)
		return bd, err == nil
	}
	last, ok := breakdown(nights[len(nights)-1])
	if !ok || !last.Slower() {
		return "", nil
	}
	since := len(nights) - 1 // the first slower night of the stretch
	earliest := last
	for i := since - 1; i >= 0; i-- {
		bd, ok := breakdown(nights[i])
		if !ok {
			continue
		}
		if bd.SpeedUp.Lo > 1 {
			break // speculation paid that night
		}
		if bd.Slower() {
			since, earliest = i, bd
		}
	}
	if s.Quiet {
		// Said once, on the first slower night of the stretch.
		if since == len(nights)-1 {
			b.progressf("nightly: speculation costs %.0f%% at %s (break-even acceptance %.2f, measured %.2f); no finding (speculative.alert: false)",
				last.CostPct(), record.ShortHash(nights[since].Tip), last.BreakEven.Median, last.Accept.Median)
		}
		return "", nil
	}
	commit := func(h string) record.Commit {
		c, err := b.Repo.Commit(ctx, h)
		if err != nil {
			return record.Commit{Hash: h}
		}
		return c
	}
	metric, err := b.Config.Metric(s.TokS)
	if err != nil {
		return "", err
	}
	tip := nights[len(nights)-1]
	f := &record.Finding{
		Created: b.now(), Repo: b.Config.Repo.URL, Metric: metric.Name, Unit: metric.Unit,
		Direction: record.Regression, Outcome: record.OutcomeSpeculationSlower, Confidence: last.Confidence,
		State: record.StateKept, PublishConfidence: b.Config.Report.PublishConfidence,
		Good:        record.End{Commit: commit(nights[since].Tip)},
		Bad:         specEnd(commit(tip.Tip), tip.Metrics[metric.Name].Tip),
		Speculative: &record.SpecAttribution{Metric: metric.Name, Tokens: s.Tokens, Good: earliest, Bad: last, TimeUnit: b.specTimeUnit()},
	}
	f.CommitURL = b.Config.GitHub.CommitURL()
	for _, n := range nights[since:] {
		if bd, ok := breakdown(n); !ok || !bd.Slower() {
			continue
		}
		if !slices.ContainsFunc(f.Candidates, func(c record.Commit) bool { return c.Hash == n.Tip }) {
			f.Candidates = append(f.Candidates, commit(n.Tip))
		}
	}
	f.Reproduce = []string{fmt.Sprintf("perfbot measure %s --repeats 10", record.ShortHash(tip.Tip)), "perfbot history --speculative"}
	// The id names the first tip of the run of nights only: the nights
	// after it extend the same finding.
	first := record.Finding{Metric: metric.Name, Outcome: f.Outcome, Candidates: f.Candidates[:1]}
	f.ID = first.DerivedID()
	if _, ok, err := b.Store.Finding(f.ID); err != nil || ok {
		return f.ID, err
	}
	b.progressf("nightly: speculation costs %.0f%% at %s (break-even acceptance %.2f, measured %.2f)",
		last.CostPct(), record.ShortHash(tip.Tip), last.BreakEven.Median, last.Accept.Median)
	if err := b.File(ctx, []*record.Finding{f}); err != nil {
		return "", err
	}
	return f.ID, nil
}

// specEnd summarizes the tip's speculative throughput.
func specEnd(c record.Commit, values []float64) record.End {
	e := specdecode.Median(values, config.SpecConfidence)
	return record.End{Commit: c, N: len(values), Median: e.Median, Interval: record.Interval{Lo: e.Lo, Hi: e.Hi}}
}
