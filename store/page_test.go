package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

// TestHistoryPage: following the cursors returns the whole history, in
// History's order, a page at a time; runs of one stamp split across pages
// lose no metric.
func TestHistoryPage(t *testing.T) {
	db := storetest.Open(t)
	for i := range 7 {
		values := map[string]float64{"verify_tok_s": float64(100 + i), "decode_tok_s": float64(200 + i)}
		if i%3 == 0 {
			values["verify_ms"] = float64(i)
		}
		_, err := db.AddRun(newRun(i, time.Duration(i)*time.Minute, record.StatusOK, values))
		require.NoError(t, err)
	}
	for _, q := range []store.HistoryQuery{{}, {Metric: "verify_tok_s"}, {Commit: commitHash(3)}, {Since: t0.Add(2 * time.Minute)}} {
		for _, limit := range []int{1, 2, 3, 5, 100} {
			t.Run(fmt.Sprintf("%+v/limit%d", q, limit), func(t *testing.T) {
				want, err := db.History(q) // q.Limit is 0: every row
				require.NoError(t, err)
				var got []store.HistoryRow
				after, pages := "", 0
				pq := q
				pq.Limit = limit
				for {
					rows, next, err := db.HistoryPage(pq, after)
					require.NoError(t, err)
					require.LessOrEqual(t, len(rows), limit)
					got = append(got, rows...)
					pages++
					if next == "" {
						break
					}
					after = next
					require.Less(t, pages, 100, "the cursors go round")
				}
				require.Equal(t, want, got)
			})
		}
	}
	_, _, err := db.HistoryPage(store.HistoryQuery{Limit: 1}, "!!")
	require.ErrorIs(t, err, store.ErrBadCursor)
}

// TestListPages: jobs and findings page newest first, ties by id.
func TestListPages(t *testing.T) {
	db := storetest.Open(t)
	for i := range 9 {
		created := t0.Add(time.Duration(i/2) * time.Hour) // pairs share a time
		require.NoError(t, db.PutJob(store.Job{ID: fmt.Sprintf("job%d", i), Kind: record.JobBisect, Status: record.JobDone, Created: created}))
		require.NoError(t, db.PutFinding(record.Finding{ID: fmt.Sprintf("f%d", i), Created: created}))
	}
	wantJobs, err := db.Jobs()
	require.NoError(t, err)
	wantFindings, err := db.Findings()
	require.NoError(t, err)
	for _, limit := range []int{1, 2, 4, 9, 50} {
		var jobs []store.Job
		for after := ""; ; {
			page, next, err := db.JobsPage(after, limit)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), limit)
			jobs = append(jobs, page...)
			if after = next; next == "" {
				break
			}
		}
		require.Equal(t, wantJobs, jobs, "limit %d", limit)
		var fs []record.Finding
		for after := ""; ; {
			page, next, err := db.FindingsPage(after, limit)
			require.NoError(t, err)
			fs = append(fs, page...)
			if after = next; next == "" {
				break
			}
		}
		require.Equal(t, wantFindings, fs, "limit %d", limit)
	}
}
