package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/demo"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/views"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The printing functions on fixed values, against golden files: what a
// person reads (NAME.golden) and what a script reads (NAME.json.golden).
// Run `go test ./cmd/perfbot -run TestPrint -update` after a deliberate
// change and read the diff.
func TestPrint(t *testing.T) {
	tests := []struct {
		name  string
		print func(io.Writer) error
		value any // printed as JSON; nil: the command has no JSON form
	}{
		{"bisect-culprits", func(w io.Writer) error { return printBisect(w, bisectCulprits(), false) }, bisectJSON(bisectCulprits())},
		{"bisect-descent", func(w io.Writer) error { return printBisect(w, bisectDescent(), false) }, bisectJSON(bisectDescent())},
		{"bisect-descent-python", func(w io.Writer) error { return printBisect(w, bisectDescentPython(), false) }, bisectJSON(bisectDescentPython())},
		{"bisect-candidates", func(w io.Writer) error { return printBisect(w, bisectCandidates(), false) }, bisectJSON(bisectCandidates())},
		{"bisect-other-way", func(w io.Writer) error { return printBisect(w, bisectOtherWay(), false) }, bisectJSON(bisectOtherWay())},
		{"hunks", func(w io.Writer) error { return printHunks(w, hunksReport(), false) }, hunksJSON(hunksReport())},
		{"hunks-diff", func(w io.Writer) error { return printHunks(w, hunksReport(), true) }, nil},
		{"hunks-docs-only", func(w io.Writer) error { return printHunks(w, hunksDocsOnly(), false) }, hunksJSON(hunksDocsOnly())},
		{"hunks-incomplete", func(w io.Writer) error { return printHunks(w, hunksIncomplete(), false) }, hunksJSON(hunksIncomplete())},
		{"hunks-budget-spent", func(w io.Writer) error { return printHunks(w, hunksBudgetSpent(), false) }, hunksJSON(hunksBudgetSpent())},
		{"demo", func(w io.Writer) error { return printDemo(w, demoSummary()) }, demoSummary()},
		{"findings", func(w io.Writer) error { return printFindings(w, findingsList()) }, findingsList()},
		{"findings-none", func(w io.Writer) error { return printFindings(w, []record.Finding{}) }, []record.Finding{}},
		{"measure", func(w io.Writer) error { return printMeasurements(w, measurements()) }, measurements()},
		{"envbisect", func(w io.Writer) error { return printEnvBisect(w, envBisectReport()) }, envBisectJSON(envBisectReport())},
		{"history", func(w io.Writer) error { return printHistory(w, historyRows(), time.UTC) }, historyRows()},
		{"history-csv", func(w io.Writer) error { return writeHistoryCSV(w, historyRows()) }, nil},
		{"history-benchstat", func(w io.Writer) error { return writeHistoryBenchstat(w, historyRows()) }, nil},
		{"nightly", func(w io.Writer) error { return printNight(w, nightReport()) }, nightReport()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var text bytes.Buffer
			require.NoError(t, tt.print(&text))
			golden(t, tt.name+".golden", text.Bytes())
			if tt.value != nil {
				var js bytes.Buffer
				require.NoError(t, writeJSON(&js, tt.value))
				golden(t, tt.name+".json.golden", js.Bytes())
			}
		})
	}
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to write it")
	require.Equal(t, string(want), string(got), "%s differs; run go test -update and read the diff", path)
}

// Fixed values: a regression of the verify step by a communicator change,
// as in report's fixtures.

var (
	hGood    = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	hProbe1  = "b0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d"
	hCulprit = "3f2a9c1e00d4b5a6978877665544332211aabbcc"
	hSecond  = "5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f"
	hBad     = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807"
)

const allreduceDiff = `@@ -41,9 +41,10 @@ func (c *Communicator) AllReduce(buf []float32) error {
 	if len(buf) == 0 {
 		return nil
 	}
-	if c.custom != nil && len(buf)*4 <= c.customMax {
-		return c.custom.AllReduce(buf)
-	}
+	// Symmetric memory wins on NVLink; use it first everywhere.
+	if c.symm != nil {
+		return c.symm.AllReduce(buf)
+	}
 	return c.nccl.AllReduce(buf)
 }
`

