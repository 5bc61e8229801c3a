package service

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// watch is the Progress of a test: it keeps every line with the number of
// benchmark runs the fake host had answered when the line was printed, so
// that a test sees any stretch of runs that went by without a line.
type watch struct {
	host  *runnertest.Fake
	mu    sync.Mutex
	part  []byte
	lines []watchedLine
}

type watchedLine struct {
	text string
	runs int
}

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines = append(w.lines, watchedLine{text: string(w.part[:i]), runs: benchRuns(w.host)})
		w.part = w.part[i+1:]
	}
}

// benchRuns counts the benchmark invocations the host answered.
func benchRuns(h *runnertest.Fake) int {
	n := 0
	for _, c := range h.Calls() {
		if c.Phase == runner.PhaseBench {
			n++
		}
	}
	return n
}

// phases returns the phase word of every line that reports a measurement
// (the first word of an indented line), with its count.
func (w *watch) phases() map[string]int {
	out := map[string]int{}
	for _, l := range w.lines {
		if f := strings.Fields(l.text); len(f) > 0 && strings.HasPrefix(l.text, "  ") {
			out[f[0]]++
		}
	}
	return out
}

// checkNoSilence asserts that no more than step benchmark runs went by
// between two lines (step is the most one measurement step asks for), that
// the last run was reported, and that every phase in want printed a line.
func (w *watch) checkNoSilence(t *testing.T, step int, want ...string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	require.NotEmpty(t, w.lines)
	prev, worst, at := 0, 0, ""
	for _, l := range w.lines {
		if gap := l.runs - prev; gap > worst {
			worst, at = gap, l.text
		}
		prev = l.runs
	}
	assert.LessOrEqual(t, worst, step, "runs without a progress line before %q", at)
	assert.Equal(t, benchRuns(w.host), prev, "the last runs were reported")
	got := w.phases()
	for _, p := range want {
		assert.Positive(t, got[p], "phase %s printed no line (phases: %v)", p, got)
	}
}

// noisy scripts a target at level tok/s with 1% noise.
func noisy(level float64, seed int64) runnertest.FakeCommit {
	rng := rand.New(rand.NewSource(seed))
	var outs []string
	for range 60 {
		outs = append(outs, fmt.Sprintf("BenchmarkVerifyStep-2  10  1000 ns/op  %.3f tok/s\n", level*(1+0.01*rng.NormFloat64())))
	}
	return runnertest.FakeCommit{Outputs: outs}
}

// hunkRepo is a history of numbered commits, a culprit that edits two
// hunks in each of two files (one of them costs 10%), one more numbered
// commit, and a commit that touches documentation only.
type hunkRepo struct {
	commits           []string // numbered, the culprit at 3, docs last
	parent, culprit   string
	docs              string
	slowFile, slowTxt string
	cfg               *config.Config
	host              *runnertest.Fake
}

