package service

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner/runnertest"
	"github.com/perfbot/perfbot/store"
)

func TestEnqueueQueuesOnce(t *testing.T) {
	h := newNights(t, 4, func(int) float64 { return 1000 }, nil)
	b := h.open()
	req := AlertRequest{Metric: "verify_tok_s", Direction: record.Regression, Good: h.commits[0], Bad: h.commits[3], Night: 2}
	id, err := b.Enqueue(record.JobAlert, req)
	require.NoError(t, err)
	again, err := b.Enqueue(record.JobAlert, req)
	require.NoError(t, err)
	require.Equal(t, id, again)
	pending, err := b.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, record.JobQueued, pending[0].Status)

	_, err = b.Enqueue("weekly", req)
	require.ErrorContains(t, err, `unknown kind of job "weekly"`)
}

// A job stopped between runs stays queued with every run it took
// recorded, and a new process resumes it from them: the ends it measured
// before the stop count in the report it finishes with.
func TestStoppedJobResumesFromItsRuns(t *testing.T) {
	h := newNights(t, 17, func(i int) float64 {
		if i >= 9 {
			return 900
		}
		return 1000
	}, nil)
	var calls atomic.Int64
	var first *Bot
	for _, c := range h.commits {
		fc := h.host.Commits[c]
		inner := fc.Output
		fc.Output = func(n int) string {
			if calls.Add(1) == 8 && first != nil {
				first.Stop() // SIGTERM arrives during the 8th run
			}
			return inner(n)
		}
		h.host.Commits[c] = fc
	}
	first = h.open()
	ctx := context.Background()
	id, err := first.Enqueue(record.JobAlert, AlertRequest{Metric: "verify_tok_s", Direction: record.Regression, Good: h.commits[0], Bad: h.commits[16], Night: 3})
	require.NoError(t, err)
	require.NoError(t, first.Drain(ctx))

	j, ok, err := first.Store.Job(id)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, record.JobQueued, j.Status, "stopped, not failed")
	runs, err := first.Store.Runs(store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, runs, 8, "the run under way when the stop came finished and was recorded")
	goodBefore := 0
	for _, r := range runs {
		require.Equal(t, record.StatusOK, r.Status)
		if r.Target.Commit == h.commits[0] {
			goodBefore++
		}
	}
	require.NoError(t, first.Close())

	second := h.open()
	require.NoError(t, second.Drain(ctx))
	j, _, err = second.Store.Job(id)
	require.NoError(t, err)
	require.Equal(t, record.JobDone, j.Status)
	var rep AlertReport
	require.NoError(t, json.Unmarshal(j.Result, &rep))
	require.Equal(t, h.commits[9], rep.Bisect.Culprits[0].Commit)
	require.GreaterOrEqual(t, rep.Bisect.Good.N, goodBefore, "the good end's runs from before the stop count")
	trace, err := second.Store.Trace(id)
	require.NoError(t, err)
	require.Contains(t, fmt.Sprint(trace), "resuming job "+id)
}

func TestInfrastructureFailureIsRetriedThenFails(t *testing.T) {
	h := newNights(t, 4, func(int) float64 { return 1000 }, nil)
	h.host.Commits[h.commits[3]] = runnertest.FakeCommit{InfraErr: fmt.Errorf("host went away")}
	b := h.open()
	ctx := context.Background()
	id, err := b.Enqueue(record.JobAlert, AlertRequest{Metric: "verify_tok_s", Direction: record.Regression, Good: h.commits[0], Bad: h.commits[3], Night: 2})
	require.NoError(t, err)
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		ran, err := b.WorkOne(ctx)
		require.NoError(t, err)
		require.True(t, ran)
		j, _, err := b.Store.Job(id)
		require.NoError(t, err)
		require.Equal(t, attempt, j.Attempts)
		require.Contains(t, j.Error, "host went away")
		if attempt < maxAttempts {
			require.Equal(t, record.JobQueued, j.Status)
		} else {
			require.Equal(t, record.JobFailed, j.Status)
		}
	}
	ran, err := b.WorkOne(ctx)
	require.NoError(t, err)
	require.False(t, ran, "a failed job leaves the queue")
}

// An alert whose change detection placed a night early would not reproduce
// between its two nights; the job bisects the wider range detection
// allowed and finds the culprit there.
func TestAlertBisectsTheWideRange(t *testing.T) {
	h := newNights(t, 13, func(i int) float64 {
		if i >= 10 {
			return 900
		}
		return 1000
	}, nil)
	b := h.open()
	rep, err := b.Alert(context.Background(), AlertRequest{Metric: "verify_tok_s", Direction: record.Regression,
		Good: h.commits[4], Bad: h.commits[8], WideGood: h.commits[4], WideBad: h.commits[12], Night: 3})
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, rep.Bisect.Verdict)
	require.Equal(t, h.commits[10], rep.Bisect.Culprits[0].Commit)
	require.Equal(t, h.commits[4], rep.Bisect.Good.Commit, "one bisection, of the wide range")
	require.Equal(t, h.commits[12], rep.Bisect.Bad.Commit)
}

// A bisection queued by its request (as the API and perfbot work run it)
// measures through a job of its resolved revisions; the queue's record of
// the request reports what that cost, as a job run by hand does.
func TestQueuedRequestRecordsItsCost(t *testing.T) {
	h := newNights(t, 5, func(i int) float64 {
		if i >= 3 {
			return 900
		}
		return 1000
	}, nil)
	b := h.open()
	ctx := context.Background()
	id, err := b.Enqueue(record.JobBisect, BisectRequest{Good: h.commits[0], Bad: h.commits[4]})
	require.NoError(t, err)
	require.NoError(t, b.Drain(ctx))
	j, _, err := b.Store.Job(id)
	require.NoError(t, err)
	require.Equal(t, record.JobDone, j.Status)
	var rep Bisection
	require.NoError(t, json.Unmarshal(j.Result, &rep))
	require.Positive(t, rep.Runs)
	require.Equal(t, rep.Cost, j.Cost)
}
