package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
)

// historyWindow is how many chain commits on each side of a culprit the
// sparkline shows.
const historyWindow = 20

// StoreFindings makes a bisection into findings, one per culprit (or one
// for the candidates, or for a verdict without culprit), and stores them.
// The evidence is the bisection's own: each culprit's effect and
// confirmation rest on the runs of it and of its parent that the search
// took, its hunks are its hunk search's, the sparkline's points are the
// search's probes, and each end's runs, environment, GPU state, logs and
// speculative breakdown come from one read of its stored runs. Nothing is
// measured for it. A finding found again on the same evidence (a job
// resumed, or run again) stands as it was stored.
func (b *Bot) StoreFindings(ctx context.Context, bis *Bisection) ([]*record.Finding, error) {
	metric, err := b.Config.Metric(bis.Metric)
	if err != nil {
		return nil, err
	}
	var out []*record.Finding
	for _, c := range bis.Culprits {
		f, err := b.culpritFinding(ctx, bis, c, metric)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if len(bis.Culprits) == 0 {
		f, err := b.rangeFinding(bis, metric)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	for i, f := range out {
		old, ok, err := b.Store.Finding(f.ID)
		ok = err == nil && ok && old.ID == f.ID
		if ok && sameEvidence(&old, f) {
			// Nothing of it was measured again: the stored finding
			// stands as it is, its cost included.
			out[i] = &old
			bis.Findings = append(bis.Findings, old.ID)
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
		bis.Findings = append(bis.Findings, f.ID)
	}
	return out, nil
}

// culpritFinding is the finding of one culprit: its parent and it are the
// two ends.
func (b *Bot) culpritFinding(ctx context.Context, bis *Bisection, c bisect.Culprit, metric record.Metric) (*record.Finding, error) {
	culprit := bis.Commit(c.Commit)
	if len(culprit.Parents) == 0 {
		return nil, fmt.Errorf("culprit %s has no parent", culprit.Short())
	}
	parent := bis.Commit(culprit.Parents[0])
	f := b.newFinding(bis, metric)
	f.Outcome, f.Direction, f.Confidence = record.OutcomeCulprit, c.Direction, c.Confidence
	rc := record.Culprit{Commit: culprit, Confidence: c.Confidence, Effect: c.Effect}
	switch conf := c.Confirmation; {
	case conf == nil:
		f.Unconfirmed = "no interleaved runs of it and its parent were taken"
	case !conf.Confirmed:
		f.Unconfirmed = conf.String()
		fallthrough
	default:
		rc.Confirmation = conf.Record()
	}
	hr := bis.Hunks[c.Commit]
	if p, err := b.culpritDiff(ctx, hr, parent.Hash, culprit.Hash); err == nil {
		for _, fd := range p.Files {
			rc.Commit.Files = append(rc.Commit.Files, fd.Path())
		}
		rc.NoCodeChange = len(p.Files) > 0 && !p.ChangesCode()
		rc.Dependencies = p.DependencyChanges()
	}
	subs, err := b.Repo.SubmoduleChanges(ctx, parent.Hash, culprit.Hash)
	if err != nil {
		return nil, err
	}
	rc.Dependencies = append(rc.Dependencies, subs...)
	rc.Descents = bis.Descents[c.Commit]
	files := rc.Commit.Files
	if hr != nil {
		rc.Hunks = hr.Hunks
		if hr.Applied.Measured() || hr.Reverted.Measured() {
			rc.HunkEffect = &record.HunkEffect{Applied: hr.Applied.Record(), Reverted: hr.Reverted.Record()}
		}
		f.Warnings = append(f.Warnings, hr.Warnings...)
		files = nil
		for _, h := range hr.Hunks {
			files = append(files, h.File)
		}
	}
	f.Components = b.components(files)
	f.Culprits = []record.Culprit{rc}

	good, bad, err := b.endRuns(parent.Hash, culprit.Hash)
	if err != nil {
		return nil, err
	}
	f.Good, f.Bad = endOf(parent, c.Parent, good, metric.Name), endOf(culprit, c.Self, bad, metric.Name)
	b.addEvidence(f, good, bad)
	f.Logs, f.ParentLogs = lastLog(bad), lastLog(good)
	f.History, f.HistoryOf = historyAround(bis, c.Index), record.HistoryCommits
	f.Reproduce = []string{
		b.perfbot("measure %s %s --repeats 10", parent.Short(), culprit.Short()),
		b.perfbot("bisect --good %s --bad %s --metric %s --direction %s", record.ShortHash(bis.Good.Commit), record.ShortHash(bis.Bad.Commit), metric.Name, bis.Direction),
		b.perfbot("hunks %s --metric %s", culprit.Short(), metric.Name),
	}
	f.ID = f.DerivedID()
	return f, nil
}

// culpritDiff is the diff of culprit against parent: the one its hunk
// search hr made, when the job searched its hunks, or a new one.
func (b *Bot) culpritDiff(ctx context.Context, hr *HunksReport, parent, culprit string) (*gitops.Patch, error) {
	if hr != nil && hr.patch != nil {
		return hr.patch, nil
	}
	return b.Repo.Diff(ctx, parent, culprit)
}

// rangeFinding records a bisection that ended without a single culprit.
func (b *Bot) rangeFinding(bis *Bisection, metric record.Metric) (*record.Finding, error) {
	f := b.newFinding(bis, metric)
	f.Outcome = bis.Verdict
	for _, h := range bis.Candidates {
		f.Candidates = append(f.Candidates, bis.Commit(h))
	}
	good, bad, err := b.endRuns(bis.Good.Commit, bis.Bad.Commit)
	if err != nil {
		return nil, err
	}
	f.Good = endOf(bis.Commit(bis.Good.Commit), bis.Good, good, metric.Name)
	f.Bad = endOf(bis.Commit(bis.Bad.Commit), bis.Bad, bad, metric.Name)
	b.addEvidence(f, good, bad)
	f.Reproduce = []string{b.perfbot("bisect --good %s --bad %s --metric %s --direction %s", record.ShortHash(bis.Good.Commit), record.ShortHash(bis.Bad.Commit), metric.Name, bis.Direction)}
	if w, ok := record.OtherDirection(f.Warnings); ok {
		// The ends differ the other way: its search comes first.
		f.Reproduce = append([]string{b.withConfig(w.Command(metric.Name))}, f.Reproduce...)
	}
	f.ID = f.DerivedID()
	return f, nil
}

// newFinding is what every finding of bis holds: the search's probes,
// skipped commits, warnings and cost.
func (b *Bot) newFinding(bis *Bisection, metric record.Metric) *record.Finding {
	f := &record.Finding{
		Created: b.now(), Repo: b.Config.Repo.URL, CommitURL: b.Config.GitHub.CommitURL(), Metric: metric.Name, Unit: metric.Unit,
		Direction: bis.Direction, Cost: bis.Cost, Warnings: slices.Clone(bis.Warnings), State: record.StateKept,
		PublishConfidence: b.Config.Report.PublishConfidence,
		Steps:             b.steps(), Version: b.Version,
	}
	for _, p := range bis.Probes {
		verdict := p.Side
		if p.Status == bisect.StatusBroken {
			verdict = "skipped"
		}
		if p.Commit == bis.Good.Commit || p.Commit == bis.Bad.Commit {
			verdict = "end"
		}
		f.Probes = append(f.Probes, record.Probe{Commit: bis.Commit(p.Commit), N: p.N, Median: p.Median, Status: p.Status, Verdict: verdict})
	}
	for _, s := range bis.Skipped {
		f.Skipped = append(f.Skipped, bis.Commit(s))
	}
	return f
}

// components are the configured components of files, in order of first
// appearance.
func (b *Bot) components(files []string) []string {
	var out []string
	for _, file := range files {
		if c := b.Config.Components.Match(file); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// sameEvidence reports whether a finding found again rests on the same
// measurements as the stored one: the same runs at both ends, the same
// effect of each culprit and the same confirmation.
func sameEvidence(old, f *record.Finding) bool {
	sameEnd := func(a, b record.End) bool {
		return a.Commit.Hash == b.Commit.Hash && a.N == b.N && a.Median == b.Median && a.Interval == b.Interval
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

// historyAround is the sparkline of a culprit at chain index idx: the
// medians of the search's probes within historyWindow commits of it,
// oldest first — the medians the search itself compared.
func historyAround(bis *Bisection, idx int) []float64 {
	var hist []float64
	for _, p := range bis.Probes {
		if p.Status == bisect.StatusOK && p.N > 0 && p.Index >= idx-historyWindow && p.Index < idx+historyWindow {
			hist = append(hist, p.Median)
		}
	}
	return hist
}
