package testbed

import (
	"fmt"
	"strings"
	"time"
)

// Authors by index, for steps that name theirs.
const (
	mei = iota
	arjun
	sofia
	tom
	yuki
	dana
	anyone = -1
)

// rootStep is the first commit: the whole engine as embedded.
func rootStep() (step, error) {
	t, err := engineTree()
	if err != nil {
		return step{}, err
	}
	var edits []edit
	for _, p := range t.paths() {
		edits = append(edits, write(p, t[p]))
	}
	return step{
		subject: "Import the inference engine",
		body: `A decoder-only MoE transformer with tensor parallelism over eight
goroutine ranks, three allreduce backends behind a fallback chain, naive and
tiled attention, and EAGLE-style speculative decoding, with benchmarks for
the verify step, plain decode and the allreduce.`,
		author: mei,
		edits:  edits,
	}, nil
}

// Intended effects, in percent: the averages of interleaved measurements
// (10 runs a side, the bench binary at -test.benchtime 64x). Verify checks
// the direction and that the interval excludes zero, not the size.
// VerifyCost follows from the verify and decode effects (the ratio of
// their step times); d's is left out, too small to tell from zero.
var (
	effectA  = map[string]float64{VerifyTokS: -15, DecodeTokS: -22, AllReduceGBps: -88, VerifyCost: -8.2}
	effectB  = map[string]float64{VerifyTokS: -9, DecodeTokS: 0, AllReduceGBps: 0, VerifyCost: 9.9}
	effectC  = map[string]float64{VerifyTokS: -4.5, DecodeTokS: 0, AllReduceGBps: 0, VerifyCost: 4.7}
	effectD  = map[string]float64{VerifyTokS: 11, DecodeTokS: 8, AllReduceGBps: 0}
	noEffect = map[string]float64{VerifyTokS: 0, DecodeTokS: 0, AllReduceGBps: 0, VerifyCost: 0}
)

// groundTruth returns the known changes at their nominal positions.
func groundTruth() []anchor {
	return []anchor{
		{10, []step{changeB()}},
		{20, changeE()},
		{40, []step{changeC()}},
		{50, []step{changeG()}},
		{70, []step{changeF()}},
		{92, []step{changeA()}},
		{112, []step{changeD()}},
	}
}

// changeA is a seven-file commit whose one harmful hunk makes the fallback
// chain skip the custom allreduce for every message the model sends.
func changeA() step {
	return step{
		subject: "communicator: leave small messages to the tree allreduce",
		body: `The custom allreduce pays a fixed cost per call, and NCCL picks its
tree algorithm for small messages for the same reason. Route messages under
64 KiB to the tree backend. Update the docs and the fallback-chain tests, and
tidy a few comments on the way.`,
		author: tom,
		edits: []edit{
			replace("communicator/options.go", `	switch {
	case o.DisableCustom:`, `	// Small messages are latency-bound: leave them to the tree, whose
	// fewer steps win there on GPUs.
	const minCustomBytes = 64 << 10
	switch {
	case n*4 < minCustomBytes:
		return fmt.Sprintf("%d bytes are below the custom allreduce minimum of %d", n*4, minCustomBytes)
	case o.DisableCustom:`),
			replace("communicator/communicator_test.go", `		{"custom preferred", Options{}, 8, 512, Ring, 0},
		{"custom preferred for one token", Options{}, 8, 128, Ring, 0},
`, `		{"custom preferred", Options{}, 8, 32768, Ring, 0},
		{"small messages go to the tree", Options{}, 8, 128, Tree, 1},
`),
			replace("docs/communicator.md", "2. `ring`, unless disabled (`TESTBED_DISABLE_CUSTOM_AR=1`), the group has\n   more than eight ranks,",
				"2. `ring`, unless disabled (`TESTBED_DISABLE_CUSTOM_AR=1`), the message is\n   under 64 KiB (latency-bound: the tree does better), the group has\n   more than eight ranks,"),
			replace("README.md", "| `TESTBED_DISABLE_CUSTOM_AR` | `1` takes the custom (ring) allreduce out of the chain |",
				"| `TESTBED_DISABLE_CUSTOM_AR` | `1` takes the custom (ring) allreduce out of the chain; messages under 64 KiB skip it anyway |"),
			replace("communicator/ring.go", `// place, each rank reading its left neighbour's buffer directly.
//`, `// place, each rank reading its left neighbour's buffer directly. The
// fallback chain sends it only messages of 64 KiB and more.
//`),
			replace("communicator/communicator.go", `//     neighbour's buffer directly. Preferred when eligible.`, `//     neighbour's buffer directly. Preferred for messages of 64 KiB and
//     more.`),
			replace("model/config.go", `	// Comm steers the allreduce backend; its Segment is set by New.`, `	// Comm steers the allreduce backend (see communicator.Options); its
	// Segment is set by New.`),
		},
		truth: &truth{id: "a", kind: Regression, effects: effectA, effect: 0,
			note: "messages under 64 KiB skip the custom (ring) allreduce, so every allreduce of the model falls back to the tree over simulated PCIe links"},
	}
}

