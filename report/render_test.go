package report

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/record"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./report -update to create it")
	assert.Equal(t, string(want), got, "golden file %s differs; run go test ./report -update and review the diff", path)
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		finding *record.Finding
	}{
		{"culprit_hunks", culpritWithHunks()},
		{"culprit_no_hunks", culpritWithoutHunks()},
		{"culprit_dependency", culpritDependency()},
		{"culprit_python_descent", culpritPythonDescent()},
		{"two_culprits", twoCulprits()},
		{"candidates", candidates()},
		{"inconclusive", inconclusive()},
		{"not_reproduced", notReproduced()},
		{"not_reproduced_other_way", notReproducedOtherWay()},
		{"suspicious", suspicious()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, body, err := Render(tc.finding)
			require.NoError(t, err)
			golden(t, filepath.Join("render", tc.name+".md"), "# "+title+"\n\n"+body)

			assert.Contains(t, body, "<!-- perfbot:fingerprint="+tc.finding.Fingerprint()+" -->")
			fp, ok := fingerprintIn(body)
			assert.True(t, ok)
			assert.Equal(t, tc.finding.Fingerprint(), fp)
		})
	}
}

func TestRenderTitles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		finding *record.Finding
		want    string
	}{
		{"one culprit", culpritWithHunks(), "verify_tok_s −14.8% at 3f2a9c1e00 (communicator)"},
		{"no hunks", culpritWithoutHunks(), "verify_tok_s −14.8% at 3f2a9c1e00"},
		{"two culprits", twoCulprits(), "verify_tok_s 2 culprits: −3.1% at 3f2a9c1e00, −2.8% at 5c6d7e8f90 (communicator, moe)"},
		{"candidates", candidates(), "verify_tok_s −14.8% in 2 candidate commits a1b2c3d4e5..9e8d7c6b5a"},
		{"not reproduced", notReproduced(), "verify_tok_s: change between a1b2c3d4e5 and 9e8d7c6b5a not reproduced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, _, err := Render(tc.finding)
			require.NoError(t, err)
			assert.Equal(t, tc.want, title)
		})
	}
}

