package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/secret"
)

// memIndex is the store's fingerprint → issue map, in memory.
type memIndex struct {
	issues map[string]int
}

func newMemIndex() *memIndex { return &memIndex{issues: map[string]int{}} }

func (m *memIndex) IssueFor(fp string) (int, bool, error) {
	n, ok := m.issues[fp]
	return n, ok, nil
}

var _ IssueIndex = (*memIndex)(nil)

// redetect is the same regression found again a day later: a new Finding
// value with the same fingerprint.
func redetect(f *record.Finding) *record.Finding {
	g := *f
	g.Created = f.Created.Add(24 * time.Hour)
	g.State, g.Issue, g.IssueURL, g.FileError = "", 0, "", ""
	return &g
}

func newTestFiler(t *testing.T, fake *fakeGitHub, index IssueIndex) *Filer {
	g, _, _ := newTestGitHub(t, fake, nil)
	f := &Filer{Tracker: g, Labels: []string{"perf-regression"}}
	if index != nil {
		f.Index = index
	}
	return f
}

func TestFilerOneIssuePerRegression(t *testing.T) {
	for _, tc := range []struct {
		name  string
		index *memIndex
	}{
		{"with the store's index", newMemIndex()},
		{"marker only", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			fake := newFakeGitHub(t)
			var index IssueIndex
			if tc.index != nil {
				index = tc.index
			}
			filer := newTestFiler(t, fake, index)
			first := culpritWithHunks()

			require.NoError(t, filer.File(ctx, first))
			assert.Equal(t, record.StateFiled, first.State)
			assert.Equal(t, 1, first.Issue)
			assert.Equal(t, "https://github.example.com/perfbot/infer/issues/1", first.IssueURL)
			assert.Equal(t, []string{"perf-regression", "component:communicator"}, fake.Issue(1).Labels)
			if tc.index != nil {
				// The caller stores the issue with its finding.
				tc.index.issues[first.Fingerprint()] = first.Issue
			}

			before := fake.Total()
			require.NoError(t, filer.File(ctx, first), "filing the same finding again")
			assert.Equal(t, before, fake.Total(), "an already filed finding sends nothing")

			again := redetect(first)
			require.NoError(t, filer.File(ctx, again))
			assert.Equal(t, record.StateFiled, again.State)
			assert.Equal(t, 1, again.Issue)

			assert.Equal(t, 1, fake.IssueCount(), "one issue")
			comments := fake.Issue(1).Comments
			require.Len(t, comments, 1, "the re-detection is a comment")
			assert.Contains(t, comments[0], "perfbot found this regression again. (2026-11-24 02:03 UTC)")
			assert.Contains(t, comments[0], "### Summary", "the comment carries the new evidence")
		})
	}
}

func TestFilerClosedIssue(t *testing.T) {
	for _, tc := range []struct {
		name        string
		reopen      bool
		wantState   string
		wantComment string
	}{
		{"reopened", true, IssueOpen, "found this regression again and reopened this issue."},
		{"left closed", false, IssueClosed, "after this issue was closed. It stays closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			fake := newFakeGitHub(t)
			filer := newTestFiler(t, fake, newMemIndex())
			filer.Reopen = tc.reopen
			first := culpritWithHunks()
			require.NoError(t, filer.File(ctx, first))
			fake.SetState(1, IssueClosed) // someone fixed it, or thought so

			require.NoError(t, filer.File(ctx, redetect(first)))
			iss := fake.Issue(1)
			assert.Equal(t, tc.wantState, iss.State)
			require.Len(t, iss.Comments, 1)
			assert.Contains(t, iss.Comments[0], tc.wantComment)
			assert.Equal(t, 1, fake.IssueCount())
		})
	}
}

func TestFilerKeeps(t *testing.T) {
	lowConfidence := culpritWithHunks()
	lowConfidence.Confidence = 0.8
	commentOnly := culpritWithHunks()
	commentOnly.Culprits[0].NoCodeChange = true
	for _, tc := range []struct {
		name    string
		finding *record.Finding
	}{
		{"not reproduced", notReproduced()},
		{"below the publish cut-off", lowConfidence},
		{"inconclusive", inconclusive()},
		{"a culprit that changes only comments", commentOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeGitHub(t)
			filer := newTestFiler(t, fake, newMemIndex())
			require.NoError(t, filer.File(context.Background(), tc.finding))
			assert.Equal(t, record.StateKept, tc.finding.State)
			assert.Zero(t, tc.finding.Issue)
			assert.Zero(t, fake.Total(), "nothing is sent")
		})
	}
}

func TestFilerPublishCutOff(t *testing.T) {
	fake := newFakeGitHub(t)
	filer := newTestFiler(t, fake, nil)
	filer.PublishConfidence = 0.66 // syzbot's
	f := culpritWithHunks()
	f.Confidence = 0.7
	require.NoError(t, filer.File(context.Background(), f))
	assert.Equal(t, record.StateFiled, f.State)
	assert.Equal(t, 0.66, f.PublishConfidence)
}

func TestFilerUnfiled(t *testing.T) {
	fake := newFakeGitHub(t)
	filer := newTestFiler(t, fake, nil)
	fake.Fail(routeList, statusFault(http.StatusUnauthorized, "Bad credentials"))
	f := culpritWithHunks()

	err := filer.File(context.Background(), f)
	require.Error(t, err)
	var fe *FileError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, http.StatusUnauthorized, fe.Status)
	assert.Equal(t, record.StateUnfiled, f.State)
	assert.Contains(t, f.FileError, "401 Unauthorized: Bad credentials")
	assert.Zero(t, fake.IssueCount())

	// The retry of an unfiled finding files it.
	require.NoError(t, filer.File(context.Background(), f))
	assert.Equal(t, record.StateFiled, f.State)
	assert.Empty(t, f.FileError)
}

func TestFilerIndexPointsAtMissingIssue(t *testing.T) {
	fake := newFakeGitHub(t)
	index := newMemIndex()
	f := culpritWithHunks()
	index.issues[f.Fingerprint()] = 7 // deleted, or filed in another repo
	filer := newTestFiler(t, fake, index)

	require.NoError(t, filer.File(context.Background(), f))
	assert.Equal(t, 1, f.Issue, "a new issue, which the finding stored with it records")
}

// TestFilerNeverLeaksToken files through failures whose answers quote the
// Authorization header, and looks for the token in everything the filer
// produced: errors, logs, the finding, the issue bodies.
func TestFilerNeverLeaksToken(t *testing.T) {
	ctx := context.Background()
	fake := newFakeGitHub(t)
	fake.EchoAuth = true
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g, _, _ := newTestGitHub(t, fake, func(o *GitHubOptions) { o.Logger = logger })
	filer := &Filer{Tracker: g, Labels: []string{"perf-regression"}, Logger: logger}
	fake.Fail(routeList, secondaryRateLimit("1"), badGateway())
	fake.Fail(routeCreate, validationFailed())

	f := culpritWithHunks()
	err := filer.File(ctx, f)
	require.Error(t, err)
	require.NoError(t, filer.File(ctx, f))
	require.NoError(t, filer.File(ctx, redetect(f)))

	stored, jerr := json.Marshal(f)
	require.NoError(t, jerr)
	everything := err.Error() + "\n" + logs.String() + "\n" + string(stored)
	for n := 1; n <= fake.IssueCount(); n++ {
		iss := fake.Issue(n)
		everything += iss.Title + iss.Body
		for _, c := range iss.Comments {
			everything += c
		}
	}
	assert.Contains(t, everything, secret.Mask, "the server did echo the header")
	assert.NotContains(t, everything, testToken)
}