func hunksReport() *service.HunksReport {
	return &service.HunksReport{
		Base: hProbe1, Change: hCulprit, Subject: "communicator: prefer symmetric memory allreduce on every topology",
		Metric: "verify_tok_s", Direction: record.Regression, TotalHunks: 5,
		Hunks: []record.Hunk{{ID: "h2", File: "engine/communicator/allreduce.go", Component: "communicator", Function: "(*Communicator).AllReduce",
			OldStart: 41, OldLines: 9, NewStart: 41, NewLines: 10, Diff: allreduceDiff}},
		Applied:  effect(-14.2, -15.1, -13.3, 12),
		Reverted: effect(16.4, 15.2, 17.5, 12),
		Tests: []minimize.Test{
			{Set: []string{"h1", "h2"}, Side: "bad", N: 6, Median: 75.7, PBad: 0.99, Outcome: "bad"},
			{Set: []string{"h3"}, Side: "good", N: 6, Median: 88.7, PBad: 0.01, Outcome: "good"},
		},
		Unresolved:     [][]string{{"h4"}},
		Configurations: 7, Cost: record.Cost{Runs: 42, Builds: 7, WallSeconds: 611.4},
		Warnings: []record.Warning{{Kind: record.WarnNote, Text: "h4 did not apply alone"}},
	}
}

// effect is a measured effect of pct [lo, hi] over n samples.
func effect(pct, lo, hi float64, n int) minimize.Effect {
	return minimize.Effect{Effect: record.Effect{Pct: pct, Interval: record.Interval{Lo: lo, Hi: hi}}, N: n}
}

// hunksIncomplete is a hunk search whose bad end with the set reverted
// did not build: its effect was not measured.
func hunksIncomplete() *service.HunksReport {
	r := hunksReport()
	r.Reverted = minimize.Effect{}
	r.Warnings = []record.Warning{{Kind: record.WarnSetIncomplete}}
	return r
}

// hunksBudgetSpent is a search that spent its budget, most of it on
// configurations that did not build, before it could name a hunk: the
// change lies in the two hunks of one file.
func hunksBudgetSpent() *service.HunksReport {
	r := hunksReport()
	r.Hunks, r.Tests = []record.Hunk{}, []minimize.Test{{Set: []string{"h1", "h2"}, Side: "bad", Broken: true, Outcome: "unresolved", PBad: 0.5}}
	r.Applied, r.Reverted = effect(-14.9, -15.8, -14.0, 12), effect(17.5, 16.3, 18.8, 12)
	r.Unresolved = [][]string{{"h1", "h2"}}
	r.Warnings = []record.Warning{{Kind: record.WarnSetBudgetSpent, Runs: 200, Count: 151, Commits: []string{"h1", "h2"}}}
	return r
}

// hunksDocsOnly is the answer of hunks for a commit that touches
// documentation only: nothing measured.
func hunksDocsOnly() *service.HunksReport {
	return &service.HunksReport{
		Base: hProbe1, Change: hCulprit, Subject: "docs: the tuning guide", Metric: "verify_tok_s", Direction: record.Regression, TotalHunks: 3,
		Hunks: []record.Hunk{}, Tests: []minimize.Test{}, Unresolved: [][]string{},
		NoRuntimeChange: "every changed file is documentation (README.md, docs/tuning.md): nothing a build or benchmark reads changed, so no hunk can change the benchmark; nothing was measured",
	}
}

// commits are the commits the bisections below name.
var commits = []record.Commit{
	{Hash: hGood, Subject: "attention: tune split-kv", Author: "Ravi Shah"},
	{Hash: hProbe1, Subject: "spec: count accepted draft tokens", Author: "Ravi Shah", Parents: []string{hGood}},
	{Hash: hCulprit, Subject: "communicator: prefer symmetric memory allreduce on every topology", Author: "Mei Lin", Parents: []string{hProbe1}},
	{Hash: hSecond, Subject: "moe: route shared experts before top-k gating", Author: "Jonas Berg", Parents: []string{hCulprit}},
	{Hash: hBad, Subject: "topk: stable sort", Author: "Ana Ruiz", Parents: []string{hSecond}},
}

