package service

import (
	"context"
	"fmt"

	"github.com/perfbot/perfbot/record"
)

// enqueueRechecks enqueues a revert job on tonight's tip for every filed
// finding whose proof by revert is report.recheck_nights nights old or
// older; the job comments on the issue when the answer changed (fixed
// upstream, a smaller recovery, a revert that no longer applies) and, with
// report.close_fixed, closes an issue whose regression the tip no longer
// has. It returns the ids of the jobs.
func (b *Bot) enqueueRechecks(nights []record.Night, tip string) ([]string, error) {
	every := b.Config.Report.RecheckNights
	if every <= 0 {
		return nil, nil
	}
	fs, err := b.Store.Findings()
	if err != nil {
		return nil, fmt.Errorf("recheck: list findings: %w", err)
	}
	var jobs []string
	for _, f := range fs {
		if f.State != record.StateFiled || len(f.Culprits) != 1 {
			continue
		}
		rev := f.Culprits[0].Revert
		if rev == nil || rev.Tip.Hash == tip || nightsSince(nights, rev) < every {
			continue
		}
		id, err := b.Enqueue(record.JobRevert, RevertRequest{Finding: f.ID, Tip: tip})
		if err != nil {
			return jobs, fmt.Errorf("recheck finding %s: %w", f.ID, err)
		}
		b.progressf("finding %s: its revert on tip is %d nights old: job %s measures it on %s", f.ID, nightsSince(nights, rev), id, record.ShortHash(tip))
		jobs = append(jobs, id)
	}
	return jobs, nil
}

// nightsSince counts the nights after the revert was measured.
func nightsSince(nights []record.Night, rev *record.RevertOnTip) int {
	n := 0
	for _, night := range nights {
		if night.Time.After(rev.Measured) {
			n++
		}
	}
	return n
}

// revertBeforeFiling proves each confirmed regression culprit of fs by a
// revert on the watched branch's tip (report.revert_on_tip), so that its
// issue carries the verdict; a revert that fails leaves its finding to be
// filed without one, and says why.
func (b *Bot) revertBeforeFiling(ctx context.Context, fs []*record.Finding) error {
	if !b.Config.Report.RevertOnTip {
		return nil
	}
	for i, f := range fs {
		if f.Outcome != record.OutcomeCulprit || f.Unconfirmed != "" || f.State == record.StateFiled {
			continue
		}
		if _, err := b.Revert(ctx, RevertRequest{Finding: f.ID}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			b.progressf("finding %s: no revert on tip: %v", f.ID, err)
			continue
		}
		stored, ok, err := b.Store.Finding(f.ID)
		if err != nil || !ok {
			return fmt.Errorf("read finding %s: %v", f.ID, err)
		}
		fs[i] = &stored
	}
	return nil
}

// revertPRsAfterFiling opens the draft pull request of every filed
// finding whose revert restores the speed (report.revert_pr), so that
// the pull request links its issue.
func (b *Bot) revertPRsAfterFiling(ctx context.Context, fs []*record.Finding) error {
	if !b.Config.Report.RevertPR {
		return nil
	}
	for _, f := range fs {
		if len(f.Culprits) != 1 || f.State != record.StateFiled {
			continue
		}
		rev := f.Culprits[0].Revert
		if rev == nil || rev.Verdict != record.RevertRestores || rev.PR != nil {
			continue
		}
		rep := &RevertReport{Finding: f.ID, Revert: *rev}
		if err := b.openRevertPR(ctx, f.ID, rep); err != nil {
			return err
		}
	}
	return nil
}
