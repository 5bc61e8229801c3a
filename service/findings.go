package service

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
	"github.com/perfbot/perfbot/store"
)

// endRuns is the number of runs each side of a culprit gets before its
// finding is written, so the summary table's intervals are meaningful.
const endRuns = 10

// confirmPairs is the number of fresh parent/culprit run pairs taken,
// interleaved, before a culprit's finding may be filed: a culprit that
// came out of runs taken while the host was slower must show its change
// again side by side with its parent.
const confirmPairs = 6

// confirmRounds bounds the rounds of confirm.
const confirmRounds = 3

// historyWindow is how many chain commits on each side of a culprit the
// sparkline shows.
const historyWindow = 20

// Findings turns a bisection into findings, one per culprit (or one for
// candidates or a verdict without culprit), and stores them. hunks holds
// the hunk search of each culprit in order, or nil. What the evidence
// costs (the runs that give each side of a culprit endRuns values) is
// added to the report's runs, builds and wall time.
func (b *Bot) Findings(ctx context.Context, rep *BisectReport) ([]*record.Finding, error) {
	metric, err := b.Config.Metric(rep.Metric)
	if err != nil {
		return nil, err
	}
	meter := b.startMeter()
	defer func() {
		runs, builds, wall := meter.read()
		rep.Runs += runs
		rep.Builds += builds
		rep.WallSeconds += wall
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
	for _, f := range out {
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
	good, err := b.end(ctx, parent, metric.Name)
	if err != nil {
		return nil, err
	}
	bad, err := b.end(ctx, culprit, metric.Name)
	if err != nil {
		return nil, err
	}
	f := b.newFinding(rep, metric)
	if c.Confirmation == "" {
		// The bisection did not confirm it (a report from before
		// confirmation, or one built by hand): do it now.
		if c.Confirmed, c.Confirmation, err = b.confirm(ctx, parent.Hash, culprit.Hash, metric.Name, c.DeltaPct); err != nil {
			return nil, err
		}
	}
	if !c.Confirmed {
		f.Unconfirmed = c.Confirmation
		f.Warnings = append(f.Warnings, "Not confirmed: "+c.Confirmation+".")
	}
	f.Outcome = record.OutcomeCulprit
	f.Direction = c.Direction
	f.Good, f.Bad = good, bad
	rc := b.reportCommit(culprit)
	if p, err := b.Repo.Diff(ctx, parent.Hash, culprit.Hash); err == nil {
		for _, fd := range p.Files {
			rc.Files = append(rc.Files, pathOf(fd))
		}
	}
	f.Culprits = []record.Culprit{{Commit: rc, Confidence: c.Confidence, DeltaPct: c.DeltaPct, CILoPct: c.CIPct[0], CIHiPct: c.CIPct[1]}}
	f.Confidence = c.Confidence
	if hr != nil {
		fc := &f.Culprits[0]
		for _, h := range hr.Hunks {
			fc.Hunks = append(fc.Hunks, record.Hunk{ID: h.ID, File: h.File, Component: h.Component, Function: h.Function,
				OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines, Diff: h.Diff})
			if h.Component != "" && !contains(f.Components, h.Component) {
				f.Components = append(f.Components, h.Component)
			}
		}
		fc.HunkEffect = &record.Effect{
			AppliedPct: hr.Effect.Applied.DeltaPct, AppliedLoPct: hr.Effect.Applied.CIPct[0], AppliedHiPct: hr.Effect.Applied.CIPct[1],
			RevertedPct: hr.Effect.Reverted.DeltaPct, RevertedLoPct: hr.Effect.Reverted.CIPct[0], RevertedHiPct: hr.Effect.Reverted.CIPct[1],
		}
		f.Warnings = append(f.Warnings, hr.Warnings...)
	} else {
		for _, file := range rc.Files {
			if comp := b.Config.Components.Match(file); comp != "" && !contains(f.Components, comp) {
				f.Components = append(f.Components, comp)
			}
		}
	}
	f.EnvGood, f.EnvDiffs = b.envEvidence(record.Target{Commit: parent.Hash}, record.Target{Commit: culprit.Hash})
	f.History = b.historyAround(rep, culprit.Hash, metric.Name)
	f.Logs = b.lastLog(record.Target{Commit: culprit.Hash})
	f.Reproduce = []string{
		fmt.Sprintf("perfbot measure %s %s --repeats 10", parent.Short(), culprit.Short()),
		fmt.Sprintf("perfbot bisect --good %s --bad %s --metric %s --direction %s", short(rep.Good.Commit), short(rep.Bad.Commit), metric.Name, rep.Direction),
		fmt.Sprintf("perfbot hunks %s --metric %s", culprit.Short(), metric.Name),
	}
	f.ID = f.Fingerprint()
	return f, nil
}

// rangeFinding records a bisection that ended without a single culprit.
func (b *Bot) rangeFinding(ctx context.Context, rep *BisectReport, metric record.Metric) (*record.Finding, error) {
	f := b.newFinding(rep, metric)
	f.Outcome = record.Outcome(rep.Verdict)
	for _, e := range []struct {
		dst *record.End
		src EndReport
	}{{&f.Good, rep.Good}, {&f.Bad, rep.Bad}} {
		c, err := b.Repo.Commit(ctx, e.src.Commit)
		if err != nil {
			return nil, err
		}
		*e.dst = record.End{Commit: b.reportCommit(c), N: e.src.N, Median: e.src.Median, Lo: e.src.CI[0], Hi: e.src.CI[1]}
	}
	for _, cand := range rep.Candidates {
		c, err := b.Repo.Commit(ctx, cand.Commit)
		if err != nil {
			return nil, err
		}
		f.Candidates = append(f.Candidates, b.reportCommit(c))
	}
	f.EnvGood, f.EnvDiffs = b.envEvidence(record.Target{Commit: rep.Good.Commit}, record.Target{Commit: rep.Bad.Commit})
	f.Reproduce = []string{fmt.Sprintf("perfbot bisect --good %s --bad %s --metric %s", short(rep.Good.Commit), short(rep.Bad.Commit), metric.Name)}
	f.ID = f.Fingerprint()
	if f.Outcome == record.OutcomeNotReproduced {
		f.ID += "-nr"
	}
	return f, nil
}

func (b *Bot) newFinding(rep *BisectReport, metric record.Metric) *record.Finding {
	f := &record.Finding{
		Created: now(), Repo: b.Config.Repo.URL, Metric: metric.Name, Unit: metric.Unit,
		Direction: rep.Direction, Runs: rep.Runs, Builds: rep.Builds, WallSeconds: rep.WallSeconds,
		Warnings: uniqueWarnings(rep.Warnings), State: record.StateKept,
		PublishConfidence: b.Config.Report.PublishConfidence,
	}
	if b.Config.GitHub.Repo != "" {
		f.CommitURL = "https://github.com/" + b.Config.GitHub.Repo + "/commit/%s"
	}
	byHash := map[string]gitops.Commit{}
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
		f.Probes = append(f.Probes, record.Probe{Commit: b.reportCommit(byHash[p.Commit]), N: p.N, Median: p.Median, Status: p.Status, Verdict: verdict})
	}
	for _, s := range rep.Skipped {
		f.Skipped = append(f.Skipped, b.reportCommit(byHash[s.Commit]))
	}
	return f
}

// end makes sure one side of a culprit has endRuns runs and summarizes it.
func (b *Bot) end(ctx context.Context, c gitops.Commit, metric string) (record.End, error) {
	t := record.Target{Commit: c.Hash}
	if err := b.Oracle.Ensure(ctx, t, endRuns); err != nil {
		return record.End{}, fmt.Errorf("measure %s for the evidence: %w", c.Short(), err)
	}
	s, _, err := b.summarize(t, metric)
	if err != nil {
		return record.End{}, err
	}
	return record.End{Commit: b.reportCommit(c), N: s.N, Median: s.Median, Lo: s.Lo, Hi: s.Hi}, nil
}

func (b *Bot) reportCommit(c gitops.Commit) record.Commit {
	return record.Commit{Hash: c.Hash, Subject: c.Subject, Author: c.Author, Email: c.Email, Date: c.Time, Parents: len(c.Parents)}
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

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// confirm measures parent and culprit again, interleaved, in rounds of
// confirmPairs pairs, and reports whether the fresh runs show a change of
// the culprit's sign, with what they show. A round whose interval still
// holds zero while its estimate has the culprit's sign asks for another,
// up to confirmRounds.
func (b *Bot) confirm(ctx context.Context, parent, culprit, metric string, deltaPct float64) (bool, string, error) {
	var good, bad []float64
	var pct, lo, hi float64
	confirmed := false
	for round := 0; round < confirmRounds && !confirmed; round++ {
		for range confirmPairs {
			g, err := b.freshRuns(ctx, record.Target{Commit: parent}, 1)
			if err != nil {
				return false, "", fmt.Errorf("confirm %s: %w", short(culprit), err)
			}
			bd, err := b.freshRuns(ctx, record.Target{Commit: culprit}, 1)
			if err != nil {
				return false, "", fmt.Errorf("confirm %s: %w", short(culprit), err)
			}
			good, bad = append(good, g[metric]...), append(bad, bd[metric]...)
		}
		pct, lo, hi = stats.Delta(good, bad, 0.95)
		confirmed = (deltaPct < 0 && hi < 0) || (deltaPct > 0 && lo > 0)
		if pct*deltaPct <= 0 {
			break // the fresh runs point the other way or nowhere
		}
	}
	return confirmed, fmt.Sprintf("%d fresh interleaved runs each of parent and culprit give %+.1f%% [%+.1f%%, %+.1f%%]", len(good), pct, lo, hi), nil
}

// uniqueWarnings drops repeated warnings and folds the bisection's
// "N outlier runs were left out" lines into one total.
func uniqueWarnings(ws []string) []string {
	var out []string
	seen := map[string]bool{}
	outliers := 0
	for _, w := range ws {
		var n int
		if _, err := fmt.Sscanf(w, "%d outlier runs were left out of the comparison", &n); err == nil && strings.HasSuffix(w, "left out of the comparison") {
			outliers += n
			continue
		}
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	if outliers > 0 {
		out = append([]string{fmt.Sprintf("%d outlier runs were left out of the comparisons", outliers)}, out...)
	}
	return out
}