// end summarizes n runs of commit around median.
func end(commit string, n int, median, lo, hi float64) bisect.EndSummary {
	return bisect.EndSummary{Commit: commit, N: n, Median: median, Interval: record.Interval{Lo: lo, Hi: hi}, Confidence: 0.98}
}

func bisectCulprits() *service.Bisection {
	confirmed := &bisect.Confirmation{Commit: hCulprit, Parent: hProbe1, Verdict: bisect.Confirmed, Confirmed: true, Pairs: 6, Fresh: 6,
		Effect: record.Effect{Pct: -14.6, Interval: record.Interval{Lo: -15.9, Hi: -13.2}}, ParentRuns: end(hProbe1, 6, 88.7, 88.2, 89.1), SelfRuns: end(hCulprit, 6, 75.7, 75.1, 76.2)}
	refuted := &bisect.Confirmation{Commit: hSecond, Parent: hCulprit, Verdict: bisect.NotShown, Pairs: 18, Fresh: 18,
		Effect: record.Effect{Pct: -0.4, Interval: record.Interval{Lo: -1.2, Hi: 0.5}}, ParentRuns: end(hCulprit, 18, 75.7, 75.4, 76.0), SelfRuns: end(hSecond, 18, 75.4, 75.1, 75.8)}
	return &service.Bisection{
		Metric: "verify_tok_s", Unit: "tok/s",
		Result: bisect.Result{
			Verdict: record.OutcomeCulprit, Direction: record.Regression,
			Good: end(hGood, 10, 88.8, 88.1, 89.4), Bad: end(hBad, 10, 75.66, 74.9, 76.3),
			Culprits: []bisect.Culprit{
				{Commit: hCulprit, Index: 7, Confidence: 0.9987, Effect: record.Effect{Pct: -14.8, Interval: record.Interval{Lo: -15.6, Hi: -14.0}}, Direction: record.Regression,
					Parent: confirmed.ParentRuns, Self: confirmed.SelfRuns, Confirmation: confirmed},
				{Commit: hSecond, Index: 9, Confidence: 0.991, Effect: record.Effect{Pct: -2.3, Interval: record.Interval{Lo: -3.1, Hi: -1.4}}, Direction: record.Regression,
					Parent: refuted.ParentRuns, Self: refuted.SelfRuns, Confirmation: refuted},
			},
			Probes: []bisect.Probe{
				{Commit: hGood, Index: 0, N: 10, Median: 88.8, Status: "ok", Side: "good"},
				{Commit: hProbe1, Index: 6, N: 5, Median: 88.7, Status: "ok", Side: "good"},
				{Commit: hCulprit, Index: 7, N: 5, Median: 75.7, Status: "ok", Side: "bad"},
				{Commit: hSecond, Index: 9, N: 5, Median: 0, Status: "broken"},
				{Commit: hBad, Index: 12, N: 10, Median: 75.66, Status: "ok", Side: "bad"},
			},
			Samples: 64,
			Warnings: []record.Warning{{Kind: record.WarnOutliers, Count: 12},
				{Kind: record.WarnUnconfirmed, Commit: hSecond, Count: 18, Pct: -0.4, LoPct: -1.2, HiPct: 0.5}},
		},
		Commits: commits,
		Hunks:   map[string]*service.HunksReport{hCulprit: hunksReport()},
		Cost:    record.Cost{Runs: 64, Builds: 9, WallSeconds: 1342.5}, JobID: "bisect-0a1b2c3d",
		Findings: []string{"0123456789", "fedcba9876"},
	}
}

