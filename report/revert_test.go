package report

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report/reporttest"
)

const revertPatch = `diff --git a/engine/communicator/allreduce.go b/engine/communicator/allreduce.go
index 1111111..2222222 100644
--- a/engine/communicator/allreduce.go
+++ b/engine/communicator/allreduce.go
@@ -41,3 +41,2 @@ func (c *Communicator) AllReduce(buf []float32) error {
-	if err := c.barrier(); err != nil {
-		return err
-	}
+	// no barrier: the ring orders itself
`

// withRevert is culpritWithHunks with a proof by revert on a later tip.
func withRevert(verdict record.RevertVerdict) *record.Finding {
	f := culpritWithHunks()
	rev := &record.RevertOnTip{
		Verdict:  verdict,
		Tip:      record.Commit{Hash: "7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a", Subject: "sampler: top-k fast path", URL: "https://github.com/perfbot/infer/commit/7a7a7a7a7a"},
		Hunks:    []string{"h3"},
		Measured: time.Date(2026, 12, 1, 3, 4, 0, 0, time.UTC),
	}
	switch verdict {
	case record.RevertRestores, record.RevertNoGain:
		rev.Commit = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"
		rev.Patch = revertPatch
		rev.Pairs, rev.Fresh = 6, 12
		rev.Effect = &record.Effect{Pct: 16.2, Interval: record.Interval{Lo: 14.9, Hi: 17.4}}
		if verdict == record.RevertNoGain {
			rev.Effect = &record.Effect{Pct: 0.3, Interval: record.Interval{Lo: -0.8, Hi: 1.2}}
		}
	case record.RevertConflicts:
		rev.Conflicts = []string{"engine/communicator/allreduce.go"}
	}
	f.Culprits[0].Revert = rev
	f.Culprits[0].Dependencies = []record.DependencyChange{{Kind: record.DependencyGo, Name: "example.com/kern", File: "go.mod", Old: "v1.2.0", New: "v1.4.1"}}
	return f
}

// The issue of a culprit carries the proof by revert under the culprit,
// with the revert as a patch; the comment and the draft pull request say
// it in their own words.
func TestRenderRevert(t *testing.T) {
	for _, v := range []record.RevertVerdict{record.RevertRestores, record.RevertConflicts, record.RevertNotOnTip, record.RevertNoGain} {
		t.Run(string(v), func(t *testing.T) {
			f := withRevert(v)
			title, body, err := Render(f)
			require.NoError(t, err)
			golden(t, filepath.Join("revert", string(v)+".md"), "# "+title+"\n\n"+body)
			assert.Contains(t, body, "#### Revert on today's tip")

			changed := map[record.RevertVerdict]string{record.RevertNotOnTip: "fixed upstream", record.RevertConflicts: "the revert no longer applies"}[v]
			comment, err := RevertComment(f, changed, v == record.RevertNotOnTip, nil)
			require.NoError(t, err)
			golden(t, filepath.Join("revert", string(v)+"-comment.md"), comment)
			assert.NotContains(t, comment, "perfbot:fingerprint", "only the issue claims the regression")

			_, pr, err := RevertPR(f, nil)
			if v != record.RevertRestores {
				assert.ErrorContains(t, err, "does not restore")
				return
			}
			require.NoError(t, err)
			golden(t, filepath.Join("revert", "pr.md"), pr)
		})
	}
}

func TestRevertPRScrubsSecrets(t *testing.T) {
	f := withRevert(record.RevertRestores)
	f.Culprits[0].Commit.Subject = "use token hunter2hunter2 for the cache"
	title, body, err := RevertPR(f, []string{"hunter2hunter2"})
	require.NoError(t, err)
	assert.NotContains(t, title+body, "hunter2hunter2")
}

// OpenDraft sends a draft pull request from the branch to the base, and
// a second call for the same head returns the one already open.
func TestOpenDraftAgainstFakeGitHub(t *testing.T) {
	fake := reporttest.NewGitHub(t)
	g, err := NewGitHub(GitHubOptions{Repo: reporttest.Repo, Token: reporttest.Token, APIURL: fake.URL() + "/api/v3/", HTTPClient: fake.Client()})
	require.NoError(t, err)
	ctx := context.Background()
	pr := DraftPR{Title: "Revert x", Body: "evidence", Head: "perfbot/revert-abc", Base: "main"}
	got, err := g.OpenDraft(ctx, pr)
	require.NoError(t, err)
	assert.Equal(t, record.PullRequest{Number: 1, URL: "https://github.example.com/perfbot/infer/pull/1", Branch: "perfbot/revert-abc", Draft: true}, got)
	again, err := g.OpenDraft(ctx, pr)
	require.NoError(t, err)
	assert.Equal(t, got, again)
	pulls := fake.Pulls()
	require.Len(t, pulls, 1)
	assert.Equal(t, reporttest.PullRequest{Number: 1, Title: "Revert x", Body: "evidence", Head: "perfbot/revert-abc", Base: "main", Draft: true, State: "open"}, pulls[0])
	assert.Equal(t, 1, fake.Count(reporttest.RouteCreatePull))

	_, err = g.OpenDraft(ctx, DraftPR{Title: "t", Head: "main", Base: "main"})
	var fe *FileError
	require.ErrorAs(t, err, &fe, "a pull request from the base onto itself is refused")
}

// Close closes the issue on GitHub and in a directory of issues.
func TestClose(t *testing.T) {
	fake := reporttest.NewGitHub(t)
	g, err := NewGitHub(GitHubOptions{Repo: reporttest.Repo, Token: reporttest.Token, APIURL: fake.URL() + "/api/v3/", HTTPClient: fake.Client()})
	require.NoError(t, err)
	n := fake.Add("t", "b", "open")
	require.NoError(t, g.Close(context.Background(), n))
	assert.Equal(t, "closed", fake.Issue(n).State)

	d, err := NewDir(t.TempDir())
	require.NoError(t, err)
	iss, err := d.Create(context.Background(), "t", "b", nil)
	require.NoError(t, err)
	require.NoError(t, d.Close(context.Background(), iss.Number))
	got, err := d.Get(context.Background(), iss.Number)
	require.NoError(t, err)
	assert.Equal(t, IssueClosed, got.State)
}
