package service

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
	"github.com/perfbot/perfbot/report/reporttest"
)

// slowBench is a benchmark whose speed comes from the tree it runs in:
// 100 tok/s, 90 while engine.txt holds a "slow" line, with 0.4% noise.
const slowBench = `v=100
grep -q slow engine.txt && v=90
awk -v v=$v -v s="$(od -An -N4 -tu4 /dev/urandom)" 'BEGIN { srand(s); printf "BenchmarkVerifyStep-2 10 1000 ns/op %.3f tok/s\n", v * (1 + 0.004 * (rand() - 0.5)) }'
`

func engineLines(edits map[int]string) string {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		if e, ok := edits[i]; ok {
			b.WriteString(e)
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// revertRepo is a repository whose commit "slow" costs 10% and is followed
// by 20 commits; the tenth of them edits engine.txt with later (nil:
// it leaves it alone).
type revertRepo struct {
	dir             string
	parent, culprit string
	tip             string
	builder         *gitopstest.Builder
}

func newRevertRepo(t *testing.T, later map[int]string) revertRepo {
	t.Helper()
	b := gitopstest.NewBuilder(t)
	parent := b.Commit("base", map[string]string{"engine.txt": engineLines(nil), "bench.sh": slowBench})
	culprit := b.Commit("engine: slow path", map[string]string{"engine.txt": engineLines(map[int]string{20: "line 20 slow\n"})})
	for i := range 20 {
		files := map[string]string{"notes.txt": fmt.Sprintf("%d\n", i)}
		if i == 10 && later != nil {
			edits := map[int]string{20: "line 20 slow\n"}
			for k, v := range later {
				edits[k] = v
			}
			files["engine.txt"] = engineLines(edits)
		}
		b.Commit(fmt.Sprintf("later %d", i+1), files)
	}
	return revertRepo{dir: b.Dir, parent: parent, culprit: culprit, tip: b.Head(), builder: b}
}

func (r revertRepo) config(t *testing.T, extra string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`repo:
  url: %s
  branch: main
build:
  - name: build
    run: "true"
benchmarks:
  - name: engine
    run: sh bench.sh
    format: gobench
metrics:
  - name: verify_tok_s
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/s
%s`, r.dir, extra)), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	return cfg
}

// culpritFinding bisects parent..culprit and stores the finding.
func culpritFindingOf(t *testing.T, b *Bot, r revertRepo) *record.Finding {
	t.Helper()
	ctx := context.Background()
	bis, err := b.Bisect(ctx, BisectRequest{Good: r.parent, Bad: r.culprit})
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, bis.Verdict)
	fs, err := b.StoreFindings(ctx, bis)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	return fs[0]
}

// A culprit reverted on a tip 20 commits later, built and measured beside
// the tip with the real local runner: the revert restores the speed; a
// later commit that builds on the culprit's line makes the revert
// conflict; one that undid it leaves nothing to revert.
func TestRevertOnTip(t *testing.T) {
	tests := []struct {
		name      string
		later     map[int]string
		want      record.RevertVerdict
		conflicts []string
	}{
		{name: "restores on a tip 20 commits later", want: record.RevertRestores},
		{name: "conflicts with a later commit", later: map[int]string{20: "line 20 slow, tuned\n"},
			want: record.RevertConflicts, conflicts: []string{"engine.txt"}},
		{name: "already fixed on tip", later: map[int]string{20: "line 20\n"}, want: record.RevertNotOnTip},
		{name: "no gain where a later commit compensates", later: map[int]string{35: "line 35 slow\n"},
			want: record.RevertNoGain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRevertRepo(t, tt.later)
			b, err := Open(ctx, r.config(t, ""), Options{})
			require.NoError(t, err)
			t.Cleanup(func() { b.Close() })
			f := culpritFindingOf(t, b, r)

			rep, err := b.Revert(ctx, RevertRequest{Finding: f.ID[:6]})
			require.NoError(t, err)
			rev := rep.Revert
			assert.Equal(t, tt.want, rev.Verdict, rev.Text())
			assert.Equal(t, r.tip, rev.Tip.Hash, "the watched branch's tip")
			assert.Equal(t, tt.conflicts, rev.Conflicts)
			switch tt.want {
			case record.RevertRestores:
				require.NotNil(t, rev.Effect)
				assert.InDelta(t, 11.1, rev.Effect.Pct, 1.5, "90 → 100 tok/s")
				assert.Greater(t, rev.Effect.Lo, 0.0)
				assert.GreaterOrEqual(t, rev.Pairs, 4)
				assert.Contains(t, rev.Patch, "-line 20 slow\n+line 20\n")
				assert.Contains(t, rev.Text(), "restores +11")
			case record.RevertNoGain:
				require.NotNil(t, rev.Effect)
				assert.True(t, rev.Effect.Contains(0) || rev.Effect.Hi < 1, rev.Text())
			}
			stored, ok, err := b.Store.Finding(f.ID)
			require.NoError(t, err)
			require.True(t, ok)
			require.NotNil(t, stored.Culprits[0].Revert)
			assert.Equal(t, rev.Verdict, stored.Culprits[0].Revert.Verdict, "the verdict is kept with the culprit")

			runs, _ := b.Oracle.Counts()
			again, err := b.Revert(ctx, RevertRequest{Finding: f.ID})
			require.NoError(t, err)
			assert.Equal(t, rev.Verdict, again.Revert.Verdict)
			after, _ := b.Oracle.Counts()
			assert.Equal(t, runs, after, "the same finding on the same tip measures nothing again")
		})
	}
}