// bisectDescent is bisectCulprits whose first culprit bumps a Go module,
// descended into its versions and then its commits, beside a Python pin
// that was not.
func bisectDescent() *service.Bisection {
	b := bisectCulprits()
	b.Hunks = nil
	kern := record.DependencyChange{Kind: record.DependencyGo, Name: "example.com/kern", File: "go.mod", Old: "v1.0.0", New: "v1.4.0"}
	slow := "5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80"
	b.Descents = map[string][]record.Descent{hCulprit: {
		{Dependency: kern, Over: record.DescentVersions, Searched: 5, Outcome: record.OutcomeCulprit, Before: "v1.2.0", Culprit: "v1.3.0",
			Effect: record.Effect{Pct: -14.6, Interval: record.Interval{Lo: -15.5, Hi: -13.8}}, Confidence: 0.995, Confirmed: true,
			Steps: []record.DescentStep{
				{Version: "v1.0.0", Commit: hProbe1, N: 6, Median: 88.62, Verdict: "end"},
				{Version: "v1.2.0", Commit: hProbe1, N: 8, Median: 88.7, Verdict: "good"},
				{Version: "v1.3.0", Commit: hProbe1, N: 8, Median: 75.7, Verdict: "bad"},
				{Version: "v1.4.0", Commit: hProbe1, N: 6, Median: 75.58, Verdict: "end"},
			}},
		{Dependency: kern, Over: record.DescentCommits, Searched: 4, Outcome: record.OutcomeCulprit,
			Before: "4a5b6c7d8e9f00112233445566778899aabbccdd", Culprit: slow,
			Commit:        &record.Commit{Hash: slow, Subject: "kern: split the attention tile", Author: "Kern Dev"},
			PseudoVersion: "v1.2.1-0.20260122100000-5d6e7f8091a2",
			Effect:        record.Effect{Pct: -14.7, Interval: record.Interval{Lo: -15.6, Hi: -13.9}}, Confidence: 0.993, Confirmed: true,
			Hunks: []record.Hunk{{ID: "h1", File: "_perfbot_deps/example.com_kern/tile.go", Function: "Tile", OldStart: 12, OldLines: 3, NewStart: 12, NewLines: 3,
				Diff: "@@ -12,3 +12,3 @@ func Tile() int {\n-\treturn 128\n+\treturn 64\n }\n"}},
			Steps: []record.DescentStep{
				{Version: "4a5b6c7d8e9f00112233445566778899aabbccdd", Commit: hProbe1, N: 6, Median: 88.7, Verdict: "end"},
				{Version: slow, Commit: hProbe1, N: 8, Median: 75.69, Verdict: "bad"},
				{Version: "7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2", Commit: hProbe1, N: 6, Median: 75.7, Verdict: "end"},
			}},
	}}
	b.Warnings = append(b.Warnings, record.Warning{Kind: record.WarnNotDescended, Commit: hCulprit, Text: "torch 2.3.0 → 2.4.1 (requirements.txt)",
		Reasons: []string{"no wheels directory is configured for torch (dependencies: {name: torch, wheels: DIR})"}})
	return b
}

// bisectDescentPython is bisectCulprits whose first culprit bumps a
// Python pin, descended into the versions of its wheels directory.
func bisectDescentPython() *service.Bisection {
	b := bisectCulprits()
	b.Hunks = nil
	fi := record.DependencyChange{Kind: record.DependencyPython, Name: "flashinfer-python", File: "requirements.txt", Old: "0.2.14", New: "0.2.16"}
	b.Descents = map[string][]record.Descent{hCulprit: {
		{Dependency: fi, Over: record.DescentVersions, Searched: 5, Outcome: record.OutcomeCulprit, Before: "0.2.14", Culprit: "0.2.14.post1",
			Effect: record.Effect{Pct: -14.6, Interval: record.Interval{Lo: -15.5, Hi: -13.8}}, Confidence: 0.995, Confirmed: true,
			Steps: []record.DescentStep{
				{Version: "0.2.14", Commit: hProbe1, N: 6, Median: 88.62, Verdict: "end"},
				{Version: "0.2.14.post1", Commit: hProbe1, N: 8, Median: 75.7, Verdict: "bad"},
				{Version: "0.2.15", Commit: hProbe1, N: 4, Median: 75.66, Verdict: "bad"},
				{Version: "0.2.16", Commit: hProbe1, N: 6, Median: 75.58, Verdict: "end"},
			}},
	}}
	return b
}