func TestRenderRejectsBadFindings(t *testing.T) {
	noCulprit := culpritWithHunks()
	noCulprit.Culprits = nil
	noCandidates := candidates()
	noCandidates.Candidates = nil
	noMetric := culpritWithHunks()
	noMetric.Metric = ""
	odd := culpritWithHunks()
	odd.Outcome = "maybe"
	for _, tc := range []struct {
		name    string
		finding *record.Finding
		want    string
	}{
		{"nil", nil, "nil finding"},
		{"culprit outcome without culprits", noCulprit, `outcome "culprit" without culprits`},
		{"candidates outcome without candidates", noCandidates, `outcome "candidates" without candidates`},
		{"no metric", noMetric, "metric is empty"},
		{"unknown outcome", odd, `unknown outcome "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Render(tc.finding)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestRenderLeavesFindingAlone(t *testing.T) {
	f := suspicious()
	before, err := json.Marshal(f)
	require.NoError(t, err)
	_, _, err = Render(f)
	require.NoError(t, err)
	after, err := json.Marshal(f)
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(after))
}

func TestRenderKeepsBodyUnderGitHubLimit(t *testing.T) {
	f := culpritWithHunks()
	var log strings.Builder
	for i := 0; log.Len() < 200_000; i++ {
		log.WriteString("step " + strings.Repeat("x", 60) + "\n")
	}
	log.WriteString("FATAL: NCCL error: unhandled system error (last line)\n")
	f.Logs = log.String()
	big := strings.Repeat("+\tc.symm.AllReduce(buf) // unrolled\n", 3000)
	f.Culprits[0].Hunks[0].Diff = "@@ -41,9 +41,3009 @@\n" + big

	_, body, err := Render(f)
	require.NoError(t, err)
	// Contains would print the whole 65 KB body on failure.
	assert.LessOrEqual(t, utf8.RuneCountInString(body), MaxBodyRunes)
	assert.Greater(t, utf8.RuneCountInString(body), MaxBodyRunes-1000, "the log fills what is left")
	assert.True(t, strings.Contains(body, "FATAL: NCCL error: unhandled system error (last line)"), "the tail of the log is kept")
	assert.True(t, strings.Contains(body, "bytes before it left out"), "the cut is said")
	assert.True(t, strings.Contains(body, "… 2921 more lines"), "the diff is cut to 80 lines")
	assert.True(t, strings.HasSuffix(body, marker(f.Fingerprint())+"\n"), "the marker survives")
}

func TestWarnings(t *testing.T) {
	withCulprit := func(edit func(c *record.Culprit)) *record.Finding {
		f := culpritWithoutHunks()
		edit(&f.Culprits[0])
		return f
	}
	lowConfidence := culpritWithoutHunks()
	lowConfidence.Confidence = 0.85
	customCut := culpritWithoutHunks()
	customCut.PublishConfidence = 0.995
	envDiff := culpritWithoutHunks()
	envDiff.EnvDiffs = []record.EnvDiff{{Name: "NCCL_P2P_LEVEL", Good: "SYS", Bad: "NVL"}}
	for _, tc := range []struct {
		name    string
		finding *record.Finding
		want    []string // substrings, one per expected warning
	}{
		{"clean culprit", culpritWithoutHunks(), nil},
		{"merge commit", withCulprit(func(c *record.Culprit) { c.Commit.Parents = []string{"p1", "p2"} }), []string{"is a merge commit (2 parents)"}},
		{"docs only", withCulprit(func(c *record.Culprit) { c.Commit.Files = []string{"docs/nccl.md", "README.md"} }), []string{"only files named like documentation or tests"}},
		{"tests only", withCulprit(func(c *record.Culprit) {
			c.Commit.Files = []string{"engine/moe/router_test.go", "python/tests/test_topk.py", "engine/testdata/x.json"}
		}), []string{"only files named like documentation or tests"}},
		{"code and tests", withCulprit(func(c *record.Culprit) {
			c.Commit.Files = []string{"engine/moe/router.go", "engine/moe/router_test.go"}
		}), nil},
		{"build identical", withCulprit(func(c *record.Culprit) { c.BuildIdentical = true }), []string{"builds to the same output as its parent"}},
		{"low confidence", lowConfidence, []string{"Confidence 85.0% is below the publish cut-off 90.0%"}},
		{"custom cut-off", customCut, []string{"Confidence 99.3% is below the publish cut-off 99.5%"}},
		{"environment differs", envDiff, []string{"different environments (NCCL_P2P_LEVEL)"}},
		{"not reproduced has no confidence warning", notReproduced(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Warnings(tc.finding)
			require.Len(t, got, len(tc.want), "warnings: %q", got)
			for i, w := range tc.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

// TestWarningsKeepAMeasuredEffect: a culprit whose files are named like
// documentation or tests (speed.txt, read by the benchmark, under
// testdata/) is not explained away by their names: the warning says that
// they are not code and that the effect is measured all the same.
func TestWarningsKeepAMeasuredEffect(t *testing.T) {
	confirmed := func(files ...string) *record.Finding {
		f := culpritWithoutHunks()
		f.Culprits[0].Commit.Files = files
		return f
	}
	unconfirmed := func(files ...string) *record.Finding {
		f := confirmed(files...)
		f.Culprits[0].Confirmation.Confirmed = false
		return f
	}
	for _, tc := range []struct {
		name    string
		finding *record.Finding
		want    string
	}{
		{"data the benchmark reads, confirmed", confirmed("testdata/speed.txt"), "its effect is measured all the same, and confirmed: the build or the benchmark reads them."},
		{"docs, confirmed", confirmed("docs/speed.md"), "its effect is measured all the same, and confirmed"},
		{"a test file, not confirmed", unconfirmed("engine/bench_test.go"), "its effect is measured all the same: if it holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := strings.Join(Warnings(tc.finding), "\n")
			assert.Contains(t, ws, "changes no program code")
			assert.Contains(t, ws, tc.want)
			assert.NotContains(t, ws, "cannot change")
			_, body, err := Render(tc.finding)
			require.NoError(t, err)
			assert.NotContains(t, body, "cannot change")
		})
	}
}

// TestRenderOtherWay: ends that differ the other way are not "not
// reproduced": the issue says which way they differ, by how much, and the
// command that searches it.
func TestRenderOtherWay(t *testing.T) {
	for _, tc := range []struct {
		name     string
		finding  *record.Finding
		want     []string
		dontWant []string
	}{
		{name: "a regression searched as an improvement", finding: notReproducedOtherWay(),
			want: []string{"# verify_tok_s: no improvement between a1b2c3d4e5 and 9e8d7c6b5a, but a regression of −21.0% the other way\n",
				"was searched for an improvement between", "they differ the other way, a regression of −21.0% [−21.9%, −20.1%] (medians 1,011 and 798.5 tok/s",
				"```sh\nperfbot bisect --good a1b2c3d4e5 --bad 9e8d7c6b5a --metric verify_tok_s --direction regression\n```"},
			dontWant: []string{"did not reproduce"}},
		{name: "ends alike", finding: notReproduced(), want: []string{"measuring both ends again did not reproduce it"}, dontWant: []string{"the other way"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, body, err := Render(tc.finding)
			require.NoError(t, err)
			body = "# " + title + "\n" + body
			for _, w := range tc.want {
				assert.Contains(t, body, w)
			}
			for _, w := range tc.dontWant {
				assert.NotContains(t, body, w)
			}
		})
	}
}

// TestRenderNotMeasured: an effect of the hunks that was not measured
// reads "not measured" in the issue, never a measured zero.
func TestRenderNotMeasured(t *testing.T) {
	measured := &record.Effect{Pct: -14.1, Interval: record.Interval{Lo: -15.3, Hi: -12.9}}
	for _, tc := range []struct {
		name   string
		effect record.HunkEffect
		want   []string
	}{
		{"reverted not measured", record.HunkEffect{Applied: measured},
			[]string{"- **applied alone** on the culprit's parent: −14.1% [−15.3%, −12.9%] (95% of the culprit's change)", "- **reverted alone** from the culprit: not measured"}},
		{"applied not measured", record.HunkEffect{Reverted: measured},
			[]string{"- **applied alone** on the culprit's parent: not measured\n", "- **reverted alone** from the culprit: −14.1%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := culpritWithHunks()
			f.Culprits[0].HunkEffect = &tc.effect
			_, body, err := Render(f)
			require.NoError(t, err)
			for _, w := range tc.want {
				assert.Contains(t, body, w)
			}
			assert.NotContains(t, body, "0.0% [")
		})
	}
}

// TestRenderFoldsTheDiff: a rewrite's hunk is named in a heading with the
// lines it adds and removes, and its diff is folded in a <details>
// section, not spread over the issue.
func TestRenderFoldsTheDiff(t *testing.T) {
	var rewrite strings.Builder
	rewrite.WriteString("@@ -10,50 +10,50 @@ func Select(xs []int) int {\n")
	for i := range 50 {
		rewrite.WriteString("-\told := xs[" + strconv.Itoa(i) + "]\n")
	}
	for i := range 50 {
		rewrite.WriteString("+\tnew := xs[" + strconv.Itoa(i) + "]\n")
	}
	for _, tc := range []struct {
		name    string
		hunk    record.Hunk
		heading string
	}{
		{"a rewrite", record.Hunk{ID: "h1", File: "engine/topk/select.go", Function: "Select", OldStart: 10, OldLines: 50, NewStart: 10, NewLines: 50, Diff: rewrite.String()},
			"#### `engine/topk/select.go` lines 10–59 · func `Select` · +50 −50\n\n<details><summary>Diff</summary>\n\n```diff\n@@ -10,50"},
		{"a small change", culpritWithHunks().Culprits[0].Hunks[0],
			"· component **communicator** · +4 −3\n\n<details><summary>Diff</summary>\n\n```diff\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := culpritWithHunks()
			f.Culprits[0].Hunks = []record.Hunk{tc.hunk}
			_, body, err := Render(f)
			require.NoError(t, err)
			require.Contains(t, body, tc.heading)
			require.Contains(t, body, "```\n\n</details>\n\n#### Effect of the hunks")
		})
	}
}