// changeB slows the tiled backend's extend path only: the scores of every
// tile are computed twice.
func changeB() step {
	return step{
		subject: "attention: settle the tile maximum before filling scores",
		body: `In the extend path, find the maximum of a tile's scores first and fill
the score buffer in a second pass, so that the state update sees a settled
maximum.`,
		author: sofia,
		edits: []edit{
			replace("attention/tiled.go", `				scores := t.scores[:hi-lo]
				tm := float32(-1e30)
				for j := range scores {
					k := (lo + j) * w
					scores[j] = kernels.Dot(qh, c.K[k+h*d:k+(h+1)*d]) * sc
					tm = max(tm, scores[j])
				}`, `				scores := t.scores[:hi-lo]
				// Find the tile's maximum before filling in the scores, so
				// that the state update below sees a settled maximum.
				tm := float32(-1e30)
				for j := range scores {
					k := (lo + j) * w
					tm = max(tm, kernels.Dot(qh, c.K[k+h*d:k+(h+1)*d])*sc)
				}
				for j := range scores {
					k := (lo + j) * w
					scores[j] = kernels.Dot(qh, c.K[k+h*d:k+(h+1)*d]) * sc
				}`),
		},
		truth: &truth{id: "b", kind: Regression, effects: effectB, effect: 0,
			note: "the tiled extend path computes every query-key score twice; decode is untouched"},
	}
}

// changeC makes every draft extend compute logits for all its positions
// although only the last is read.
func changeC() step {
	return step{
		subject: "speculative: keep draft logits for every extend position",
		body:    `Compute the draft's logits for every position of an extend, not only the last one, so that acceptance can be traced per position.`,
		author:  yuki,
		edits: []edit{
			replace("speculative/draft.go", `	return b.x[:t*d], dr.logitsOf(b.x[(t-1)*d:t*d], 1), nil`, `	// Logits for every position, so that acceptance can be traced per
	// position; the caller reads the last row.
	return b.x[:t*d], dr.logitsOf(b.x[:t*d], t), nil`),
		},
		truth: &truth{id: "c", kind: Regression, effects: effectC, effect: 0,
			note: "each draft extend runs the LM head over every accepted position instead of the last one"},
	}
}

// changeD unrolls the dot product that every matrix product uses.
func changeD() step {
	return step{
		subject: "kernels: unroll Dot with four accumulators",
		body: `A single running sum makes every addition wait for the one before it.
Four partial sums, combined in a fixed order, keep the results independent
of the batch and speed up every matrix product with long rows.`,
		author: arjun,
		edits: []edit{
			replace("model/kernels/kernels.go", `// Dot returns the dot product of a and b, which must have the same length.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}`, `// Dot returns the dot product of a and b, which must have the same length.
// It keeps four partial sums so that the additions do not wait on each
// other; they are combined in a fixed order, so a token's result still does
// not depend on the batch it is computed in.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		aa, bb := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}`),
		},
		truth: &truth{id: "d", kind: Improvement, effects: effectD, effect: 0,
			note: "Dot keeps four partial sums instead of one, which speeds up every matrix product with long rows"},
	}
}