func bisectCandidates() *service.Bisection {
	return &service.Bisection{
		Metric: "verify_tok_s", Unit: "tok/s",
		Result: bisect.Result{
			Verdict: record.OutcomeCandidates, Direction: record.Regression,
			Good: end(hGood, 10, 88.8, 88.1, 89.4), Bad: end(hBad, 10, 75.66, 74.9, 76.3),
			Candidates: []string{hCulprit, hSecond},
			Skipped:    []string{hCulprit},
			Probes: []bisect.Probe{
				{Commit: hGood, Index: 0, N: 10, Median: 88.8, Status: "ok", Side: "good"},
				{Commit: hCulprit, Index: 1, Status: "broken"},
				{Commit: hBad, Index: 2, N: 10, Median: 75.66, Status: "ok", Side: "bad"},
			},
			Samples: 20,
		},
		Commits: []record.Commit{{Hash: hGood}, {Hash: hCulprit, Subject: "broken build"}, {Hash: hSecond, Subject: "fix the build"}, {Hash: hBad}},
		Cost:    record.Cost{Runs: 21, Builds: 3, WallSeconds: 98}, JobID: "bisect-4e5f6a7b",
	}
}

// bisectOtherWay is an improvement searched on ends that regressed by
// 21%.
func bisectOtherWay() *service.Bisection {
	return &service.Bisection{
		Metric: "verify_tok_s", Unit: "tok/s",
		Result: bisect.Result{
			Verdict: record.OutcomeNotReproduced, Direction: record.Improvement,
			Good: end(hGood, 16, 1011, 1004, 1019), Bad: end(hBad, 16, 798.5, 791.2, 805.9),
			Probes: []bisect.Probe{
				{Commit: hGood, Index: 0, N: 16, Median: 1011, Status: "ok", Side: "good"},
				{Commit: hBad, Index: 4, N: 16, Median: 798.5, Status: "ok", Side: "bad"},
			},
			Samples:  32,
			Warnings: []record.Warning{{Kind: record.WarnOtherDirection, From: hGood, To: hBad, Direction: record.Regression, Pct: -21.0, LoPct: -21.9, HiPct: -20.1}},
		},
		Commits: commits,
		Cost:    record.Cost{Runs: 32, Builds: 2, WallSeconds: 64}, JobID: "bisect-5e6f7a8b",
	}
}

func demoSummary() *demo.Summary {
	return &demo.Summary{
		Repo: "/home/me/demo-out/testbed-repo", Commits: 120, Nights: 15, Alerts: 5, Runs: 812, Builds: 131, Wall: 905.2,
		Rows: []demo.Row{
			{Change: "a", Kind: "regression", TrueCommit: hCulprit, IntendedPct: -8, TrueHunk: "engine/attention/tiled.go::(*tiled).Extend",
				FoundCommit: hCulprit, FoundHunk: "engine/attention/tiled.go::(*tiled).Extend", Component: "attention",
				DeltaPct: -7.9, Confidence: 0.998, CommitMatch: true, HunkMatch: true, Night: 4, Issue: "#1"},
			{Change: "b", Kind: "improvement", TrueCommit: hProbe1, IntendedPct: 6, FoundCommit: hProbe1, DeltaPct: 6.2, Confidence: 0.995, CommitMatch: true},
			{Change: "c", Kind: "regression", TrueCommit: hSecond, IntendedPct: -5, TrueHunk: "engine/moe/router.go::Route",
				FoundCommit: hSecond, FoundHunk: "engine/moe/router.go::Route", Component: "moe", DeltaPct: -4.8, Confidence: 0.993,
				CommitMatch: true, HunkMatch: true, Unconfirmed: true},
			{Change: "d", Kind: "regression", TrueCommit: hBad, IntendedPct: -3},
			{Change: "e", Kind: "non_runtime", TrueCommit: hGood},
			{Change: "f", Kind: "improvement", TrueCommit: "e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819", IntendedPct: 11, Night: 12, Noted: true},
			{Change: "-", Kind: "unexpected", FoundCommit: "c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7", DeltaPct: -2.1, Confidence: 0.991, Issue: "#2"},
			{Change: "-", Kind: "unexpected", FoundCommit: "d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708", DeltaPct: 6.9, Confidence: 0.978, Component: "attention", Night: 13, NoCode: true},
		},
		Issues: []string{"/home/me/demo-out/issues/1-verify-tok-s-7-9-at-3f2a9c1e00-attention.md", "/home/me/demo-out/issues/2-verify-tok-s-2-1-at-c4d5e6f708.md"},
	}
}

