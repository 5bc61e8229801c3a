package views

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// HistoryQuery selects the samples History returns.
type HistoryQuery struct {
	// Metric is a configured metric; empty selects every metric.
	Metric string
	// Since drops the samples of runs started before it; zero keeps all.
	Since time.Time
	// Limit caps the number of samples; ≤ 0 means no cap.
	Limit int
	// Fingerprints joins each sample with the fingerprint of its run (one
	// more store read per run).
	Fingerprints bool
}

// HistoryRow is one stored sample with what a reader wants beside it: the
// unit of its metric, the subject of its commit and, when asked, the
// fingerprint of its run. It is what `perfbot history --json` prints.
type HistoryRow struct {
	Metric  string  `json:"metric"`
	Unit    string  `json:"unit"`
	Value   float64 `json:"value"`
	Commit  string  `json:"commit"`
	Subject string  `json:"subject,omitempty"`
	// CommitDate is the commit's date, when the store knows the commit.
	CommitDate time.Time `json:"commit_date,omitzero"`
	// Benchmark is the benchmark the value was selected from (the
	// metric's select).
	Benchmark   string              `json:"benchmark,omitempty"`
	Time        time.Time           `json:"time"`
	Host        string              `json:"host"`
	Status      string              `json:"status"`
	RunID       uint64              `json:"run_id"`
	Fingerprint *record.Fingerprint `json:"fingerprint,omitempty"`
}

// History returns the samples q selects, newest first, joined with their
// units, subjects (all read in one transaction) and (when asked)
// fingerprints. A metric that is not
// configured is an *record.InputError. A commit the store knows no subject of,
// or a run it holds no record of, leaves that field empty.
func (v *Views) History(ctx context.Context, q HistoryQuery) ([]HistoryRow, error) {
	if err := v.checkMetric(q.Metric); err != nil {
		return nil, err
	}
	rows, err := v.Store.History(store.HistoryQuery{Metric: q.Metric, Since: q.Since, Limit: q.Limit})
	if err != nil {
		return nil, err
	}
	return v.joinHistory(ctx, rows, q.Fingerprints)
}

// HistoryPage returns the page of History's rows that follows the cursor
// after ("" for the first), of at most q.Limit rows (q.Limit > 0), and the
// cursor of the next page ("" after the last). A cursor it did not return
// is an *record.InputError.
func (v *Views) HistoryPage(ctx context.Context, q HistoryQuery, after string) ([]HistoryRow, string, error) {
	if err := v.checkMetric(q.Metric); err != nil {
		return nil, "", err
	}
	rows, next, err := v.Store.HistoryPage(store.HistoryQuery{Metric: q.Metric, Since: q.Since, Limit: q.Limit}, after)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", &record.InputError{Err: err}
	}
	if err != nil {
		return nil, "", err
	}
	out, err := v.joinHistory(ctx, rows, q.Fingerprints)
	return out, next, err
}

func (v *Views) checkMetric(metric string) error {
	for _, m := range v.Config.Metrics {
		if m.Name == metric {
			return nil
		}
	}
	if metric == "" {
		return nil
	}
	return &record.InputError{Err: fmt.Errorf("metric %q is not configured", metric)}
}

// joinHistory joins the store's rows with their units, subjects (all read
// in one transaction) and, when asked, fingerprints.
func (v *Views) joinHistory(ctx context.Context, rows []store.HistoryRow, fingerprints bool) ([]HistoryRow, error) {
	units, selects := map[string]string{}, map[string]string{}
	for _, m := range v.Config.Metrics {
		units[m.Name], selects[m.Name] = m.Unit, m.Select
	}
	hashes := make([]string, len(rows))
	for i, r := range rows {
		hashes[i] = r.Commit
	}
	commits, err := v.Store.Commits(hashes)
	if err != nil {
		return nil, err
	}
	j := historyJoin{db: v.Store, fingerprints: map[uint64]*record.Fingerprint{}}
	out := make([]HistoryRow, 0, len(rows))
	for _, r := range rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := commits[r.Commit]
		row := HistoryRow{Metric: r.Metric, Unit: units[r.Metric], Value: r.Value, Commit: r.Commit, Subject: c.Subject, CommitDate: c.Date,
			Benchmark: selects[r.Metric], Time: r.Time, Host: r.Host, Status: r.Status, RunID: r.RunID}
		if fingerprints {
			row.Fingerprint = j.fingerprint(r.RunID)
		}
		out = append(out, row)
	}
	return out, nil
}

// historyJoin looks each run up once.
type historyJoin struct {
	db           *store.DB
	fingerprints map[uint64]*record.Fingerprint
}

func (j historyJoin) fingerprint(runID uint64) *record.Fingerprint {
	fp, ok := j.fingerprints[runID]
	if !ok {
		if run, found, err := j.db.Run(runID); err == nil && found {
			fp = &run.Fingerprint
		}
		j.fingerprints[runID] = fp
	}
	return fp
}