// changeE renames a function without its callers, and fixes the build in
// the next commit.
func changeE() []step {
	return []step{{
		subject: "moe: rename topK to selectTopK",
		body:    `topK read like a field next to Router.TopK.`,
		author:  dana,
		edits: []edit{
			replace("moe/moe.go", `// topK fills idx with the indices of the len(idx) largest scores, largest
// first, by repeated selection: k is small, so this beats sorting.
func topK(`, `// selectTopK fills idx with the indices of the len(idx) largest scores,
// largest first, by repeated selection: k is small, so this beats sorting.
func selectTopK(`),
		},
		truth: &truth{id: "e", kind: BuildBreak, effect: -1,
			note: "the function is renamed but its callers are not, so package moe does not build; the next commit fixes it"},
	}, {
		subject: "moe: finish the selectTopK rename",
		body:    `The previous commit renamed the function but not its callers, so the package did not build.`,
		author:  dana,
		edits: []edit{
			replace("moe/moe.go", "\t\ttopK(idx, lt)\n", "\t\tselectTopK(idx, lt)\n"),
			replace("moe/moe_test.go", "\ttopK(idx, []float32{0.1, 2, -1, 3, 2.5})\n", "\tselectTopK(idx, []float32{0.1, 2, -1, 3, 2.5})\n"),
			replace("moe/moe_test.go", `t.Errorf("topK = %v, want %v", idx, want)`, `t.Errorf("selectTopK = %v, want %v", idx, want)`),
		},
	}}
}

// changeG touches only documentation and tests.
func changeG() step {
	return step{
		subject: "attention: document and test partial tiles",
		author:  sofia,
		edits: []edit{
			insertAfter("docs/attention.md", "  Its extend path visits each tile once for every query that sees it.\n", `
  A tile holds 32 keys. The last tile a query sees is usually partial:
  query i of an extend pass stops at its own position, so later queries see
  a few more keys of the same tile.
`),
			appendTo("attention/attention_test.go", `
// TestTiledPartialTiles checks positions on both sides of tile boundaries,
// where a query's last tile holds one key or a full tile.
func TestTiledPartialTiles(t *testing.T) {
	b, err := New(Tiled, 128)
	if err != nil {
		t.Fatal(err)
	}
	for _, positions := range []int{1, 31, 32, 33, 64, 65} {
		c, q := filled(positions, 11)
		w := c.Width()
		out := make([]float32, w)
		b.Decode(out, q[(positions-1)*w:], c)
		want := reference(c, q[(positions-1)*w:positions*w], positions-1)
		for x, v := range want {
			if math.Abs(float64(out[x])-v) > 1e-5 {
				t.Fatalf("%d positions, element %d: got %g, want %g", positions, x, out[x], v)
			}
		}
	}
}
`),
		},
		truth: &truth{id: "g", kind: NonRuntime, effects: noEffect, effect: -1,
			note: "documentation and a test only: nothing the benchmarks run changes"},
	}
}

// changeF merges a side branch that improves the command line; the merge
// changes nothing the benchmarks run.
func changeF() step {
	return step{
		subject:  "Merge branch 'infer-cli'",
		body:     `Flags for the weight seed and for quiet output, validation of the numeric flags, tests, and a page in docs/.`,
		author:   mei,
		forkBack: 3,
		side:     &branch{name: "infer-cli", commits: cliBranch()},
		truth: &truth{id: "f", kind: Merge, effects: noEffect, effect: -1,
			note: "a merge (--no-ff) of a branch that touches only cmd/infer and docs; its first parent is on main"},
	}
}