func nightReport() *service.NightReport {
	return &service.NightReport{
		Night: record.Night{Seq: 31, Branch: "main", Tip: hBad, Reference: hGood, New: []string{hProbe1, hBad}, Status: record.StatusOK,
			Metrics: map[string]record.NightMetric{
				"verify_cost":    {Tip: []float64{5.21, 5.13, 5.3}, Ref: []float64{5.52, 5.61, 5.49}, Level: 5.55, Values: []float64{5.24, 5.07, 5.36}},
				"allreduce_gbps": {Tip: []float64{0.31, 0.3, 0.32}, Ref: []float64{0.3, 0.31, 0.3}, Level: 0.3, RefWeight: 1, Values: []float64{0.31, 0.29, 0.32}},
			}},
		Alerts: []service.AlertNote{
			{Metric: "verify_cost", Direction: record.Regression, Good: hGood, Bad: hProbe1, DeltaPct: 6.1, Night: 29, Job: "alert-5c9d99de7605"},
			{Metric: "verify_cost", Direction: record.Improvement, Good: hProbe1, Bad: hBad, DeltaPct: -8.3, Night: 30,
				Note: "an improvement: noted, not bisected (detect.improvements: note)", Unbisected: &record.Range{Good: hGood, Bad: hBad}},
		},
		Cost: record.Cost{Runs: 15, Builds: 2, WallSeconds: 11.4},
	}
}

func findingsList() []record.Finding {
	day := func(d int) time.Time { return time.Date(2026, 11, d, 2, 3, 0, 0, time.UTC) }
	culprit := func(hash string, delta, conf float64) []record.Culprit {
		return []record.Culprit{{Commit: record.Commit{Hash: hash}, Confidence: conf, Effect: record.Effect{Pct: delta}}}
	}
	return []record.Finding{
		{ID: "0123456789", Created: day(23), Outcome: record.OutcomeCulprit, Metric: "verify_tok_s", Direction: record.Regression,
			Culprits: culprit(hCulprit, -14.8, 0.9987), Components: []string{"communicator"}, Confidence: 0.9987,
			State: record.StateFiled, Issue: 12, IssueURL: "https://github.com/example/infer/issues/12"},
		{ID: "9a8b7c6d5e", Created: day(22), Outcome: record.OutcomeCulprit, Metric: "decode_tok_s", Direction: record.Regression,
			Culprits: culprit(hSecond, -2.3, 0.93), Components: []string{"moe", "attention"}, Confidence: 0.93,
			State: record.StateUnfiled, FileError: "create issue in example/infer: 401 Bad credentials"},
		{ID: "5566778899", Created: day(21), Outcome: record.OutcomeCulprit, Metric: "verify_tok_s", Direction: record.Improvement,
			Culprits: culprit(hProbe1, 6.2, 0.995), Confidence: 0.995, State: record.StateKept},
		{ID: "ffeeddccbb", Created: day(20), Outcome: record.OutcomeNotReproduced, Metric: "verify_tok_s", Direction: record.Regression,
			State: record.StateKept},
	}
}

