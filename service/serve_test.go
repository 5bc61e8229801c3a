package service

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// Serve runs the schedule's cycles; cancelled in the middle of an alert
// job (SIGTERM), it returns cleanly with every run it started recorded
// and the job queued, and the next Serve finishes the job.
func TestServeRunsTheScheduleAndStopsCleanly(t *testing.T) {
	h := newNights(t, 17, func(i int) float64 {
		if i >= 9 {
			return 900
		}
		return 1000
	}, nil)
	h.cfg.Schedule = "@every 1s"
	var calls, inside atomic.Int64
	var cancel context.CancelFunc
	for i, c := range h.commits {
		fc := h.host.Commits[c]
		inner := fc.Output
		fc.Output = func(n int) string {
			calls.Add(1)
			// Only the bisection measures the commits inside the range:
			// the cancellation comes during its second probe run.
			if i > 0 && i < 16 && inside.Add(1) == 2 {
				cancel()
			}
			return inner(n)
		}
		h.host.Commits[c] = fc
	}
	h.repo.Git("update-ref", "refs/heads/main", h.commits[0])
	// The schedule runs on the wall clock.
	b, err := Open(context.Background(), h.cfg, Options{Host: h.host})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- b.Serve(ctx, ServeOptions{Poll: 50 * time.Millisecond}) }()

	// The first scheduled cycles measure commit 0; the next sees the
	// branch at commit 16, alerts, and its alert job is under way when
	// the cancellation comes.
	require.Eventually(t, func() bool {
		n, _ := b.Store.Nights()
		return len(n) >= 7 // past detection's warm-up
	}, 30*time.Second, 20*time.Millisecond)
	h.repo.Git("update-ref", "refs/heads/main", h.commits[16])
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("Serve did not stop")
	}

	runs, err := b.Store.Runs(store.RunFilter{})
	require.NoError(t, err)
	require.EqualValues(t, calls.Load(), len(runs), "every run that started was recorded")
	for _, r := range runs {
		require.Equal(t, record.StatusOK, r.Status)
	}
	pending, err := b.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, record.JobAlert, pending[0].Kind)
	require.Equal(t, record.JobQueued, pending[0].Status)

	// A restart finishes it.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() { served <- b.Serve(ctx2, ServeOptions{Poll: 50 * time.Millisecond}) }()
	require.Eventually(t, func() bool {
		j, _, _ := b.Store.Job(pending[0].ID)
		return j.Status == record.JobDone
	}, 60*time.Second, 50*time.Millisecond)
	cancel2()
	require.NoError(t, <-served)
}
