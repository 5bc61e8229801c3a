package service

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/record"
)

// AlertRequest is one change that a nightly cycle detected: the metric,
// its direction and the two nightly tips that bracket it.
type AlertRequest struct {
	Metric    string           `json:"metric"`
	Direction record.Direction `json:"direction"`
	Good      string           `json:"good"`
	Bad       string           `json:"bad"`
	// Night is the night the change was first seen; DeltaPct what the
	// nights showed.
	Night    uint64  `json:"night"`
	DeltaPct float64 `json:"delta_pct"`
	// WideGood and WideBad bracket every night detection could place the
	// change on (the nights holding 95% of its posterior) and the night
	// before them; when set, that range is bisected rather than Good..Bad,
	// the likeliest night's.
	WideGood string `json:"wide_good,omitempty"`
	WideBad  string `json:"wide_bad,omitempty"`
}

// AlertReport is what an alert job concluded.
type AlertReport struct {
	Request AlertRequest `json:"request"`
	Bisect  *Bisection   `json:"bisect"`
	// Findings are the ids of the findings stored; Issues the issues
	// filed or commented on for them.
	Findings []string `json:"findings"`
	Issues   []string `json:"issues,omitempty"`
}

// Alert acts on one detected change: it bisects the range between the
// nights the change may lie on (the bisection measures both ends again,
// interleaved, so a false alarm costs runs and ends not_reproduced, never
// an issue), continues the confirmed culprits of a regression into their
// hunks, stores the findings and files the regressions. It is a job: after a restart it
// resumes from its recorded runs.
func (b *Bot) Alert(ctx context.Context, req AlertRequest) (*AlertReport, error) {
	if req.Good == "" || req.Bad == "" {
		return nil, &record.InputError{Err: errors.New("alert: good and bad commits are required")}
	}
	if req.Direction != record.Regression && req.Direction != record.Improvement {
		return nil, &record.InputError{Err: fmt.Errorf("alert: direction %q (want regression or improvement)", req.Direction)}
	}
	if _, err := b.metric(req.Metric); err != nil {
		return nil, err
	}
	return runJob(b, record.JobAlert, req, func(jb *Bot, _, _ func(any)) (*AlertReport, error) {
		return jb.alert(ctx, req)
	})
}

func (b *Bot) alert(ctx context.Context, req AlertRequest) (*AlertReport, error) {
	b.progressf("alert: %s %s %+.1f%% between %s and %s (night %d)", req.Metric, req.Direction, req.DeltaPct, record.ShortHash(req.Good), record.ShortHash(req.Bad), req.Night)
	good, bad := req.Good, req.Bad
	if req.WideGood != "" && req.WideBad != "" && (req.WideGood != good || req.WideBad != bad) {
		// A lone outlying night can draw the placement onto itself while
		// the change began a few nights before it: the ends of the
		// likeliest night alone would not show it.
		good, bad = req.WideGood, req.WideBad
		b.progressf("alert: bisecting %s..%s, every night the change may lie on", record.ShortHash(good), record.ShortHash(bad))
	}
	// The ends are measured against what the nights showed: ends that
	// exclude half of it refute the alert (not_reproduced) without the
	// hundreds of runs that excluding bisect.min_effect would take.
	// Only a regression is filed, so only its culprits' hunks are worth
	// their runs.
	rep, err := b.Bisect(ctx, BisectRequest{Good: good, Bad: bad, Metric: req.Metric, Direction: req.Direction,
		Hunks: req.Direction == record.Regression, Expected: math.Abs(req.DeltaPct) / 100})
	if err != nil {
		return nil, err
	}
	if err := b.recordOutcome(req, rep.Verdict); err != nil {
		return nil, fmt.Errorf("alert: record its outcome: %w", err)
	}
	findings, err := b.StoreFindings(ctx, rep)
	if err != nil {
		return nil, err
	}
	out := &AlertReport{Request: req, Bisect: rep, Findings: []string{}}
	var regressions []*record.Finding
	for _, f := range findings {
		out.Findings = append(out.Findings, f.ID)
		if f.Direction == record.Regression && f.Outcome != record.OutcomeNotReproduced {
			regressions = append(regressions, f)
		}
	}
	if rep.Verdict == record.OutcomeNotReproduced {
		b.progressf("alert: the change did not reproduce between %s and %s: a false alarm, nothing filed", record.ShortHash(req.Good), record.ShortHash(req.Bad))
	}
	if err := b.revertBeforeFiling(ctx, regressions); err != nil {
		return nil, err
	}
	if err := b.File(ctx, regressions); err != nil {
		return nil, err
	}
	if err := b.revertPRsAfterFiling(ctx, regressions); err != nil {
		return nil, err
	}
	for _, f := range regressions {
		if f.State == record.StateFiled {
			out.Issues = append(out.Issues, f.IssueURL)
		}
	}
	return out, nil
}
