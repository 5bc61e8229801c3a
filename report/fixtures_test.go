package report

import (
	"fmt"
	"time"

	"github.com/perfbot/perfbot/record"
)

// Realistic findings for the golden tests: the verify step of speculative
// decoding slowed down by a change to the allreduce path.

func day(d, h int) time.Time { return time.Date(2026, 11, d, h, 3, 0, 0, time.UTC) }

var (
	goodCommit = record.Commit{Hash: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", Subject: "attention: tune flashinfer MLA split-kv for 3 draft tokens", Author: "Ravi Shah", Email: "ravi@example.com", Date: day(18, 9)}
	badCommit  = record.Commit{Hash: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807", Subject: "topk: use a stable sort for draft token ranks", Author: "Ana Ruiz", Email: "41234+anaruiz@users.noreply.github.com", Date: day(22, 17)}
	culprit1   = record.Commit{Hash: "3f2a9c1e00d4b5a6978877665544332211aabbcc", Subject: "communicator: prefer symmetric memory allreduce on every topology", Author: "Mei Lin", Email: "mlin@example.com", Login: "meilin", Date: day(20, 14),
		Files: []string{"engine/communicator/allreduce.go", "engine/communicator/allreduce_test.go"}}
	culprit2 = record.Commit{Hash: "5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f", Subject: "moe: route shared experts before top-k gating", Author: "Jonas Berg", Email: "jonas@example.com", Date: day(21, 11),
		Files: []string{"engine/moe/router.go"}}
	probeA = record.Commit{Hash: "b0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d", Subject: "spec: count accepted draft tokens per verify step", Author: "Ravi Shah", Date: day(19, 10)}
	probeB = record.Commit{Hash: "c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7", Subject: "build: bump flashinfer to 0.2.14", Author: "Ana Ruiz", Date: day(21, 8)}
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

const routerDiff = `@@ -88,6 +88,9 @@ func (r *Router) Route(tokens []Token) []Assignment {
 	scores := r.gate(tokens)
+	for i := range tokens {
+		r.shared.Dispatch(tokens[i])
+	}
 	return topK(scores, r.k)
 }
`

func baseFinding() *record.Finding {
	return &record.Finding{
		Created:   day(23, 2),
		Repo:      "https://github.com/example/infer",
		CommitURL: "https://github.com/example/infer/commit/%s",
		Metric:    "verify_tok_s",
		Unit:      "tok/s",
		Direction: "regression",
		Good:      record.End{Commit: goodCommit, N: 24, Median: 88.80, Interval: record.Interval{Lo: 88.12, Hi: 89.41}},
		Bad:       record.End{Commit: badCommit, N: 24, Median: 75.66, Interval: record.Interval{Lo: 74.93, Hi: 76.30}},
		EnvGood: map[string]string{
			"NCCL_PROTO":           "LL",
			"NCCL_ALGO":            "Ring",
			"NCCL_P2P_LEVEL":       "SYS",
			"CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
			"gpu.name":             "NVIDIA H200",
			"gpu.driver":           "570.133.20",
			"host":                 "gpu-07",
			"go":                   "go1.26.8",
		},
		History: []float64{88.9, 88.6, 89.1, 88.7, 88.8, 89.0, 88.5, 75.9, 75.5, 75.8, 75.6, 75.7},
		Cost:    record.Cost{Runs: 84, Builds: 9, WallSeconds: 4321},
		Logs: "=== RUN   BenchmarkVerifyStep/k=3\n" +
			"BenchmarkVerifyStep/k=3-8   \t     200\t  39650112 ns/op\t        75.66 tok/s\n" +
			"allreduce backend: symm_mem (custom disabled)\n" +
			"PASS\n",
	}
}

func probes(verdicts ...record.Probe) []record.Probe { return verdicts }

// rawRuns are n runs around median, a minute apart from start, with the
// host's load before each.
func rawRuns(n int, median float64, start time.Time) []record.RunValue {
	runs := make([]record.RunValue, n)
	for i := range runs {
		runs[i] = record.RunValue{Value: median * (1 + 0.002*float64(i%5-2)), Started: start.Add(time.Duration(2*i) * time.Minute),
			Host: "gpu-07", LoadAvg: fmt.Sprintf("%.2f 0.90 0.70", 0.4+0.1*float64(i%4))}
	}
	return runs
}

// culpritWithHunks is the finding of one culprit as a bisection stores
// it: its two sides are the culprit's parent and the culprit.
func culpritWithHunks() *record.Finding {
	f := baseFinding()
	f.Outcome = record.OutcomeCulprit
	f.Good = record.End{Commit: probeA, N: 12, Median: 88.71, Interval: record.Interval{Lo: 88.30, Hi: 89.02}, Runs: rawRuns(12, 88.71, day(23, 0)), CPUAffinity: "0-15"}
	f.Bad = record.End{Commit: culprit1, N: 12, Median: 75.61, Interval: record.Interval{Lo: 75.20, Hi: 76.01}, Runs: rawRuns(12, 75.61, day(23, 0).Add(time.Minute)), CPUAffinity: "0-15"}
	f.Culprits = []record.Culprit{{Commit: culprit1, Confidence: 0.9931, Effect: record.Effect{Pct: -14.8, Interval: record.Interval{Lo: -15.9, Hi: -13.6}},
		Confirmation: &record.Confirmation{Confirmed: true, Pairs: 12, Fresh: 8, Effect: record.Effect{Pct: -14.8, Interval: record.Interval{Lo: -15.9, Hi: -13.6}},
			Text: "12 interleaved runs each of parent and culprit give -14.8% [-15.9%, -13.6%]"}}}
	f.Confidence = 0.9931
	f.Culprits[0].Hunks = []record.Hunk{{
		ID: "h3", File: "engine/communicator/allreduce.go", Component: "communicator",
		Function: "(*Communicator).AllReduce", OldStart: 41, OldLines: 9, NewStart: 41, NewLines: 10,
		Diff: allreduceDiff,
	}}
	f.Components = []string{"communicator"}
	f.Culprits[0].HunkEffect = &record.HunkEffect{Applied: &record.Effect{Pct: -14.1, Interval: record.Interval{Lo: -15.3, Hi: -12.9}}, Reverted: &record.Effect{Pct: 15.3, Interval: record.Interval{Lo: 13.9, Hi: 16.7}}}
	f.Probes = probes(
		record.Probe{Commit: goodCommit, N: 24, Median: 88.80, Status: "ok", Verdict: "end"},
		record.Probe{Commit: badCommit, N: 24, Median: 75.66, Status: "ok", Verdict: "end"},
		record.Probe{Commit: probeA, N: 8, Median: 88.71, Status: "ok", Verdict: "good"},
		record.Probe{Commit: culprit1, N: 12, Median: 75.61, Status: "ok", Verdict: "bad"},
		record.Probe{Commit: probeB, N: 6, Median: 75.80, Status: "ok", Verdict: "bad"},
	)
	f.Reproduce = []string{
		"perfbot measure b0c1d2e3f4 3f2a9c1e00 --repeats 10 --config /srv/perfbot/perfbot.yaml",
		"perfbot bisect --good a1b2c3d4e5 --bad 9e8d7c6b5a --metric verify_tok_s --hunks --config /srv/perfbot/perfbot.yaml",
		"perfbot hunks 3f2a9c1e00 --metric verify_tok_s --config /srv/perfbot/perfbot.yaml",
	}
	f.Steps = []string{"go build ./...", "NCCL_ALGO=Ring NCCL_PROTO=LL go test -run '^$' -bench BenchmarkVerifyStep -count 1 ./engine/..."}
	f.Version = "v0.9.0"
	f.HistoryOf = record.HistoryCommits
	f.ParentLogs = "=== RUN   BenchmarkVerifyStep/k=3\n" +
		"BenchmarkVerifyStep/k=3-8   \t     200\t  33820114 ns/op\t        88.71 tok/s\n" +
		"allreduce backend: custom\n" +
		"PASS\n"
	f.ID = f.DerivedID()
	return f
}

func culpritWithoutHunks() *record.Finding {
	f := culpritWithHunks()
	f.Culprits[0].Hunks, f.Culprits[0].HunkEffect, f.Components = nil, nil, nil
	f.Reproduce = f.Reproduce[:1]
	f.ID = f.DerivedID()
	return f
}

func twoCulprits() *record.Finding {
	f := culpritWithHunks()
	f.Culprits = []record.Culprit{
		{Commit: culprit1, Confidence: 0.991, Effect: record.Effect{Pct: -3.1, Interval: record.Interval{Lo: -4.0, Hi: -2.2}}, Hunks: f.Culprits[0].Hunks},
		{Commit: culprit2, Confidence: 0.987, Effect: record.Effect{Pct: -2.8, Interval: record.Interval{Lo: -3.7, Hi: -1.9}}},
	}
	// Two culprits: the sides are the range's ends.
	f.Good = baseFinding().Good
	f.Bad = record.End{Commit: badCommit, N: 24, Median: 83.42, Interval: record.Interval{Lo: 82.90, Hi: 83.95}}
	f.Culprits[0].Confirmation = nil
	f.ParentLogs = ""
	f.Confidence = 0.987
	f.Culprits[1].Hunks = []record.Hunk{{
		ID: "h1", File: "engine/moe/router.go", Component: "moe", Function: "(*Router).Route",
		OldStart: 88, OldLines: 6, NewStart: 88, NewLines: 9, Diff: routerDiff,
	}}
	f.Components = []string{"communicator", "moe"}
	f.History = []float64{88.9, 88.6, 89.1, 86.1, 86.3, 86.0, 83.5, 83.3, 83.6}
	f.Probes = probes(
		record.Probe{Commit: goodCommit, N: 24, Median: 88.80, Status: "ok", Verdict: "end"},
		record.Probe{Commit: badCommit, N: 24, Median: 83.42, Status: "ok", Verdict: "end"},
		record.Probe{Commit: probeA, N: 10, Median: 88.64, Status: "ok", Verdict: "good"},
		record.Probe{Commit: culprit1, N: 16, Median: 86.05, Status: "ok", Verdict: "bad"},
		record.Probe{Commit: probeB, N: 16, Median: 86.21, Status: "ok", Verdict: "good"},
		record.Probe{Commit: culprit2, N: 16, Median: 83.55, Status: "ok", Verdict: "bad"},
	)
	f.Runs, f.Builds = 126, 12
	f.ID = f.DerivedID()
	return f
}

func candidates() *record.Finding {
	f := baseFinding()
	f.Outcome = record.OutcomeCandidates
	f.Candidates = []record.Commit{culprit1, probeB}
	f.Skipped = []record.Commit{probeB}
	f.Confidence = 0.992
	f.Probes = probes(
		record.Probe{Commit: goodCommit, N: 24, Median: 88.80, Status: "ok", Verdict: "end"},
		record.Probe{Commit: badCommit, N: 24, Median: 75.66, Status: "ok", Verdict: "end"},
		record.Probe{Commit: probeA, N: 8, Median: 88.71, Status: "ok", Verdict: "good"},
		record.Probe{Commit: probeB, Status: "build_failed", Verdict: "skipped"},
		record.Probe{Commit: culprit2, N: 8, Median: 75.70, Status: "ok", Verdict: "bad"},
	)
	f.Reproduce = []string{"perfbot bisect --good a1b2c3d4e5 --bad 9e8d7c6b5a --metric verify_tok_s"}
	f.Logs = "go build ./...\n# engine/kernels\nkernels/flashinfer.go:17:2: undefined: flashinfer.PlanMLA\n"
	f.ID = f.DerivedID()
	return f
}

func inconclusive() *record.Finding {
	f := candidates()
	f.Outcome = record.OutcomeInconclusive
	f.Candidates = []record.Commit{probeA, culprit1, probeB}
	f.Skipped = nil
	f.Confidence = 0.71
	f.Probes = f.Probes[:3]
	f.ID = f.DerivedID()
	return f
}

func notReproduced() *record.Finding {
	f := baseFinding()
	f.Outcome = record.OutcomeNotReproduced
	f.Bad.Median, f.Bad.Lo, f.Bad.Hi = 88.41, 87.70, 89.20
	f.Probes = probes(
		record.Probe{Commit: goodCommit, N: 16, Median: 88.80, Status: "ok", Verdict: "end"},
		record.Probe{Commit: badCommit, N: 16, Median: 88.41, Status: "ok", Verdict: "end"},
	)
	f.Good.N, f.Bad.N = 16, 16
	f.History = nil
	f.Logs = ""
	f.Runs, f.Builds = 32, 2
	f.Reproduce = []string{"perfbot bisect --good a1b2c3d4e5 --bad 9e8d7c6b5a --metric verify_tok_s"}
	f.ID = f.DerivedID()
	return f
}

// notReproducedOtherWay is an improvement searched on ends that
// regressed by 21%: not reproduced as an improvement, there the other way.
func notReproducedOtherWay() *record.Finding {
	f := notReproduced()
	f.Direction = record.Improvement
	f.Unit = "tok/s"
	f.Good.Median, f.Good.Lo, f.Good.Hi = 1011, 1004, 1019
	f.Bad.Median, f.Bad.Lo, f.Bad.Hi = 798.5, 791.2, 805.9
	f.Probes[0].Median, f.Probes[1].Median = 1011, 798.5
	f.Warnings = []record.Warning{{Kind: record.WarnOtherDirection, From: goodCommit.Hash, To: badCommit.Hash, Direction: record.Regression, Pct: -21.0, LoPct: -21.9, HiPct: -20.1}}
	f.Reproduce = []string{
		"perfbot bisect --good a1b2c3d4e5 --bad 9e8d7c6b5a --metric verify_tok_s --direction regression",
		"perfbot bisect --good a1b2c3d4e5 --bad 9e8d7c6b5a --metric verify_tok_s --direction improvement",
	}
	f.ID = f.DerivedID()
	return f
}

// suspicious is a culprit that every warning applies to.
func suspicious() *record.Finding {
	f := culpritWithoutHunks()
	c := culprit2
	c.Parents = []string{goodCommit.Hash, probeA.Hash}
	c.Login = ""
	c.Subject = "Merge @bob's branch 'docs' | fix #12 <b>now</b>"
	c.Files = []string{"docs/tuning.md", "engine/moe/router_test.go", "README.md"}
	f.Culprits = []record.Culprit{{Commit: c, Confidence: 0.82, Effect: record.Effect{Pct: -6.2, Interval: record.Interval{Lo: -9.9, Hi: -2.4}}, BuildIdentical: true,
		Confirmation: &record.Confirmation{Pairs: 12, Fresh: 12, Effect: record.Effect{Pct: -1.1, Interval: record.Interval{Lo: -3.9, Hi: 1.6}}, Text: "12 interleaved runs each of parent and culprit give -1.1% [-3.9%, +1.6%]"}}}
	f.Bad.Commit = c
	f.Unconfirmed = f.Culprits[0].Confirmation.Text
	f.Confidence = 0.82
	f.EnvDiffs = []record.EnvDiff{{Name: "NCCL_PROTO", Good: "LL", Bad: ""}, {Name: "NCCL_ALGO", Good: "Ring", Bad: "Tree|Ring"}}
	f.Warnings = []record.Warning{{Kind: record.WarnNote, Text: "3 of 24 runs at the bad end were retried after infra errors."}}
	f.ID = f.DerivedID()
	return f
}

// culpritDependency is a culprit that bumps a Go module, descended into
// its versions and then its commits, beside a Python pin that was not
// descended into.
func culpritDependency() *record.Finding {
	f := culpritWithoutHunks()
	c := &f.Culprits[0]
	c.Commit.Subject = "go.mod, requirements.txt: update dependencies"
	kern := record.DependencyChange{Kind: record.DependencyGo, Name: "example.com/kern", File: "go.mod", Old: "v1.0.0", New: "v1.4.0"}
	torch := record.DependencyChange{Kind: record.DependencyPython, Name: "torch", File: "requirements.txt", Old: "2.3.0", New: "2.4.1"}
	c.Dependencies = []record.DependencyChange{kern, torch}
	c.Hunks = []record.Hunk{{ID: "h1", File: "go.mod", OldStart: 5, OldLines: 1, NewStart: 5, NewLines: 1,
		Diff: "@@ -5 +5 @@ require (\n-\texample.com/kern v1.0.0\n+\texample.com/kern v1.4.0\n"}}
	c.HunkEffect = &record.HunkEffect{Applied: &record.Effect{Pct: -14.5, Interval: record.Interval{Lo: -15.4, Hi: -13.7}}, Reverted: &record.Effect{Pct: 17.0, Interval: record.Interval{Lo: 16.1, Hi: 17.9}}}
	step := func(v, commit string, n int, median float64, verdict string) record.DescentStep {
		return record.DescentStep{Version: v, Commit: commit, N: n, Median: median, Verdict: verdict}
	}
	slow := "5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80"
	c.Descents = []record.Descent{
		{Dependency: kern, Over: record.DescentVersions, Searched: 5, Outcome: record.OutcomeCulprit, Before: "v1.2.0", Culprit: "v1.3.0",
			Effect: record.Effect{Pct: -14.6, Interval: record.Interval{Lo: -15.5, Hi: -13.8}}, Confidence: 0.995, Confirmed: true,
			Steps: []record.DescentStep{
				step("v1.0.0", "1111111111111111111111111111111111111111", 6, 88.62, "end"),
				step("v1.2.0", "2222222222222222222222222222222222222222", 8, 88.70, "good"),
				step("v1.3.0", "3333333333333333333333333333333333333333", 8, 75.70, "bad"),
				step("v1.4.0", "4444444444444444444444444444444444444444", 6, 75.58, "end"),
			}},
		{Dependency: kern, Over: record.DescentCommits, Searched: 4, Outcome: record.OutcomeCulprit,
			Before: "4a5b6c7d8e9f00112233445566778899aabbccdd", Culprit: slow,
			Commit:        &record.Commit{Hash: slow, Subject: "kern: split the attention tile", Author: "Kern Dev"},
			PseudoVersion: "v1.2.1-0.20260122100000-5d6e7f8091a2",
			Effect:        record.Effect{Pct: -14.7, Interval: record.Interval{Lo: -15.6, Hi: -13.9}}, Confidence: 0.993, Confirmed: true,
			Hunks: []record.Hunk{{ID: "h1", File: "_perfbot_deps/example.com_kern/tile.go", Function: "Tile", OldStart: 12, OldLines: 3, NewStart: 12, NewLines: 3,
				Diff: "--- a/_perfbot_deps/example.com_kern/tile.go\n+++ b/_perfbot_deps/example.com_kern/tile.go\n@@ -12,3 +12,3 @@ func Tile() int {\n-\treturn 128\n+\treturn 64\n }\n"}},
			Steps: []record.DescentStep{
				step("4a5b6c7d8e9f00112233445566778899aabbccdd", "5555555555555555555555555555555555555555", 6, 88.70, "end"),
				step(slow, "6666666666666666666666666666666666666666", 8, 75.69, "bad"),
				step("7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2", "7777777777777777777777777777777777777777", 6, 75.70, "end"),
			}},
	}
	f.Warnings = append(f.Warnings, record.Warning{Kind: record.WarnNotDescended, Commit: c.Commit.Hash, Text: torch.String(),
		Reasons: []string{"no wheels directory is configured for torch (dependencies: {name: torch, wheels: DIR})"}})
	f.ID = f.DerivedID()
	return f
}

// culpritPythonDescent is a culprit that bumps a Python pin, descended
// into the versions of the package's wheels directory.
func culpritPythonDescent() *record.Finding {
	f := culpritWithoutHunks()
	c := &f.Culprits[0]
	c.Commit.Subject = "requirements: flashinfer 0.2.16"
	fi := record.DependencyChange{Kind: record.DependencyPython, Name: "flashinfer-python", File: "requirements.txt", Old: "0.2.14", New: "0.2.16"}
	c.Dependencies = []record.DependencyChange{fi}
	c.Hunks = []record.Hunk{{ID: "h1", File: "requirements.txt", OldStart: 3, OldLines: 1, NewStart: 3, NewLines: 1,
		Diff: "@@ -3 +3 @@ numpy==1.26.4\n-flashinfer-python==0.2.14\n+flashinfer-python==0.2.16\n"}}
	step := func(v, commit string, n int, median float64, verdict string) record.DescentStep {
		return record.DescentStep{Version: v, Commit: commit, N: n, Median: median, Verdict: verdict}
	}
	c.Descents = []record.Descent{
		{Dependency: fi, Over: record.DescentVersions, Searched: 5, Outcome: record.OutcomeCulprit, Before: "0.2.14", Culprit: "0.2.14.post1",
			Effect: record.Effect{Pct: -14.6, Interval: record.Interval{Lo: -15.5, Hi: -13.8}}, Confidence: 0.995, Confirmed: true,
			Steps: []record.DescentStep{
				step("0.2.14", "1111111111111111111111111111111111111111", 6, 88.62, "end"),
				step("0.2.14.post1", "2222222222222222222222222222222222222222", 8, 75.70, "bad"),
				step("0.2.15", "3333333333333333333333333333333333333333", 4, 75.66, "bad"),
				step("0.2.16", "5555555555555555555555555555555555555555", 6, 75.58, "end"),
			}},
	}
	f.ID = f.DerivedID()
	return f
}