// With report.revert_pr, a revert that restores the speed is pushed to
// perfbot's branch of the push remote and proposed as a draft pull
// request into the watched branch, with the evidence; the watched branch
// of the push remote is not touched.
func TestRevertDraftPR(t *testing.T) {
	ctx := context.Background()
	r := newRevertRepo(t, nil)
	fake := reporttest.NewGitHub(t)
	push := t.TempDir()
	gitIn(t, push, "init", "--quiet", "--bare")
	gitIn(t, r.dir, "push", "--quiet", push, "main")
	t.Setenv("PERFBOT_TEST_TOKEN", reporttest.Token)
	cfg := r.config(t, fmt.Sprintf(`github: {repo: %s, token_env: PERFBOT_TEST_TOKEN, api_url: %s/api/v3/, push_remote: %s}
report: {revert_pr: true}
`, reporttest.Repo, fake.URL(), push))
	b, err := Open(ctx, cfg, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	f := culpritFindingOf(t, b, r)
	require.NoError(t, b.File(ctx, []*record.Finding{f}))
	require.Equal(t, record.StateFiled, f.State)

	rep, err := b.Revert(ctx, RevertRequest{Finding: f.ID, PR: true})
	require.NoError(t, err)
	require.Equal(t, record.RevertRestores, rep.Revert.Verdict)
	require.NotNil(t, rep.Revert.PR)

	pulls := fake.Pulls()
	require.Len(t, pulls, 1)
	pr := pulls[0]
	assert.True(t, pr.Draft, "never a non-draft pull request")
	assert.Equal(t, gitops.RevertBranchPrefix+f.ID, pr.Head)
	assert.Equal(t, "main", pr.Base)
	assert.Contains(t, pr.Title, "Revert \"engine: slow path\": recovers +11")
	assert.Contains(t, pr.Body, f.IssueURL, "the pull request links the issue")
	assert.Contains(t, pr.Body, "**the revert on the tip** +1")
	assert.Contains(t, pr.Body, "interleaved pairs")

	assert.Equal(t, rep.Revert.Commit+"\n", gitIn(t, push, "rev-parse", "refs/heads/"+pr.Head), "the revert is on perfbot's branch")
	assert.Equal(t, r.tip+"\n", gitIn(t, push, "rev-parse", "refs/heads/main"), "the watched branch is untouched")

	iss := fake.Issue(f.Issue)
	require.Len(t, iss.Comments, 1, "the issue hears of the revert")
	assert.Contains(t, iss.Comments[0], "Reverting on tip")

	stored, _, err := b.Store.Finding(f.ID)
	require.NoError(t, err)
	assert.Equal(t, rep.Revert.PR, stored.Culprits[0].Revert.PR)
}

// The nightly measures a filed finding's revert again once it is
// report.recheck_nights old: when a later commit fixed the regression
// upstream, the issue hears so and, with report.close_fixed, is closed.
func TestRevertRecheck(t *testing.T) {
	ctx := context.Background()
	r := newRevertRepo(t, nil)
	cfg := r.config(t, "report: {recheck_nights: 2, close_fixed: true}\n")
	b, err := Open(ctx, cfg, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	f := culpritFindingOf(t, b, r)
	require.NoError(t, b.File(ctx, []*record.Finding{f}))
	require.Equal(t, record.StateFiled, f.State)
	first, err := b.Revert(ctx, RevertRequest{Finding: f.ID})
	require.NoError(t, err)
	require.Equal(t, record.RevertRestores, first.Revert.Verdict)
	require.Equal(t, f.Issue, first.Commented, "the first verdict is posted to the filed issue")

	fix := r.builder.Commit("engine: undo the slow path", map[string]string{"engine.txt": engineLines(nil)})
	measured := first.Revert.Measured
	night := func(hoursLater int) record.Night {
		return record.Night{Time: measured.Add(time.Duration(hoursLater) * time.Hour)}
	}
	jobs, err := b.enqueueRechecks([]record.Night{night(-24), night(24)}, fix)
	require.NoError(t, err)
	assert.Empty(t, jobs, "one night old: not yet")
	jobs, err = b.enqueueRechecks([]record.Night{night(-24), night(24), night(48)}, fix)
	require.NoError(t, err)
	require.Len(t, jobs, 1, "two nights old: measured again on the new tip")

	require.NoError(t, b.Repo.Fetch(ctx))
	again, err := b.Revert(ctx, RevertRequest{Finding: f.ID, Tip: fix})
	require.NoError(t, err)
	assert.Equal(t, record.RevertNotOnTip, again.Revert.Verdict)
	assert.Equal(t, "fixed upstream", again.Changed)
	assert.Equal(t, f.Issue, again.Commented)

	tracker, err := report.NewDir(cfg.IssuesDir)
	require.NoError(t, err)
	iss, err := tracker.Get(ctx, f.Issue)
	require.NoError(t, err)
	assert.Equal(t, report.IssueClosed, iss.State, "report.close_fixed closes it")
	body, err := os.ReadFile(filepath.Join(cfg.IssuesDir, issueFile(t, cfg.IssuesDir)))
	require.NoError(t, err)
	assert.Contains(t, string(body), "Since the last check: fixed upstream.")
	assert.Contains(t, string(body), "closing this issue")

	jobs, err = b.enqueueRechecks([]record.Night{night(24), night(48), night(72)}, fix)
	require.NoError(t, err)
	assert.Empty(t, jobs, "a revert measured on tonight's tip is not measured again")
}

// issueFile is the one Markdown issue of dir.
func issueFile(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.md"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	return filepath.Base(m[0])
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := runGit(dir, args...)
	require.NoError(t, err, "git %v: %s", args, out)
	return out
}

func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
