package service

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
)

// RevertRequest asks for the proof by revert of a finding's culprit.
type RevertRequest struct {
	// Finding is the finding's id, or a unique prefix of it.
	Finding string `json:"finding"`
	// Tip is the revision to revert on; "" is the watched branch
	// (repo.branch) after a fetch.
	Tip string `json:"tip,omitempty"`
	// PR opens a draft pull request with the revert when it restores the
	// speed (report.revert_pr must allow it).
	PR bool `json:"pr,omitempty"`
}

// RevertReport is what a revert job found.
type RevertReport struct {
	Finding string             `json:"finding"`
	Culprit string             `json:"culprit"`
	Metric  string             `json:"metric"`
	Revert  record.RevertOnTip `json:"revert"`
	// Changed says how the verdict differs from the one before it ("" when
	// there was none, or it tells the same).
	Changed string `json:"changed,omitempty"`
	// Commented is the issue the verdict was posted to as a comment, 0
	// when none.
	Commented int `json:"commented,omitempty"`
	record.Cost
	JobID string `json:"job_id"`
}

// Revert proves a finding's culprit by undoing it on today's tip: its
// minimal hunk set (the whole commit when no set was found) is reverted on
// the tip (gitops.RevertOnto), the revert is built and measured beside the
// tip, interleaved, by the pairing and stopping rules of a culprit's
// confirmation (bisect.Confirm, looking for the opposite change), and the
// verdict is stored on the culprit. A finding that was filed gets the
// verdict as a comment when it is new or changed. It is a job: the same
// finding on the same tip measures nothing again.
func (b *Bot) Revert(ctx context.Context, req RevertRequest) (*RevertReport, error) {
	f, c, err := b.revertable(req.Finding)
	if err != nil {
		return nil, err
	}
	tip, err := b.revertTip(ctx, req.Tip)
	if err != nil {
		return nil, err
	}
	metric, err := b.metric(f.Metric)
	if err != nil {
		return nil, err
	}
	if req.PR {
		if err := b.checkRevertPR(); err != nil {
			return nil, err
		}
	}
	params := map[string]any{"finding": f.ID, "culprit": c.Commit.Hash, "tip": tip.Hash, "spec": b.Oracle.SpecHash()}
	rep, err := runJob(b, record.JobRevert, params, func(jb *Bot, _, _ func(any)) (*RevertReport, error) {
		return jb.revert(ctx, f, c, tip, metric)
	})
	if err != nil {
		return nil, err
	}
	if err := b.storeRevert(ctx, f.ID, rep); err != nil {
		return nil, err
	}
	if req.PR && rep.Revert.Verdict == record.RevertRestores && rep.Revert.PR == nil {
		if err := b.openRevertPR(ctx, f.ID, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// revertable is the stored finding named by id and its culprit, when it
// has one confirmed culprit to revert.
func (b *Bot) revertable(id string) (*record.Finding, record.Culprit, error) {
	if id == "" {
		return nil, record.Culprit{}, &record.InputError{Err: errors.New("revert: no finding named")}
	}
	f, ok, err := b.Store.Finding(id)
	switch {
	case err != nil:
		return nil, record.Culprit{}, &record.InputError{Err: fmt.Errorf("revert: finding %s: %w", id, err)}
	case !ok:
		return nil, record.Culprit{}, &record.InputError{Err: fmt.Errorf("revert: no finding %s", id)}
	case f.Outcome != record.OutcomeCulprit || len(f.Culprits) != 1:
		return nil, record.Culprit{}, &record.InputError{Err: fmt.Errorf("revert: finding %s names no single culprit (%s)", f.ID, f.Outcome)}
	case len(f.Culprits[0].Commit.Parents) == 0:
		return nil, record.Culprit{}, &record.InputError{Err: fmt.Errorf("revert: the culprit of finding %s has no parent", f.ID)}
	case f.Unconfirmed != "":
		return nil, record.Culprit{}, &record.InputError{Err: fmt.Errorf("revert: the culprit of finding %s is not confirmed: %s", f.ID, f.Unconfirmed)}
	}
	return &f, f.Culprits[0], nil
}

// revertTip resolves the revision to revert on: rev, or the watched
// branch's tip after a fetch.
func (b *Bot) revertTip(ctx context.Context, rev string) (record.Commit, error) {
	if rev == "" {
		if err := b.Repo.Fetch(ctx); err != nil {
			return record.Commit{}, &record.InfraError{Op: "fetch", Err: err}
		}
		rev = b.Config.Repo.Branch
		if rev == "" {
			rev = "HEAD"
		}
	}
	return b.resolve(ctx, rev)
}

// revert is the body of the revert job.
func (b *Bot) revert(ctx context.Context, f *record.Finding, c record.Culprit, tip record.Commit, metric record.Metric) (*RevertReport, error) {
	meter := b.startMeter()
	rep := &RevertReport{Finding: f.ID, Culprit: c.Commit.Hash, Metric: metric.Name, JobID: b.job.rec.ID}
	rev := &rep.Revert
	rev.Tip, rev.Measured = tip, b.now()
	p, err := b.Repo.Diff(ctx, c.Commit.Parents[0], c.Commit.Hash)
	if err != nil {
		return nil, fmt.Errorf("revert %s: %w", c.Commit.Short(), err)
	}
	rev.Hunks = revertHunks(p, c.Hunks)
	what := "the whole commit"
	if len(rev.Hunks) > 0 {
		what = num.Count(len(rev.Hunks), "hunk")
	}
	b.progressf("revert %s (%s) on tip %s", c.Commit.Short(), what, tip.Short())
	msg := fmt.Sprintf("Revert %q\n\nThis reverts %s of commit %s, which perfbot found to cost %s\nin %s (finding %s).\n",
		c.Commit.Subject, what, c.Commit.Hash, c.Effect, metric.Name, f.ID)
	r, err := b.Repo.RevertOnto(ctx, tip.Hash, p, rev.Hunks, f.ID+"/"+tip.Short(), msg)
	var conflict *gitops.RevertConflict
	switch {
	case errors.As(err, &conflict):
		rev.Verdict, rev.Conflicts = record.RevertConflicts, conflict.Files
	case errors.Is(err, gitops.ErrNotOnTip):
		rev.Verdict = record.RevertNotOnTip
	case err != nil:
		return nil, fmt.Errorf("revert %s on %s: %w", c.Commit.Short(), tip.Short(), err)
	default:
		rev.Commit, rev.Patch, rev.Undone = r.Commit, r.Diff, r.Undone
		if err := b.measureRevert(ctx, f, tip, metric, rev); err != nil {
			return nil, err
		}
	}
	b.progressf("  %s", rev.Text())
	rep.Cost = meter.read()
	return rep, nil
}

// revertHunks are the ids of the culprit's localized hunks in p, the
// culprit's own diff; none (the whole commit) when it has none or the
// diff no longer holds them all.
func revertHunks(p *gitops.Patch, hunks []record.Hunk) []string {
	var ids []string
	for _, h := range hunks {
		if p.Hunk(h.ID) == nil {
			return nil
		}
		ids = append(ids, h.ID)
	}
	return ids
}

// measureRevert measures the revert commit beside the tip by the rules
// of a confirmation, looking for the change opposite to the finding's,
// and sets the verdict.
func (b *Bot) measureRevert(ctx context.Context, f *record.Finding, tip record.Commit, metric record.Metric, rev *record.RevertOnTip) error {
	dir := record.Improvement
	if f.Direction == record.Improvement {
		dir = record.Regression
	}
	conf, err := bisect.Confirm(ctx, commitOracle{o: b.Oracle, metric: metric.Name}, tip.Hash, rev.Commit, bisect.ConfirmOptions{
		Better:    metric.Better,
		Direction: dir,
		OnProbe:   func(e bisect.ProbeEvent) { b.progressf("%s", probeLine(e)) },
	})
	if err != nil {
		return fmt.Errorf("measure the revert on %s: %w", tip.Short(), err)
	}
	rev.Pairs, rev.Fresh = conf.Pairs, conf.Fresh
	switch conf.Verdict {
	case bisect.Confirmed:
		rev.Verdict, rev.Effect = record.RevertRestores, &conf.Effect
	case bisect.Unmeasurable:
		rev.Verdict, rev.Reason = record.RevertUnmeasurable, "the tip or the reverted tip does not build or benchmark"
	default:
		rev.Verdict, rev.Effect = record.RevertNoGain, &conf.Effect
	}
	return nil
}

// storeRevert puts the verdict on the finding's culprit, with how it
// differs from the one before, and comments on the finding's issue when
// it is new or changed (a draft PR opened before stays with it while the
// revert is the same commit).
func (b *Bot) storeRevert(ctx context.Context, id string, rep *RevertReport) error {
	f, ok, err := b.Store.Finding(id)
	if err != nil || !ok {
		return fmt.Errorf("revert: read finding %s: %v", id, err)
	}
	c := &f.Culprits[0]
	old := c.Revert
	if old != nil && old.Commit == rep.Revert.Commit && old.Commit != "" && rep.Revert.PR == nil {
		rep.Revert.PR = old.PR
	}
	rep.Changed = rep.Revert.Changed(old)
	same := old != nil && old.Tip.Hash == rep.Revert.Tip.Hash && old.Verdict == rep.Revert.Verdict
	c.Revert = &rep.Revert
	if err := b.Store.PutFinding(f); err != nil {
		return fmt.Errorf("revert: store finding %s: %w", id, err)
	}
	if f.State != record.StateFiled || f.Issue == 0 || same || (old != nil && rep.Changed == "") {
		return nil
	}
	return b.commentRevert(ctx, &f, old, rep)
}

// checkRevertPR reports what stops a draft pull request before anything
// is measured: report.revert_pr off, no push remote, no token.
func (b *Bot) checkRevertPR() error {
	cfg := b.Config
	switch {
	case !cfg.Report.RevertPR:
		return &record.InputError{Err: errors.New("revert: draft pull requests are off: set report.revert_pr: true")}
	case cfg.GitHub.Repo == "" || cfg.GitHub.PushRemote == "":
		return &record.InputError{Err: errors.New("revert: draft pull requests need github.repo and github.push_remote")}
	}
	_, err := b.tracker()
	return err
}

// openRevertPR pushes the revert commit to perfbot's branch of the push
// remote and opens a draft pull request into the watched branch with the
// evidence, then stores it with the finding. The branch is never the
// watched one.
func (b *Bot) openRevertPR(ctx context.Context, id string, rep *RevertReport) error {
	f, ok, err := b.Store.Finding(id)
	if err != nil || !ok {
		return fmt.Errorf("revert: read finding %s: %v", id, err)
	}
	base := b.Config.Repo.Branch
	if base == "" {
		return &record.InputError{Err: errors.New("revert: repo.branch is not set: a draft pull request needs the branch to merge into")}
	}
	branch := gitops.RevertBranchPrefix + f.ID
	if branch == base {
		return &record.InputError{Err: fmt.Errorf("revert: branch %s is the watched branch", branch)}
	}
	t, err := b.tracker()
	if err != nil {
		return err
	}
	pr, ok := t.(report.PullRequester)
	if !ok {
		return &record.InputError{Err: errors.New("revert: the configured tracker cannot open pull requests")}
	}
	title, body, err := report.RevertPR(&f, secretValues(b.Config))
	if err != nil {
		return err
	}
	if err := b.Repo.PushRevert(ctx, b.Config.GitHub.PushRemote, rep.Revert.Commit, branch, os.Getenv(b.Config.GitHub.TokenEnv)); err != nil {
		return &record.InfraError{Op: "push", Err: err}
	}
	got, err := pr.OpenDraft(ctx, report.DraftPR{Title: title, Body: body, Head: branch, Base: base})
	if err != nil {
		return fmt.Errorf("revert: %w", err)
	}
	b.progressf("draft pull request #%d %s from %s", got.Number, got.URL, branch)
	rep.Revert.PR = &got
	f.Culprits[0].Revert.PR = &got
	if err := b.Store.PutFinding(f); err != nil {
		return fmt.Errorf("revert: store finding %s: %w", id, err)
	}
	return nil
}

// commentRevert posts the verdict to the finding's issue and, when the
// tip no longer has the regression and report.close_fixed is set, closes
// the issue.
func (b *Bot) commentRevert(ctx context.Context, f *record.Finding, old *record.RevertOnTip, rep *RevertReport) error {
	t, err := b.tracker()
	if err != nil {
		return err
	}
	closing := rep.Revert.Gone() && b.Config.Report.CloseFixed
	closer, canClose := t.(report.Closer)
	closing = closing && canClose
	body, err := report.RevertComment(f, rep.Changed, closing, secretValues(b.Config))
	if err != nil {
		return err
	}
	if err := t.Comment(ctx, f.Issue, body); err != nil {
		return fmt.Errorf("revert: comment on issue %d: %w", f.Issue, err)
	}
	rep.Commented = f.Issue
	b.progressf("finding %s: commented on issue #%d", f.ID, f.Issue)
	if !closing {
		return nil
	}
	if err := closer.Close(ctx, f.Issue); err != nil {
		return fmt.Errorf("revert: close issue %d: %w", f.Issue, err)
	}
	b.progressf("finding %s: closed issue #%d: the tip no longer has the regression", f.ID, f.Issue)
	return nil
}