func cliBranch() []step {
	return []step{{
		subject: "cmd/infer: add -seed to pick other weights",
		author:  yuki,
		edits: []edit{
			insertAfter("cmd/infer/main.go", "\tattn := fs.String(\"attention\", \"\", \"attention backend: tiled or naive\")\n",
				"\tseed := fs.Uint64(\"seed\", 0, \"weight seed (0 keeps the default)\")\n"),
			insertAfter("cmd/infer/main.go", "\tif *attn != \"\" {\n\t\tcfg.Attention = *attn\n\t}\n",
				"\tif *seed != 0 {\n\t\tcfg.Seed = *seed\n\t}\n"),
		},
	}, {
		subject: "cmd/infer: add -quiet to print only the statistics",
		author:  yuki,
		edits: []edit{
			insertAfter("cmd/infer/main.go", "\tseed := fs.Uint64(\"seed\", 0, \"weight seed (0 keeps the default)\")\n",
				"\tquiet := fs.Bool(\"quiet\", false, \"print only the statistics\")\n"),
			replace("cmd/infer/main.go", "generate(ctx, cfg, *promptLen, *tokens, *k, stdout)", "generate(ctx, cfg, *promptLen, *tokens, *k, *quiet, stdout)"),
			replace("cmd/infer/main.go", "promptLen, n, k int, w io.Writer) error {", "promptLen, n, k int, quiet bool, w io.Writer) error {"),
			replace("cmd/infer/main.go", "\tfmt.Fprintln(w, \"tokens:\", out)\n", "\tif !quiet {\n\t\tfmt.Fprintln(w, \"tokens:\", out)\n\t}\n"),
		},
	}, {
		subject: "cmd/infer: reject non-positive counts and test the flags",
		author:  mei,
		edits: []edit{
			insertAfter("cmd/infer/main.go", "\tif err := fs.Parse(args); err != nil {\n\t\treturn 2\n\t}\n",
				"\tif *tokens < 1 || *k < 1 || *promptLen < 2 {\n\t\tfmt.Fprintln(stderr, \"infer: -tokens and -k must be positive, -prompt at least 2\")\n\t\treturn 2\n\t}\n"),
			write("cmd/infer/main_test.go", `package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"generates", []string{"-tokens", "6", "-prompt", "8"}, 0, "verify steps", ""},
		{"quiet", []string{"-tokens", "6", "-prompt", "8", "-quiet"}, 0, "verify steps", ""},
		{"zero tokens", []string{"-tokens", "0"}, 2, "", "must be positive"},
		{"unknown flag", []string{"-fast"}, 2, "", "flag provided but not defined"},
		{"unknown attention", []string{"-attention", "flash", "-tokens", "2", "-prompt", "4"}, 1, "", "unknown backend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stdout %q, stderr %q; want %q and %q in them", stdout.String(), stderr.String(), tc.stdout, tc.stderr)
			}
		})
	}
}
`),
		},
	}, {
		subject: "docs: describe cmd/infer",
		author:  yuki,
		edits: []edit{
			write("docs/cli.md", "# cmd/infer\n\n`go run ./cmd/infer` generates tokens from a random prompt with speculative\ndecoding and prints them with the acceptance statistics.\n\n| flag | default | meaning |\n|---|---|---|\n| `-tokens` | 32 | tokens to generate |\n| `-k` | 3 | draft tokens per verify step |\n| `-prompt` | 64 | prompt length |\n| `-attention` | tiled | attention backend |\n| `-seed` | 0 | weight seed; 0 keeps the default |\n| `-quiet` | false | print only the statistics |\n\nThe allreduce variables of the README apply as well.\n"),
		},
	}}
}

// changelog returns a step that records in CHANGELOG.md the subjects of the
// commits since the last such step.
func changelog(first bool) step {
	subject := "docs: update the changelog"
	if first {
		subject = "docs: start a changelog"
	}
	return step{
		subject: subject,
		author:  mei,
		later: func(h *history, date time.Time) []edit {
			var subjects []string
			for i := len(h.main) - 1; i > 0; i-- {
				s := h.main[i].subject
				if strings.HasPrefix(s, "docs: start a changelog") || strings.HasPrefix(s, "docs: update the changelog") {
					break
				}
				subjects = append([]string{s}, subjects...)
			}
			if len(subjects) > 12 {
				subjects = subjects[len(subjects)-12:]
			}
			var b strings.Builder
			fmt.Fprintf(&b, "\n## %s\n\n", date.Format("2006-01-02"))
			for _, s := range subjects {
				fmt.Fprintf(&b, "- %s\n", s)
			}
			if first {
				return []edit{write("CHANGELOG.md", "# Changelog\n\nNotable changes, newest last.\n"+b.String())}
			}
			return []edit{appendTo("CHANGELOG.md", b.String())}
		},
	}
}