func newHunkRepo(t *testing.T) *hunkRepo {
	t.Helper()
	b := gitopstest.NewBuilder(t)
	a, c := filler("comm/a.go", 40), filler("attn/b.go", 40)
	b.Commit("base", map[string]string{"comm/a.go": a, "attn/b.go": c, "README.md": "# engine\n"})
	r := &hunkRepo{commits: b.Numbered(3)}
	r.parent = r.commits[len(r.commits)-1]
	r.culprit = b.Commit("tune the communicator", map[string]string{
		"comm/a.go": edit(edit(a, 5, "fast path"), 30, "SLOW path"),
		"attn/b.go": edit(edit(c, 5, "tile 64"), 30, "tile 128"),
	})
	r.commits = append(r.commits, r.culprit)
	r.commits = append(r.commits, b.Numbered(1)...)
	r.docs = b.Commit("docs: the tuning guide", map[string]string{"README.md": "# engine\n\nTuning.\n", "docs/tuning.md": "# Tuning\n"})
	r.commits = append(r.commits, r.docs)

	r.host = &runnertest.Fake{Commits: map[string]runnertest.FakeCommit{}, Targets: map[string]runnertest.FakeCommit{}}
	for i, h := range r.commits {
		level := 1000.0
		if i >= 3 { // the culprit and what follows it
			level = 900
		}
		r.host.Commits[h] = noisy(level, int64(i))
	}
	dir := t.TempDir()
	cfg, err := config.Parse(fmt.Appendf(nil, `repo:
  url: %s
build:
  - name: build
    run: go build ./...
benchmarks:
  - name: engine
    run: ./bench
    format: gobench
metrics:
  - name: verify_tok_s
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/s
components:
  communicator: ["comm/**"]
  attention: ["attn/**"]
`, b.Dir), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	r.cfg = cfg
	return r
}

// open opens a Bot whose Progress is a watch, and scripts every subset of
// the culprit's hunks: slow when it holds the hunk with SLOW.
func (r *hunkRepo) open(t *testing.T) (*Bot, *watch) {
	t.Helper()
	w := &watch{host: r.host}
	b, err := Open(context.Background(), r.cfg, Options{Host: r.host, Progress: w})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	p, err := b.Repo.Diff(context.Background(), r.parent, r.culprit)
	require.NoError(t, err)
	hunks := p.Hunks()
	for mask := 1; mask < 1<<len(hunks)-1; mask++ {
		var ids []string
		level := 1000.0
		for i, h := range hunks {
			if mask&(1<<i) != 0 {
				ids = append(ids, h.ID)
				if strings.Contains(h.Text, "SLOW") {
					level = 900
				}
			}
		}
		key := record.Target{Commit: r.parent, Patch: p.ID, Hunks: ids}.Key()
		r.host.Targets[key] = noisy(level, int64(100+mask))
	}
	return b, w
}

func TestProgressInEveryPhase(t *testing.T) {
	ctx := context.Background()
	t.Run("measure", func(t *testing.T) {
		r := newHunkRepo(t)
		b, w := r.open(t)
		_, err := b.Measure(ctx, []string{r.parent, r.culprit}, 4)
		require.NoError(t, err)
		w.checkNoSilence(t, 1, "measure")
	})
	t.Run("bisect", func(t *testing.T) {
		r := newHunkRepo(t)
		b, w := r.open(t)
		// Stricter than the default (the scan below runs with it): the
		// confirmation prints its verdict either way, with fresh runs of
		// its own or without.
		b.Config.Bisect.Confidence, b.Config.Bisect.Repeats = 0.99, 3
		rep, err := b.Bisect(ctx, BisectRequest{Good: r.commits[0], Bad: r.commits[4]})
		require.NoError(t, err)
		require.Equal(t, record.OutcomeCulprit, rep.Verdict)
		w.checkNoSilence(t, b.Config.Bisect.Repeats, "verify", "bisect", "confirm")
		b.checkTraced(t, rep.JobID, w)
	})
	t.Run("bisect --scan", func(t *testing.T) {
		r := newHunkRepo(t)
		b, w := r.open(t)
		rep, err := b.Bisect(ctx, BisectRequest{Good: r.commits[0], Bad: r.commits[4], Scan: 2})
		require.NoError(t, err)
		require.Equal(t, record.OutcomeCulprit, rep.Verdict)
		w.checkNoSilence(t, b.Config.Bisect.Repeats, "survey", "verify", "confirm")
	})
	t.Run("bisect --hunks", func(t *testing.T) {
		r := newHunkRepo(t)
		b, w := r.open(t)
		rep, err := b.Bisect(ctx, BisectRequest{Good: r.commits[0], Bad: r.commits[4], Hunks: true})
		require.NoError(t, err)
		require.Len(t, rep.Hunks, 1)
		require.Len(t, rep.Hunks[r.culprit].Hunks, 1)
		assert.Contains(t, rep.Hunks[r.culprit].Hunks[0].Diff, "SLOW")
		w.checkNoSilence(t, b.Config.Bisect.HunkRepeats, "verify", "bisect", "confirm", "ends", "test", "decided", "effect")
		b.checkTraced(t, rep.JobID, w)
	})
	t.Run("hunks", func(t *testing.T) {
		r := newHunkRepo(t)
		b, w := r.open(t)
		rep, err := b.Hunks(ctx, HunksRequest{Rev: r.culprit})
		require.NoError(t, err)
		require.Len(t, rep.Hunks, 1)
		w.checkNoSilence(t, b.Config.Bisect.HunkRepeats, "ends", "test", "decided", "effect")
	})
	t.Run("envbisect", func(t *testing.T) {
		r := newHunkRepo(t)
		b, w := r.open(t)
		good := map[string]string{"NCCL_PROTO": "Simple", "NCCL_ALGO": "Tree", "OMP_NUM_THREADS": "8"}
		bad := map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring", "OMP_NUM_THREADS": "4"}
		scriptEnvs(r.host, r.parent, good, bad, "NCCL_PROTO")
		rep, err := b.EnvBisect(ctx, EnvBisectRequest{Rev: r.parent, GoodEnv: envFile(t, good), BadEnv: envFile(t, bad)})
		require.NoError(t, err)
		assert.Equal(t, []string{"NCCL_PROTO"}, rep.Minimal)
		w.checkNoSilence(t, b.Config.Bisect.HunkRepeats, "ends", "test", "decided", "effect")
	})
	t.Run("nightly", func(t *testing.T) {
		h := newNights(t, 6, func(int) float64 { return 1000 }, nil)
		w := &watch{host: h.host}
		b, err := Open(ctx, h.cfg, Options{Host: h.host, Progress: w, Clock: func() time.Time { return h.now }})
		require.NoError(t, err)
		defer b.Close()
		h.night(b, 2, 1)
		h.night(b, 5, 1)
		w.checkNoSilence(t, 1, "night")
	})
}

// checkTraced asserts that every line printed after the job started is in
// its stored trace.
func (b *Bot) checkTraced(t *testing.T, job string, w *watch) {
	t.Helper()
	tr, err := b.Store.Trace(job)
	require.NoError(t, err)
	traced := map[string]bool{}
	for _, l := range tr {
		traced[l.Text] = true
	}
	started := false
	for _, l := range w.lines {
		started = started || strings.Contains(l.text, "job "+job)
		if started {
			assert.True(t, traced[l.text], "line %q is in the job's trace", l.text)
		}
	}
	assert.True(t, started, "the job's first line names it")
}

// scriptEnvs scripts every mix of the good and bad environments at commit:
// slow when slowVar takes the bad value.
func scriptEnvs(host *runnertest.Fake, commit string, good, bad map[string]string, slowVar string) {
	names := minimize.EnvDiff(good, bad)
	for mask := range 1 << len(names) {
		var set []string
		level := 1000.0
		for i, n := range names {
			if mask&(1<<i) != 0 {
				set = append(set, n)
				if n == slowVar {
					level = 900
				}
			}
		}
		env := minimize.EnvConfiguration(good, bad, set)
		host.Targets[record.Target{Commit: commit, Env: env}.Key()] = noisy(level, int64(200+mask))
	}
}

func envFile(t *testing.T, env map[string]string) string {
	t.Helper()
	var b strings.Builder
	for k, v := range env {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	path := filepath.Join(t.TempDir(), "x.env")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

func TestHunksDocsOnlyAnsweredAtOnce(t *testing.T) {
	r := newHunkRepo(t)
	b, w := r.open(t)
	rep, err := b.Hunks(context.Background(), HunksRequest{Rev: r.docs})
	require.NoError(t, err)
	assert.Contains(t, rep.NoRuntimeChange, "every changed file is documentation (README.md, docs/tuning.md)")
	assert.Empty(t, rep.Hunks)
	assert.Equal(t, 2, rep.TotalHunks)
	assert.Zero(t, rep.Runs)
	assert.Zero(t, benchRuns(r.host), "nothing was measured")
	require.NotEmpty(t, w.lines)
	assert.Contains(t, w.lines[len(w.lines)-1].text, "no hunk can change the benchmark")
}

// TestDocsOnly checks the hunk search's use of gitops.DocsOnly: the
// configured docs component counts, and old and new paths both must be docs.
func TestDocsOnly(t *testing.T) {
	cfg := &config.Config{Components: config.Components{{Name: DocsComponent, Globs: []string{"site/**"}}, {Name: "comm", Globs: []string{"comm/**"}}}}
	b := &Bot{Config: cfg}
	for _, tc := range []struct {
		name     string
		old, new string
		docs     bool
	}{
		{name: "markdown", old: "README.md", new: "README.md", docs: true},
		{name: "the configured docs component", old: "site/index.html", new: "site/index.html", docs: true},
		{name: "a component that is not docs", old: "comm/a.go", new: "comm/a.go"},
		{name: "a source file renamed into docs", old: "engine/a.go", new: "docs/a.go"},
		{name: "a doc added", new: "docs/guide.md", docs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &gitops.Patch{Files: []*gitops.FileDiff{{OldPath: tc.old, NewPath: tc.new}}}
			assert.Equal(t, tc.docs, b.docsOnly(p) != "", b.docsOnly(p))
		})
	}
}

func TestSearchThatCannotSucceedStopsEarly(t *testing.T) {
	// The ends do not differ (the host answers every target alike): the
	// search stops after the ends' first comparison, InitialRuns a side,
	// instead of measuring each end to its limit of 120 runs.
	ctx := context.Background()
	t.Run("hunks", func(t *testing.T) {
		r := newHunkRepo(t)
		same := noisy(1000, 9)
		r.host.Commits, r.host.Default = nil, &same
		b, w := r.open(t)
		_, err := b.Hunks(ctx, HunksRequest{Rev: r.culprit})
		require.ErrorIs(t, err, minimize.ErrEndsAlike)
		var ie *InputError
		require.ErrorAs(t, err, &ie)
		assert.ErrorContains(t, err, "within the 2.0% worth isolating")
		t.Logf("%d runs before the search gave up", benchRuns(r.host))
		assert.LessOrEqual(t, benchRuns(r.host), 2*b.Config.Bisect.HunkRepeats+4)
		w.checkNoSilence(t, 8, "ends")
	})
	t.Run("envbisect", func(t *testing.T) {
		r := newHunkRepo(t)
		same := noisy(1000, 9)
		r.host.Commits, r.host.Default = nil, &same
		b, w := r.open(t)
		good := map[string]string{"NCCL_PROTO": "Simple"}
		bad := map[string]string{"NCCL_PROTO": "LL"}
		_, err := b.EnvBisect(ctx, EnvBisectRequest{Rev: r.parent, GoodEnv: envFile(t, good), BadEnv: envFile(t, bad)})
		require.ErrorIs(t, err, minimize.ErrEndsAlike)
		assert.ErrorContains(t, err, "make no measurable difference")
		t.Logf("%d runs before the search gave up", benchRuns(r.host))
		assert.LessOrEqual(t, benchRuns(r.host), 2*b.Config.Bisect.HunkRepeats+4)
		w.checkNoSilence(t, 8, "ends")
	})
}

func TestBisectKeepsItsCulpritWhenItsHunksCannotBeSearched(t *testing.T) {
	// A 1% drop, found by a bisection asked for changes from 0.5%: the
	// hunk search, which isolates changes from bisect.min_effect (2%)
	// only, stops at once; the bisection keeps its culprit and says why
	// there are no hunks.
	r := newHunkRepo(t)
	for i, h := range r.commits {
		level := 1000.0
		if i >= 3 {
			level = 990
		}
		r.host.Commits[h] = noisy(level, int64(i))
	}
	b, _ := r.open(t)
	rep, err := b.Bisect(context.Background(), BisectRequest{Good: r.commits[0], Bad: r.commits[4], Hunks: true, MinEffect: 0.005})
	require.NoError(t, err)
	require.Len(t, rep.Culprits, 1)
	assert.Equal(t, r.culprit, rep.Culprits[0].Commit)
	assert.Empty(t, rep.Hunks)
	assert.Contains(t, strings.Join(record.WarningStrings(rep.Warnings), "\n"), "were not searched")
	fs, err := b.StoreFindings(context.Background(), rep)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	assert.Empty(t, fs[0].Hunks())
}