func TestFormatting(t *testing.T) {
	assert.Equal(t, "−14.8%", formatPct(-14.79))
	assert.Equal(t, "+3.2%", formatPct(3.2))
	assert.Equal(t, "0.0%", formatPct(-0.01))
	assert.Equal(t, "n/a", formatPct(math.NaN()))
	assert.Equal(t, "> 99.9%", num.Confidence(0.99999), "never a certain 100% (internal/num)")
	assert.Equal(t, "99.8%", num.Confidence(0.9987), "confidence rounds down")
	assert.Equal(t, "88.8", formatNum(88.8), "as every view prints it (internal/num)")
	assert.Equal(t, "12,350", formatNum(12345.6))
	assert.Equal(t, "0.01234", formatNum(0.01234))

	assert.Equal(t, "▁▁█▅ ▅", sparkline([]float64{1, 1, 8, 5, math.NaN(), 4.5}))
	assert.Equal(t, "▅▅▅", sparkline([]float64{3, 3, 3}))

	assert.Equal(t, "``a`b``", codeSpan("a`b"), "a span holding a backtick uses a longer fence")
	assert.Equal(t, "`` `x ``", codeSpan("`x"), "a span starting with a backtick is padded")
	assert.Equal(t, "````diff\n```\n````", fenced("diff", "```\n"), "a block holding a fence uses a longer one")
	assert.Equal(t, "`a\\|b`", tableCell("a|b"))

	escaped := escapeText("thanks @bob | see #12 <b>x</b>")
	assert.NotContains(t, escaped, "@bob", "no mention from commit text")
	assert.NotContains(t, escaped, " | ")
	assert.NotContains(t, escaped, "<b>")
}
