package service

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// historyWindow is how many chain commits on each side of a culprit the
// sparkline shows.
const historyWindow = 20

// Findings turns a bisection into findings, one per culprit (or one for
// candidates or a verdict without culprit), and stores them. hunks holds
// the hunk search of each culprit in order, or nil. The evidence is the
// bisection's own: each culprit's summary table shows the runs of its
// parent and of it that its effect and its confirmation rest on, so
// nothing is measured for it. Only a culprit that was never confirmed (a
// report put together by hand) is confirmed here; what that costs is added
// to the report's runs, builds and wall time.
func (b *Bot) Findings(ctx context.Context, rep *BisectReport) ([]*record.Finding, error) {
	metric, err := b.Config.Metric(rep.Metric)
	if err != nil {
		return nil, err
	}
	meter := b.startMeter()
	defer func() {
		rep.Add(meter.read())
	}()
	var out []*record.Finding
	switch {
	case len(rep.Culprits) > 0:
		for i, c := range rep.Culprits {
			var hr *HunksReport
			if i < len(rep.Hunks) {
				hr = rep.Hunks[i]
			}
			f, err := b.culpritFinding(ctx, rep, c, hr, metric)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	default:
		f, err := b.rangeFinding(ctx, rep, metric)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	for i, f := range out {
		old, ok, err := b.Store.Finding(f.ID)
		ok = err == nil && ok && old.ID == f.ID
		if ok && sameEvidence(&old, f) {
			// Nothing of it was measured again (a job resumed, or run
			// again, after its finding was stored): the stored finding
			// stands as it is, its cost included.
			out[i] = &old
			rep.Findings = append(rep.Findings, old.ID)
			continue
		}
		// The same finding found again (a bisection run a second time)
		// keeps where it stands with the tracker: it is not filed afresh,
		// and its issue is not forgotten.
		if ok && old.State != record.StateKept {
			f.State, f.Issue, f.IssueURL = old.State, old.Issue, old.IssueURL
		}
		if err := b.Store.PutFinding(*f); err != nil {
			return nil, fmt.Errorf("store finding %s: %w", f.ID, err)
		}
		rep.Findings = append(rep.Findings, f.ID)
	}
	return out, nil
}

func (b *Bot) culpritFinding(ctx context.Context, rep *BisectReport, c CulpritReport, hr *HunksReport, metric record.Metric) (*record.Finding, error) {
	culprit, err := b.Repo.Commit(ctx, c.Commit)
	if err != nil {
		return nil, err
	}
	if len(culprit.Parents) == 0 {
		return nil, fmt.Errorf("culprit %s has no parent", culprit.Short())
	}
	parent, err := b.Repo.Commit(ctx, culprit.Parents[0])
	if err != nil {
		return nil, err
	}
	f := b.newFinding(rep, metric)
	if c.Confirmation == "" {
		// The bisection did not confirm it (a report from before
		// confirmation, or one built by hand): do it now.
		conf, err := bisect.Confirm(ctx, commitOracle{o: b.Oracle, metric: metric.Name}, parent.Hash, culprit.Hash, bisect.ConfirmOptions{
			Better: metric.Better, Direction: c.Direction,
			OnProbe: func(e bisect.ProbeEvent) { b.progressf("%s", probeLine(e)) },
		})
		if err != nil {
			return nil, fmt.Errorf("confirm %s: %w", culprit.Short(), err)
		}
		c.Confirmed, c.Confirmation, c.Confirm = conf.Confirmed, conf.String(), confirmationOf(conf)
		c.DeltaPct, c.CIPct = conf.Effect.Pct, [2]float64{conf.Effect.Lo, conf.Effect.Hi}
		c.ParentRuns = EndReport{Commit: parent.Hash, N: conf.ParentRuns.N, Median: conf.ParentRuns.Median, CI: [2]float64{conf.ParentRuns.Lo, conf.ParentRuns.Hi}}
		c.CulpritRuns = EndReport{Commit: culprit.Hash, N: conf.SelfRuns.N, Median: conf.SelfRuns.Median, CI: [2]float64{conf.SelfRuns.Lo, conf.SelfRuns.Hi}}
	}
	if !c.Confirmed {
		f.Unconfirmed = c.Confirmation
		f.Warnings = append(f.Warnings, "Not confirmed: "+c.Confirmation+".")
	}
	f.Outcome = record.OutcomeCulprit
	f.Direction = c.Direction
	f.Good = endOf(parent, c.ParentRuns)
	f.Bad = endOf(culprit, c.CulpritRuns)
	rc := culprit
	noCode := false
	if p, err := b.Repo.Diff(ctx, parent.Hash, culprit.Hash); err == nil {
		for _, fd := range p.Files {
			rc.Files = append(rc.Files, pathOf(fd))
		}
		noCode = len(p.Files) > 0 && !p.ChangesCode()
	}
	f.Culprits = []record.Culprit{{Commit: rc, Confidence: c.Confidence, Effect: record.Effect{Pct: c.DeltaPct, Interval: record.Interval{Lo: c.CIPct[0], Hi: c.CIPct[1]}}, NoCodeChange: noCode,
		Confirmation: c.Confirm}}
	f.Confidence = c.Confidence
	if hr != nil {
		fc := &f.Culprits[0]
		for _, h := range hr.Hunks {
			fc.Hunks = append(fc.Hunks, record.Hunk{ID: h.ID, File: h.File, Component: h.Component, Function: h.Function,
				OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines, Diff: h.Diff})
			if h.Component != "" && !slices.Contains(f.Components, h.Component) {
				f.Components = append(f.Components, h.Component)
			}
		}
		fc.HunkEffect = &record.HunkEffect{
			Applied:  record.Effect{Pct: hr.Effect.Applied.DeltaPct, Interval: record.Interval{Lo: hr.Effect.Applied.CIPct[0], Hi: hr.Effect.Applied.CIPct[1]}},
			Reverted: record.Effect{Pct: hr.Effect.Reverted.DeltaPct, Interval: record.Interval{Lo: hr.Effect.Reverted.CIPct[0], Hi: hr.Effect.Reverted.CIPct[1]}},
		}
		f.Warnings = append(f.Warnings, hr.Warnings...)
	} else {
		for _, file := range rc.Files {
			if comp := b.Config.Components.Match(file); comp != "" && !slices.Contains(f.Components, comp) {
				f.Components = append(f.Components, comp)
			}
		}
	}
	f.EnvGood, f.EnvDiffs = b.envEvidence(record.Target{Commit: parent.Hash}, record.Target{Commit: culprit.Hash})
	f.GoodState, f.BadState, f.StateDiffs = b.stateEvidence(record.Target{Commit: parent.Hash}, record.Target{Commit: culprit.Hash})
	f.History, f.HistoryOf = b.historyAround(rep, culprit.Hash, metric.Name), record.HistoryCommits
	f.Logs = b.lastLog(record.Target{Commit: culprit.Hash})
	f.ParentLogs = b.lastLog(record.Target{Commit: parent.Hash})
	f.Good.Runs, f.Good.CPUAffinity = b.rawRuns(record.Target{Commit: parent.Hash}, metric.Name)
	f.Bad.Runs, f.Bad.CPUAffinity = b.rawRuns(record.Target{Commit: culprit.Hash}, metric.Name)
	f.Reproduce = []string{
		b.perfbot("measure %s %s --repeats 10", parent.Short(), culprit.Short()),
		b.perfbot("bisect --good %s --bad %s --metric %s --direction %s", record.ShortHash(rep.Good.Commit), record.ShortHash(rep.Bad.Commit), metric.Name, rep.Direction),
		b.perfbot("hunks %s --metric %s", culprit.Short(), metric.Name),
	}
	f.Speculative = b.specEvidence(f)
	f.ID = f.Fingerprint()
	return f, nil
}

// rangeFinding records a bisection that ended without a single culprit.
func (b *Bot) rangeFinding(ctx context.Context, rep *BisectReport, metric record.Metric) (*record.Finding, error) {
	f := b.newFinding(rep, metric)
	f.Outcome = rep.Verdict
	for _, e := range []struct {
		dst *record.End
		src EndReport
	}{{&f.Good, rep.Good}, {&f.Bad, rep.Bad}} {
		c, err := b.Repo.Commit(ctx, e.src.Commit)
		if err != nil {
			return nil, err
		}
		*e.dst = endOf(c, e.src)
	}
	for _, cand := range rep.Candidates {
		c, err := b.Repo.Commit(ctx, cand.Commit)
		if err != nil {
			return nil, err
		}
		f.Candidates = append(f.Candidates, c)
	}
	f.EnvGood, f.EnvDiffs = b.envEvidence(record.Target{Commit: rep.Good.Commit}, record.Target{Commit: rep.Bad.Commit})
	f.GoodState, f.BadState, f.StateDiffs = b.stateEvidence(record.Target{Commit: rep.Good.Commit}, record.Target{Commit: rep.Bad.Commit})
	f.Good.Runs, f.Good.CPUAffinity = b.rawRuns(record.Target{Commit: rep.Good.Commit}, metric.Name)
	f.Bad.Runs, f.Bad.CPUAffinity = b.rawRuns(record.Target{Commit: rep.Bad.Commit}, metric.Name)
	f.Reproduce = []string{b.perfbot("bisect --good %s --bad %s --metric %s", record.ShortHash(rep.Good.Commit), record.ShortHash(rep.Bad.Commit), metric.Name)}
	f.Speculative = b.specEvidence(f)
	f.ID = f.Fingerprint()
	if f.Outcome == record.OutcomeNotReproduced {
		f.ID += "-nr"
	}
	return f, nil
}

func (b *Bot) newFinding(rep *BisectReport, metric record.Metric) *record.Finding {
	f := &record.Finding{
		Created: b.now(), Repo: b.Config.Repo.URL, Metric: metric.Name, Unit: metric.Unit,
		Direction: rep.Direction, Cost: record.Cost{Runs: rep.Runs, Builds: rep.Builds, WallSeconds: rep.WallSeconds},
		Warnings: rep.Warnings, State: record.StateKept,
		PublishConfidence: b.Config.Report.PublishConfidence,
		Steps:             b.steps(), Version: b.Version,
	}
	f.CommitURL = b.Config.GitHub.CommitURL()
	byHash := map[string]record.Commit{}
	for _, c := range rep.chain {
		byHash[c.Hash] = c
	}
	for _, p := range rep.Probes {
		verdict := p.Side
		if p.Status == bisect.StatusBroken {
			verdict = "skipped"
		}
		if p.Commit == rep.Good.Commit || p.Commit == rep.Bad.Commit {
			verdict = "end"
		}
		f.Probes = append(f.Probes, record.Probe{Commit: byHash[p.Commit], N: p.N, Median: p.Median, Status: p.Status, Verdict: verdict})
	}
	for _, s := range rep.Skipped {
		f.Skipped = append(f.Skipped, byHash[s.Commit])
	}
	return f
}

// sameEvidence reports whether a finding found again rests on the same
// measurements as the stored one: the same runs at both ends, the same
// effect of each culprit and the same confirmation.
func sameEvidence(old, f *record.Finding) bool {
	sameEnd := func(a, b record.End) bool {
		return a.Commit.Hash == b.Commit.Hash && a.N == b.N && a.Median == b.Median && a.Lo == b.Lo && a.Hi == b.Hi
	}
	if old.Outcome != f.Outcome || old.Unconfirmed != f.Unconfirmed || !sameEnd(old.Good, f.Good) || !sameEnd(old.Bad, f.Bad) ||
		len(old.Culprits) != len(f.Culprits) || len(old.Hunks()) != len(f.Hunks()) {
		return false
	}
	for i, c := range f.Culprits {
		o := old.Culprits[i]
		if o.Commit.Hash != c.Commit.Hash || o.Effect != c.Effect {
			return false
		}
	}
	return true
}

// endOf is the evidence's summary of one side: the bisection's, as the
// command line printed it.
func endOf(c record.Commit, e EndReport) record.End {
	return record.End{Commit: c, N: e.N, Median: e.Median, Interval: record.Interval{Lo: e.CI[0], Hi: e.CI[1]}}
}

// envEvidence returns the environment the good target's benchmark saw and
// the variables that differ on the bad target.
func (b *Bot) envEvidence(good, bad record.Target) (map[string]string, []record.EnvDiff) {
	ge, gok := b.lastFingerprint(good)
	be, bok := b.lastFingerprint(bad)
	if !gok || !bok {
		return ge.Env, nil
	}
	var diffs []record.EnvDiff
	names := map[string]bool{}
	for k := range ge.Env {
		names[k] = true
	}
	for k := range be.Env {
		names[k] = true
	}
	for k := range names {
		if ge.Env[k] != be.Env[k] {
			diffs = append(diffs, record.EnvDiff{Name: k, Good: ge.Env[k], Bad: be.Env[k]})
		}
	}
	for _, d := range []struct{ name, g, b string }{
		{"host", ge.Host, be.Host}, {"cpu", ge.CPUModel, be.CPUModel}, {"go", ge.GoVersion, be.GoVersion}, {"kernel", ge.Kernel, be.Kernel},
	} {
		if d.g != d.b {
			diffs = append(diffs, record.EnvDiff{Name: "(" + d.name + ")", Good: d.g, Bad: d.b})
		}
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].Name < diffs[j].Name })
	env := map[string]string{}
	for k, v := range ge.Env {
		env[k] = v
	}
	env["(host)"], env["(cpu)"], env["(go)"] = ge.Host, fmt.Sprintf("%s × %d", ge.CPUModel, ge.CPUs), ge.GoVersion
	return env, diffs
}