func historyRows() []views.HistoryRow {
	t0 := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	fp := &record.Fingerprint{Host: "gpu1", OS: "linux", CPUModel: "AMD EPYC 9654", CPUs: 8, Env: map[string]string{"NCCL_PROTO": "LL", "API_TOKEN": "[redacted]"}}
	benchmarks := map[string]string{"verify_tok_s": "BenchmarkVerifyStep", "decode_tok_s": "BenchmarkDecode", "allreduce_gbps": "BenchmarkAllReduce"}
	dates := map[string]time.Time{hGood: t0.Add(-48 * time.Hour), hCulprit: t0.Add(-24 * time.Hour)}
	row := func(h int, commit, subject, metric, unit string, v float64, run uint64) views.HistoryRow {
		return views.HistoryRow{Metric: metric, Unit: unit, Value: v, Commit: commit, Subject: subject, CommitDate: dates[commit],
			Benchmark: benchmarks[metric], Time: t0.Add(time.Duration(h) * time.Hour), Host: "gpu1", Status: "ok", RunID: run, Fingerprint: fp}
	}
	// Newest first, as History returns them.
	return []views.HistoryRow{
		row(2, hCulprit, "communicator: prefer symmetric memory allreduce on every topology", "verify_tok_s", "tok/s", 75.66, 3),
		row(1, hGood, "attention: tune split-kv", "decode_tok_s", "tok/s", 142.5, 2),
		row(1, hGood, "attention: tune split-kv", "verify_tok_s", "tok/s", 88.8, 2),
		row(0, hGood, "attention: tune split-kv", "verify_tok_s", "tok/s", 88.71, 1),
		row(0, strings.Repeat("0", 40), "", "allreduce_gbps", "GB/s", 181.25, 1),
	}
}

func measurements() []service.Measurement {
	return []service.Measurement{
		{Rev: "HEAD~1", Commit: hGood, Subject: "attention: tune split-kv", Status: record.StatusOK,
			Metrics: []record.MetricSummary{{Metric: "verify_tok_s", Unit: "tok/s", N: 10, Median: 88.8, Lo: 88.1, Hi: 89.4}}},
		{Rev: "HEAD", Commit: hBad, Subject: "topk: stable sort", Status: record.StatusBuildFailed,
			Error: "build: exit status 1\nmain.go:3: syntax error", Metrics: []record.MetricSummary{{Metric: "verify_tok_s", Unit: "tok/s"}}},
	}
}

func envBisectReport() *service.EnvBisectReport {
	return &service.EnvBisectReport{
		Commit: hBad, Metric: "verify_tok_s",
		Differing: []string{"NCCL_ALGO", "NCCL_PROTO", "NCCL_P2P_LEVEL"}, Minimal: []string{"NCCL_PROTO"},
		Good:     map[string]string{"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL", "NCCL_P2P_LEVEL": "SYS"},
		Bad:      map[string]string{"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple", "NCCL_P2P_LEVEL": ""},
		Applied:  effect(-9.1, -10.2, -8.0, 6),
		Reverted: effect(10.3, 9.1, 11.6, 6),
		Tests:    []minimize.Test{{Set: []string{"NCCL_PROTO"}, Side: "bad", N: 6, Median: 80.7, PBad: 0.99, Outcome: "bad"}},
		Cost:     record.Cost{Runs: 30, Builds: 1, WallSeconds: 140},
	}
}

// TestConfidenceReadsAlike: the findings table and the issue of one
// finding print its confidence by one rule (num.Confidence), which never
// rounds up to a certainty.
func TestConfidenceReadsAlike(t *testing.T) {
	for _, tc := range []struct {
		name       string
		confidence float64
		want       string
	}{
		{"rounded down", 0.9987, "99.8%"},
		{"above 99.9%, not certain", 0.99996, "> 99.9%"},
		{"a cut-off's worth", 0.93, "93.0%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := findingsList()[0]
			f.Confidence, f.Culprits[0].Confidence = tc.confidence, tc.confidence
			var table bytes.Buffer
			require.NoError(t, printFindings(&table, []record.Finding{f}))
			require.Contains(t, table.String(), "  "+tc.want+"  ")
			var issue bytes.Buffer
			require.NoError(t, printReport(&issue, &f))
			require.Contains(t, issue.String(), "confidence "+tc.want)
		})
	}
}

