package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/configs"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/testbed"
)

// TestServerBisectVerifyRegression bisects the testbed history commit
// that slows the verify path (change b: the tiled attention's extend path
// computes every score twice) through the server benchmark of
// configs/testbed-server.yaml, on a slice of the history around it (four
// commits either side): the culprit is that commit, confirmed, and the
// finding's breakdown attributes the drop to the verify time, with the
// draft and acceptance terms small, as the issue renders it.
func TestServerBisectVerifyRegression(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and serves the engine at each probed commit (minutes on a shared host)")
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "infer")
	m, err := testbed.Generate(context.Background(), repo, 1)
	require.NoError(t, err)
	var change testbed.Change
	for _, c := range m.Changes {
		if c.ID == "b" {
			change = c
		}
	}
	require.Equal(t, "b", change.ID)
	chain := firstParents(t, repo)
	require.Equal(t, change.Commit, chain[change.Index])
	good, bad := chain[change.Index-4], chain[change.Index+4]

	exe, err := os.Executable()
	require.NoError(t, err)
	issues := filepath.Join(dir, "issues")
	example, err := configs.FS.ReadFile("testbed-server.yaml")
	require.NoError(t, err)
	cfg := string(example)
	for _, r := range []struct{ old, new string }{
		{"./testbed-repo", repo},
		{".perfbot/issues", issues},
		{"perfbot loadgen", exe + " loadgen"},
		{"127.0.0.1:8000", freeAddr(t)},
		// The step runs this test binary as perfbot.
		{"    format: openai\n", "    format: openai\n    env: {PERFBOT_TEST_MAIN: \"1\"}\n"},
	} {
		require.Contains(t, cfg, r.old)
		cfg = strings.ReplaceAll(cfg, r.old, r.new)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), []byte(cfg), 0o644))

	out, errOut, code := perfbot(t, dir, "bisect", "--good", good, "--bad", bad, "--file-issue", "--json")
	require.Equal(t, 0, code, errOut)
	var rep struct {
		Verdict  record.Outcome `json:"verdict"`
		Runs     int            `json:"runs"`
		Wall     float64        `json:"wall_seconds"`
		Culprits []struct {
			Commit    string  `json:"commit"`
			Confirmed bool    `json:"confirmed"`
			DeltaPct  float64 `json:"delta_pct"`
		} `json:"culprits"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	t.Logf("server bisection: %s in %d runs, %.0f s", rep.Verdict, rep.Runs, rep.Wall)
	require.Len(t, rep.Culprits, 1, out)
	c := rep.Culprits[0]
	assert.Equal(t, change.Commit, c.Commit, "the culprit is change b")
	assert.True(t, c.Confirmed)
	assert.Less(t, c.DeltaPct, -3.0, "speculation gains less")

	f := findingOf(t, dir, change.Commit)
	require.NotNil(t, f.Speculative, "the finding carries the breakdown")
	require.Len(t, f.Speculative.Terms, 3)
	lead := f.Speculative.Lead()
	assert.Equal(t, record.SpecTermVerify, lead.Name, "%+v", f.Speculative.Terms)
	assert.Positive(t, lead.ChangePct, "the verify pass takes longer")
	for _, term := range f.Speculative.Terms {
		switch term.Name {
		case record.SpecTermAccept:
			// The change computes the same scores: the same tokens are
			// drafted and accepted.
			assert.InDelta(t, 0, term.EffectPct, 0.5, "acceptance is unchanged")
		case record.SpecTermDraft:
			// The draft's own extend runs the slowed path too, but it is
			// one layer against the target's four: its effect was about
			// a third of the verify's (−2.3% against −7.5%).
			assert.Less(t, 1.5*abs(term.EffectPct), abs(lead.EffectPct), "the draft's share is small beside the verify's")
		}
	}

	issue := issueText(t, issues, change.Commit)
	golden(t, "serverbisect-speculative.md.golden", []byte(maskIntervals(maskNumbers(specSection(t, issue)))))
}

// maskIntervals drops the intervals of the terms' changes from masked
// text: whether they have one depends on how many runs of the culprit and
// its parent the bisection took, which the host's noise decides (a change
// that stands out of it is confirmed on fewer than an interval needs).
func maskIntervals(s string) string {
	return strings.NewReplacer(" [N%, N%]", "", " (too few runs for an interval)", "", " n/a", "").Replace(s)
}

// firstParents returns the first-parent chain of main, the root first.
func firstParents(t *testing.T, repo string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "rev-list", "--first-parent", "--reverse", "main").Output()
	require.NoError(t, err)
	return strings.Fields(string(out))
}

// findingOf returns the stored culprit finding of commit.
func findingOf(t *testing.T, dir, commit string) record.Finding {
	t.Helper()
	out, errOut, code := perfbot(t, dir, "findings", "--json")
	require.Equal(t, 0, code, errOut)
	var fs []record.Finding
	require.NoError(t, json.Unmarshal([]byte(out), &fs), out)
	for _, f := range fs {
		if f.Outcome == record.OutcomeCulprit && len(f.Culprits) > 0 && f.Culprits[0].Commit.Hash == commit {
			return f
		}
	}
	t.Fatalf("no culprit finding of %s in %s", commit, out)
	return record.Finding{}
}

// issueText returns the Markdown issue filed for commit.
func issueText(t *testing.T, dir, commit string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	require.NoError(t, err)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		if strings.Contains(string(data), record.ShortHash(commit)) {
			return string(data)
		}
	}
	t.Fatalf("no issue of %s among %v", commit, files)
	return ""
}

// specSection is the issue's speculative-decoding section.
func specSection(t *testing.T, issue string) string {
	t.Helper()
	_, rest, ok := strings.Cut(issue, "### Speculative decoding\n")
	require.True(t, ok, "the issue has a speculative-decoding section:\n%s", issue)
	section, _, _ := strings.Cut(rest, "\n### ")
	return "### Speculative decoding\n" + section
}

var (
	hexHash = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
	number  = regexp.MustCompile(`[+−-]?\d(?:[\d,]*\d)?(?:\.\d+)?`)
)

// maskNumbers replaces commit hashes and measured numbers (with their
// signs) in text, which vary from run to run, and keeps what is rendered
// around them: the rows, the terms in order, the units.
func maskNumbers(text string) string {
	text = hexHash.ReplaceAllString(text, "HASH")
	return number.ReplaceAllString(text, "N")
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
