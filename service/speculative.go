package service

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
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
// on which speculation pays does. A new stretch files nothing either
// while an earlier finding of the metric is still open: on a host whose
// speed-up hovers around 1, speculation pays on a night now and then by
// chance, and the stretch after it is the same regression, so it
// continues that finding (continuedFinding). It returns the finding's
// id, or "".
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
	if id, err := b.continuedFinding(ctx, f.ID, metric.Name, tip.Tip, last); err != nil || id != "" {
		return id, err
	}
	b.progressf("nightly: speculation costs %.0f%% at %s (break-even acceptance %.2f, measured %.2f)",
		last.CostPct(), record.ShortHash(tip.Tip), last.BreakEven.Median, last.Accept.Median)
	if err := b.File(ctx, []*record.Finding{f}); err != nil {
		return "", err
	}
	return f.ID, nil
}

// continuedFinding is the id of the earlier finding that the stretch
// whose own finding would be id continues, or "" when the stretch is a
// regression of its own. The stretch is decided once, on the first night
// that asks, and the decision recorded (NightlyState.Continues): it
// continues the newest speculation_slower finding of metric whose issue is
// still open then, and closing that issue later in the stretch files
// nothing, just as closing a finding's issue files nothing for the rest
// of the stretch that raised it. The continued issue is told once, when
// the decision is recorded, so that its readers learn that the
// regression came back after a night on which speculation paid. A night
// on which the tracker cannot say whether the issue is open continues the
// finding without recording it, so the next night asks again.
func (b *Bot) continuedFinding(ctx context.Context, id, metric, tip string, last record.SpecBreakdown) (string, error) {
	state, err := b.Store.NightlyState()
	if err != nil {
		return "", fmt.Errorf("speculation: read nightly state: %w", err)
	}
	if earlier, ok := state.Continues[id]; ok {
		return earlier, nil
	}
	// One tracker for the open-issue check and the comment, made only
	// when an issue must be asked about or told.
	tracker := sync.OnceValues(b.tracker)
	open, sure, err := b.openSpeculationFinding(ctx, metric, tracker)
	if err != nil || open == nil {
		return "", err
	}
	b.progressf("nightly: speculation is slower again at %s; finding %s %s is still open: no new finding",
		record.ShortHash(tip), open.ID, issueOf(open))
	if !sure {
		return open.ID, nil
	}
	if open.State == record.StateFiled && open.Issue > 0 {
		t, err := tracker()
		if err == nil {
			err = t.Comment(ctx, open.Issue, fmt.Sprintf("perfbot's nightly saw speculative decoding slower than plain decoding again at %s, after a night on which it paid: it costs %.0f%% (break-even acceptance %.2f, measured %.2f). This issue continues; no new one is filed.",
				record.ShortHash(tip), last.CostPct(), last.BreakEven.Median, last.Accept.Median))
		}
		if err != nil {
			// Unrecorded, so the next night asks and tells again.
			b.progressf("finding %s: cannot comment on issue #%d: %v", open.ID, open.Issue, err)
			return open.ID, nil
		}
	}
	err = b.Store.UpdateNightlyState(func(s *record.NightlyState) error {
		if s.Continues == nil {
			s.Continues = map[string]string{}
		}
		s.Continues[id] = open.ID
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("speculation: record that %s continues %s: %w", id, open.ID, err)
	}
	return open.ID, nil
}

// openSpeculationFinding is the newest speculation_slower finding of
// metric in the watched repository whose issue is still open, or nil.
// Open is filed with an issue the tracker has not closed or lost, or
// waiting to be filed (unfiled: RetryUnfiled files it); a kept finding
// has no issue to keep open. An issue the tracker cannot be asked about
// (unreachable, or not set up) counts as open, and sure is false: a
// second issue for one regression is what this guards against. tracker
// is called only for a filed issue.
func (b *Bot) openSpeculationFinding(ctx context.Context, metric string, tracker func() (report.Tracker, error)) (f *record.Finding, sure bool, err error) {
	fs, err := b.Store.Findings()
	if err != nil {
		return nil, false, fmt.Errorf("speculation: list findings: %w", err)
	}
	fs = slices.DeleteFunc(fs, func(f record.Finding) bool {
		return f.Outcome != record.OutcomeSpeculationSlower || f.Metric != metric || f.Repo != b.Config.Repo.URL ||
			(f.State != record.StateFiled && f.State != record.StateUnfiled)
	})
	slices.SortFunc(fs, func(x, y record.Finding) int { return y.Created.Compare(x.Created) })
	for i := range fs {
		if fs[i].State == record.StateUnfiled || fs[i].Issue == 0 {
			return &fs[i], true, nil
		}
		t, err := tracker()
		closed := false
		if err == nil {
			closed, err = issueClosed(ctx, t, fs[i].Issue)
		}
		if err != nil {
			b.progressf("finding %s: cannot tell whether issue #%d is open, so it counts as open: %v", fs[i].ID, fs[i].Issue, err)
			return &fs[i], false, nil
		}
		if !closed {
			return &fs[i], true, nil
		}
	}
	return nil, true, nil
}

// issueClosed reports whether tracker t says issue number is closed or
// no longer exists.
func issueClosed(ctx context.Context, t report.Tracker, number int) (bool, error) {
	iss, err := t.Get(ctx, number)
	switch {
	case report.IssueGone(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return iss.State == report.IssueClosed, nil
}

// issueOf names f's issue for a progress line.
func issueOf(f *record.Finding) string {
	if f.State == record.StateFiled && f.Issue > 0 {
		return fmt.Sprintf("(issue #%d)", f.Issue)
	}
	return "(not filed yet)"
}

// specEnd summarizes the tip's speculative throughput.
func specEnd(c record.Commit, values []float64) record.End {
	e := specdecode.Median(values, config.SpecConfidence)
	return record.End{Commit: c, N: len(values), Median: e.Median, Interval: record.Interval{Lo: e.Lo, Hi: e.Hi}}
}