// TestNotMeasuredIsNoZero: an effect that was not measured reads "not
// measured" (null in JSON), never +0.0% [+0.0%, +0.0%] beside the warning
// that the set does not recover the change.
func TestNotMeasuredIsNoZero(t *testing.T) {
	for _, tc := range []struct {
		name         string
		applied, rev minimize.Effect
		text         string
		jsonApplied  bool
		jsonReverted bool
	}{
		{name: "reverted did not build", applied: effect(-14.2, -15.1, -13.3, 12), text: "applied alone to b0c1d2e3f4: -14.2% [-15.1%, -13.3%]; reverted alone: not measured", jsonApplied: true},
		{name: "neither measured", text: "applied alone to b0c1d2e3f4: not measured; reverted alone: not measured"},
		{name: "both measured", applied: effect(-14.2, -15.1, -13.3, 12), rev: effect(16.4, 15.2, 17.5, 12),
			text: "reverted alone: +16.4% [+15.2%, +17.5%]", jsonApplied: true, jsonReverted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := hunksReport()
			r.Applied, r.Reverted = tc.applied, tc.rev
			var text bytes.Buffer
			require.NoError(t, printHunks(&text, r, false))
			require.Contains(t, text.String(), tc.text)
			require.NotContains(t, text.String(), "+0.0%")
			d := hunksJSON(r)
			require.Equal(t, tc.jsonApplied, d.Effect.Applied != nil)
			require.Equal(t, tc.jsonReverted, d.Effect.Reverted != nil)
		})
	}
}

// TestHunksNamedWithoutTheirDiff: a rewrite's hunks are named by file and
// function with the lines they add and remove; their diffs, every removed
// line of a 50-line function, are printed with --diff only.
func TestHunksNamedWithoutTheirDiff(t *testing.T) {
	var rewrite strings.Builder
	rewrite.WriteString("@@ -10,50 +10,50 @@ func Select(xs []int) int {\n")
	for i := range 50 {
		fmt.Fprintf(&rewrite, "-\told%d := xs[%d]\n", i, i)
	}
	for i := range 50 {
		fmt.Fprintf(&rewrite, "+\tnew%d := xs[%d]\n", i, i)
	}
	r := hunksReport()
	r.Hunks = []record.Hunk{{ID: "h1", File: "engine/topk/select.go", Function: "Select", OldStart: 10, OldLines: 50, NewStart: 10, NewLines: 50, Diff: rewrite.String()},
		{ID: "h2", File: "engine/topk/heap.go", Component: "topk", Function: "(*heap).Push", OldStart: 3, OldLines: 2, NewStart: 3, NewLines: 3, Diff: "@@ -3,2 +3,3 @@\n a\n-b\n+c\n+d\n"}}
	for _, tc := range []struct {
		name     string
		withDiff bool
		want     []string
		lines    int // at most
	}{
		{name: "named", want: []string{"[-] engine/topk/select.go::Select  +50 −50\n", "[topk] engine/topk/heap.go::(*heap).Push  +2 −1\n", "(--diff prints their diffs)"}, lines: 10},
		{name: "with --diff", withDiff: true, want: []string{"engine/topk/select.go::Select  +50 −50\n", "    -\told49 := xs[49]\n", "    +d\n"}, lines: 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, printHunks(&out, r, tc.withDiff))
			for _, w := range tc.want {
				require.Contains(t, out.String(), w)
			}
			if !tc.withDiff {
				require.NotContains(t, out.String(), "old0")
			}
			require.LessOrEqual(t, strings.Count(out.String(), "\n"), tc.lines)
		})
	}
}

// TestBisectOtherWay: a range searched for an improvement that regressed
// is not_reproduced, and the command line says at once that the ends
// differ the other way, by how much, and the command that searches it.
func TestBisectOtherWay(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  *service.Bisection
		want string
	}{
		{"a regression searched as an improvement", bisectOtherWay(),
			"no improvement, but the ends differ the other way: a regression of -21.0% [-21.9%, -20.1%]; to find its commit:\n  perfbot bisect --good a1b2c3d4e5 --bad 9e8d7c6b5a --metric verify_tok_s --direction regression\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, printBisect(&out, tc.rep, false))
			require.Contains(t, out.String(), tc.want)
		})
	}
}