func (b *Bot) lastRun(t record.Target) (record.Run, bool) {
	runs, err := b.Store.Runs(store.RunFilter{TargetKey: t.Key(), SpecHash: b.Oracle.SpecHash(), Limit: 1})
	if err != nil || len(runs) == 0 {
		return record.Run{}, false
	}
	return runs[0], true
}

func (b *Bot) lastFingerprint(t record.Target) (record.Fingerprint, bool) {
	r, ok := b.lastRun(t)
	return r.Fingerprint, ok
}

func (b *Bot) lastLog(t record.Target) string {
	r, ok := b.lastRun(t)
	if !ok {
		return ""
	}
	var sb strings.Builder
	for _, l := range r.Logs {
		fmt.Fprintf(&sb, "$ %s (exit %d)\n%s\n", l.Step, l.ExitCode, l.Output)
	}
	return sb.String()
}

// historyAround returns the medians of the measured chain commits around
// the culprit, oldest first.
func (b *Bot) historyAround(rep *BisectReport, culprit, metric string) []float64 {
	idx := -1
	for i, c := range rep.chain {
		if c.Hash == culprit {
			idx = i
		}
	}
	if idx < 0 {
		return nil
	}
	var hist []float64
	for i := max(0, idx-historyWindow); i < min(len(rep.chain), idx+historyWindow); i++ {
		s, _, err := b.summarize(record.Target{Commit: rep.chain[i].Hash}, metric)
		if err == nil && s.N > 0 {
			hist = append(hist, s.Median)
		}
	}
	return hist
}

func pathOf(fd *gitops.FileDiff) string {
	if fd.NewPath != "" {
		return fd.NewPath
	}
	return fd.OldPath
}
