package report

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newTestDir(t *testing.T) *Dir {
	t.Helper()
	d, err := NewDir(filepath.Join(t.TempDir(), "issues"))
	require.NoError(t, err)
	d.now = func() time.Time { return day(24, 2) }
	return d
}

// TestDirGolden files two findings, finds one again, and finds the other
// again after it was closed; the directory must match testdata/dir/.
func TestDirGolden(t *testing.T) {
	ctx := context.Background()
	d := newTestDir(t)
	filer := &Filer{Tracker: d, Labels: []string{"perf-regression"}, Reopen: true}

	culprit, cands := culpritWithHunks(), candidates()
	require.NoError(t, filer.File(ctx, culprit))
	require.NoError(t, filer.File(ctx, cands))
	assert.Equal(t, 1, culprit.Issue)
	assert.Equal(t, 2, cands.Issue)
	assert.Equal(t, filepath.Join(d.dir, "1-verify-tok-s-14-8-at-3f2a9c1e00-communicator.md"), culprit.IssueURL)

	require.NoError(t, filer.File(ctx, redetect(culprit)))
	require.NoError(t, d.setState(2, IssueClosed))
	require.NoError(t, filer.File(ctx, redetect(cands)))

	iss, err := d.Get(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, IssueOpen, iss.State, "reopened")

	entries, err := os.ReadDir(d.dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		data, err := os.ReadFile(filepath.Join(d.dir, e.Name()))
		require.NoError(t, err)
		golden(t, filepath.Join("dir", e.Name()), string(data))
	}
	sort.Strings(names)
	assert.Equal(t, []string{
		"1-verify-tok-s-14-8-at-3f2a9c1e00-communicator.md",
		"2-verify-tok-s-14-8-in-2-candidate-commits-a1b2c3d4e5.md", // cut at 60 bytes
		"index.json",
	}, names, "no temporary files are left")
}

func TestDirTracker(t *testing.T) {
	ctx := context.Background()
	d := newTestDir(t)
	body := "evidence\n" + marker("perfbotfp0123456789abcdef0123") + "\n"

	_, ok, err := d.Find(ctx, "perfbotfp0123456789abcdef0123")
	require.NoError(t, err)
	assert.False(t, ok, "an empty directory holds no issue")

	first, err := d.Create(ctx, "First", body, nil)
	require.NoError(t, err)
	second, err := d.Create(ctx, "Second: ünïcode & symbols!", "no marker", []string{"x"})
	require.NoError(t, err)
	assert.Equal(t, 1, first.Number)
	assert.Equal(t, 2, second.Number)
	assert.Equal(t, "2-second-n-code-symbols.md", filepath.Base(second.URL))

	found, ok, err := d.Find(ctx, "perfbotfp0123456789abcdef0123")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, first, found)

	// A new tracker on the same directory continues the numbering.
	d2, err := NewDir(d.dir)
	require.NoError(t, err)
	third, err := d2.Create(ctx, "Third", "b", nil)
	require.NoError(t, err)
	assert.Equal(t, 3, third.Number)

	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"get", func() error { _, err := d.Get(ctx, 9); return err }},
		{"comment", func() error { return d.Comment(ctx, 9, "x") }},
		{"reopen", func() error { return d.Reopen(ctx, 9) }},
	} {
		t.Run("missing issue/"+tc.name, func(t *testing.T) {
			var fe *FileError
			err := tc.call()
			require.True(t, errors.As(err, &fe), "got %v", err)
			assert.Equal(t, http.StatusNotFound, fe.Status)
			assert.Contains(t, err.Error(), "issue 9")
		})
	}
}

func TestDirCorruptIndex(t *testing.T) {
	d := newTestDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(d.dir, "index.json"), []byte("{not json"), 0o644))
	_, err := d.Create(context.Background(), "t", "b", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read issue index")
}
