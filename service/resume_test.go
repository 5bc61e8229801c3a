package service

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// cutter is a Progress that cancels the job once the host has answered
// after benchmark runs: perfbot interrupted in the middle of a job.
type cutter struct {
	w      *watch
	after  int
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cutter) Write(p []byte) (int, error) {
	if benchRuns(c.w.host) >= c.after {
		c.once.Do(c.cancel)
	}
	return c.w.Write(p)
}

func TestResumedJobReportsTheWholeCost(t *testing.T) {
	r := newHunkRepo(t)
	b, w := r.open(t)
	ctx, cancel := context.WithCancel(context.Background())
	b.Progress = &cutter{w: w, after: 6, cancel: cancel}
	req := BisectRequest{Good: r.commits[0], Bad: r.commits[4]}
	_, err := b.Bisect(ctx, req)
	require.ErrorIs(t, err, context.Canceled)
	first := benchRuns(r.host)
	require.GreaterOrEqual(t, first, 6)

	b.Progress = w
	rep, err := b.Bisect(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, rep.Verdict)
	total := benchRuns(r.host)
	require.Greater(t, total, first, "the resumed attempt measured more")
	assert.Equal(t, total, rep.Runs, "the report counts both attempts' runs (%d + %d)", first, total-first)
	assert.Contains(t, w.lines[len(w.lines)-1].text, "over all its attempts")

	fs, err := b.StoreFindings(context.Background(), rep)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	stored := *fs[0]
	assert.Equal(t, total, stored.Runs)

	// The process dies after the finding was stored but before the job
	// was marked done: the same command resumes, measures nothing, and
	// leaves the finding as it was.
	j, ok, err := b.Store.Job(rep.JobID)
	require.NoError(t, err)
	require.True(t, ok)
	j.Status, j.Result = record.JobRunning, nil
	require.NoError(t, b.Store.PutJob(j))
	again, err := b.Bisect(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, total, benchRuns(r.host), "nothing was measured again")
	assert.Equal(t, total, again.Runs, "the resumed job still reports its whole cost")
	fs, err = b.StoreFindings(context.Background(), again)
	require.NoError(t, err)
	got, ok, err := b.Store.Finding(stored.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, stored.Runs, got.Runs, "the stored finding keeps its cost")
	assert.Equal(t, stored.WallSeconds, got.WallSeconds)
	assert.True(t, stored.Created.Equal(got.Created), "the stored finding is not written again")

	// The culprit and its parent measured again, a bisection that takes
	// the new runs (another job) replaces the evidence, and the finding
	// carries that job's cost.
	_, err = b.Measure(context.Background(), []string{r.commits[2], r.commits[3]}, 40)
	require.NoError(t, err)
	other, err := b.Bisect(context.Background(), BisectRequest{Good: r.commits[0], Bad: r.commits[4], Direction: record.Any})
	require.NoError(t, err)
	_, err = b.StoreFindings(context.Background(), other)
	require.NoError(t, err)
	got, _, err = b.Store.Finding(stored.ID)
	require.NoError(t, err)
	assert.Greater(t, got.Bad.N, stored.Bad.N, "re-measured")
	assert.Equal(t, other.Runs, got.Runs, "re-measured, the finding carries the new job's cost")
}

// TestFindingCarriesTheEvidence checks what a culprit's finding holds for
// the issue an engineer receives: the parent and the culprit as its sides
// with their raw runs and logs, the confirmation's figures, the steps to
// run by hand, the perfbot commands with the configuration and version.
func TestFindingCarriesTheEvidence(t *testing.T) {
	r := newHunkRepo(t)
	b, _ := r.open(t)
	b.Version = "v1.2.3"
	rep, err := b.Bisect(context.Background(), BisectRequest{Good: r.commits[0], Bad: r.commits[4]})
	require.NoError(t, err)
	require.Len(t, rep.Culprits, 1)
	require.NotNil(t, rep.Culprits[0].Confirmation, "the bisection carries the confirmation's figures")
	fs, err := b.StoreFindings(context.Background(), rep)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	f := fs[0]
	assert.Equal(t, r.parent, f.Good.Commit.Hash, "the good side is the culprit's parent")
	assert.Equal(t, r.culprit, f.Bad.Commit.Hash)
	assert.Len(t, f.Good.Runs, countRuns(t, b, r.parent))
	assert.Len(t, f.Bad.Runs, countRuns(t, b, r.culprit))
	c := f.Culprits[0].Confirmation
	require.NotNil(t, c)
	assert.True(t, c.Confirmed)
	assert.Positive(t, c.Pairs)
	assert.Less(t, c.Effect.Hi, 0.0, "the confirmation's interval shows the drop")
	assert.Equal(t, []string{"go build ./...", "./bench"}, f.Steps)
	assert.Equal(t, "v1.2.3", f.Version)
	assert.Equal(t, record.HistoryCommits, f.HistoryOf)
	for _, cmd := range f.Reproduce {
		assert.Contains(t, cmd, "--config "+b.Config.Path)
	}
	assert.Equal(t, rep.Runs, f.Runs, "the finding's cost is the job's")
}

// countRuns counts the ok runs the store holds of commit.
func countRuns(t *testing.T, b *Bot, commit string) int {
	t.Helper()
	e, err := b.Store.Cached(b.Oracle.SpecHash(), record.Target{Commit: commit}.Key())
	require.NoError(t, err)
	return len(e.OK)
}
