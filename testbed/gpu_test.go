package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/configs"
)

// gpuGenerated is one GPU testbed for the tests that only read it.
var gpuGenerated struct {
	once sync.Once
	dir  string
	m    *Manifest
	err  error
}

func gpuRepo(t *testing.T) (string, *Manifest) {
	t.Helper()
	requireGit(t)
	gpuGenerated.once.Do(func() {
		gpuGenerated.dir = filepath.Join(sharedTemp(t), "infer-gpu")
		gpuGenerated.m, gpuGenerated.err = GenerateGPU(context.Background(), gpuGenerated.dir, 1)
	})
	require.NoError(t, gpuGenerated.err)
	return gpuGenerated.dir, gpuGenerated.m
}

// sharedTemp is a directory that TestMain removes: the repositories the
// tests share outlive any one test.
func sharedTemp(t *testing.T) string {
	dir, err := os.MkdirTemp("", "testbed-gpu-")
	require.NoError(t, err)
	sharedDirs = append(sharedDirs, dir)
	return dir
}

var sharedDirs []string

func TestGenerateGPUIsDeterministic(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	gen := func(seed int64) (string, *Manifest) {
		dir := filepath.Join(t.TempDir(), "infer-gpu")
		m, err := GenerateGPU(ctx, dir, seed)
		require.NoError(t, err)
		return dir, m
	}
	firstDir, first := gen(7)
	againDir, again := gen(7)
	_, other := gen(8)
	assert.Equal(t, first.Head, again.Head, "same seed, same history")
	assert.Equal(t, gitOut(t, firstDir, "log", "--format=%H %T", "main"), gitOut(t, againDir, "log", "--format=%H %T", "main"), "same commits and trees")
	for i := range first.Changes {
		assert.Equal(t, first.Changes[i].Commit, again.Changes[i].Commit, "change %s", first.Changes[i].ID)
	}
	firstJSON, err := os.ReadFile(ManifestPath(firstDir))
	require.NoError(t, err)
	againJSON, err := os.ReadFile(ManifestPath(againDir))
	require.NoError(t, err)
	assert.Equal(t, strings.ReplaceAll(string(firstJSON), firstDir, "DIR"), strings.ReplaceAll(string(againJSON), againDir, "DIR"), "the same manifest but for the directory")
	assert.NotEqual(t, first.Head, other.Head, "another seed, another history")
	assert.Equal(t, first.Root, other.Root, "the root commit does not depend on the seed")
	assert.NotEqual(t, first.Root, mustGenerateGo(t).Root, "the GPU testbed is not the Go one")
}

func mustGenerateGo(t *testing.T) *Manifest {
	_, m := repo(t)
	return m
}

func TestGPUHistoryShape(t *testing.T) {
	dir, m := gpuRepo(t)
	assert.Equal(t, "gpu", m.Testbed)
	assert.Empty(t, m.Module)
	count, err := strconv.Atoi(gitOut(t, dir, "rev-list", "--first-parent", "--count", "main"))
	require.NoError(t, err)
	assert.Equal(t, m.Commits, count)
	assert.GreaterOrEqual(t, count, 40)
	assert.Equal(t, m.Head, gitOut(t, dir, "rev-parse", "HEAD"))
	assert.Empty(t, gitOut(t, dir, "rev-list", "--merges", "main"), "a straight history")
	assert.Empty(t, gitOut(t, dir, "status", "--porcelain"), "the repository holds nothing but its history")
	assert.Equal(t, "main", gitOut(t, dir, "branch", "--format=%(refname:short)"))

	files := strings.Split(gitOut(t, dir, "ls-tree", "-r", "--name-only", "HEAD"), "\n")
	for _, want := range []string{".gitignore", "bench/run.py", "model/__init__.py", "attention/backend.py", "speculative/verify.py", "runtime/graphs.py", "communicator/allreduce.py", "tests/test_speculative.py"} {
		assert.Contains(t, files, want)
	}
	for _, f := range files {
		assert.NotContains(t, f, "__pycache__")
	}
	authors := slices.Compact(slices.Sorted(slices.Values(strings.Split(gitOut(t, dir, "log", "--format=%an", "main"), "\n"))))
	assert.GreaterOrEqual(t, len(authors), 4, "authors: %q", authors)
}

// TestGPUGroundTruth checks that each change of the manifest is in the
// commit it names, at the hunk it names, and nowhere in its parent.
func TestGPUGroundTruth(t *testing.T) {
	dir, m := gpuRepo(t)
	onMain := gitOut(t, dir, "rev-list", "--first-parent", "main")
	for _, tc := range []struct {
		id, file, function, component, line string
		kind                                Kind
		minFiles                            int
	}{
		{"a", "runtime/engine.py", "ModelRunner.forward", "runtime", "if mode is ForwardMode.DECODE and self.graphs.can_run(", Regression, 4},
		{"b", "attention/backend.py", "backends_for", "attention", `return BACKEND_SETS["math"]`, Regression, 1},
		{"c", "model/layers.py", "attention_block", "model", "q, k, v = (a.float().to(a.dtype) for a in (q, k, v))", Regression, 1},
		{"d", "model/layers.py", "attention_block", "model", "qk = Rotary.apply(torch.cat((q, k), dim=1), cos, sin)", Improvement, 1},
	} {
		t.Run(tc.id, func(t *testing.T) {
			c, ok := m.Change(tc.id)
			require.True(t, ok)
			assert.Equal(t, tc.kind, c.Kind)
			assert.Equal(t, c.Parent, gitOut(t, dir, "rev-parse", c.Commit+"^1"))
			assert.Equal(t, c.Subject, gitOut(t, dir, "log", "-1", "--format=%s", c.Commit))
			assert.Contains(t, onMain, c.Commit)
			n, err := strconv.Atoi(gitOut(t, dir, "rev-list", "--first-parent", "--count", c.Commit))
			require.NoError(t, err)
			assert.Equal(t, c.Index+1, n, "index on the first-parent chain")
			assert.Equal(t, strings.Join(c.Files, "\n"), gitOut(t, dir, "diff", "--name-only", c.Parent, c.Commit))
			assert.GreaterOrEqual(t, len(c.Files), tc.minFiles)

			require.NotNil(t, c.Hunk)
			assert.Equal(t, Hunk{File: tc.file, Function: tc.function, Component: tc.component, Start: c.Hunk.Start, Lines: c.Hunk.Lines}, *c.Hunk)
			lines := strings.Split(gitOut(t, dir, "show", c.Commit+":"+tc.file), "\n")
			require.LessOrEqual(t, c.Hunk.Start-1+c.Hunk.Lines, len(lines))
			hunk := strings.Join(lines[c.Hunk.Start-1:c.Hunk.Start-1+c.Hunk.Lines], "\n")
			assert.Contains(t, hunk, tc.line, "the hunk's lines hold the change")
			assert.NotContains(t, gitOut(t, dir, "show", c.Parent+":"+tc.file), tc.line, "the parent does not")
			assert.True(t, diffTouches(t, dir, c, tc.file), "git's diff has a hunk at %s:%d+%d", tc.file, c.Hunk.Start, c.Hunk.Lines)
			assert.Less(t, c.Effects[VerifyTokS]*c.Effects[VerifyMs], 0.0, "verify tok/s and ms move apart")
			if tc.kind == Regression {
				assert.Negative(t, c.Effects[VerifyTokS])
				assert.Zero(t, c.Effects[DecodeTokS], "only the verify path slows")
			} else {
				assert.Positive(t, c.Effects[VerifyTokS])
				assert.Positive(t, c.Effects[DecodeTokS])
			}
		})
	}
	a, _ := m.Change("a")
	assert.InDelta(t, -60, a.Effects[VerifyTokS], 10, "verify about 2.5x slower")
	c, _ := m.Change("c")
	assert.True(t, c.Effects[VerifyTokS] <= -3 && c.Effects[VerifyTokS] >= -6, "a small regression")

	e, ok := m.Change("e")
	require.True(t, ok)
	assert.Equal(t, BuildBreak, e.Kind)
	assert.Nil(t, e.Hunk)
	assert.Equal(t, e.Commit, gitOut(t, dir, "rev-parse", e.Fix+"^1"), "the fix follows the break")
	assert.Len(t, m.Changes, 5)
}

var hunkHeader = regexp.MustCompile(`(?m)^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@`)

// diffTouches reports whether git's diff of c's file has a hunk that
// overlaps the lines the manifest names.
func diffTouches(t *testing.T, dir string, c Change, file string) bool {
	out := gitOut(t, dir, "diff", "-U0", c.Parent, c.Commit, "--", file)
	for _, h := range hunkHeader.FindAllStringSubmatch(out, -1) {
		start, _ := strconv.Atoi(h[1])
		n := 1
		if h[2] != "" {
			n, _ = strconv.Atoi(h[2])
		}
		if start < c.Hunk.Start+c.Hunk.Lines && c.Hunk.Start < start+max(n, 1) {
			return true
		}
	}
	return false
}

func TestEnclosingPyFunc(t *testing.T) {
	src := `"""Module."""

import torch


def top(x):
    """Doc."""
    return x


class Runner:
    """A class."""

    size = 3

    def forward(self, x):
        if x:

            return 1
        return 2

    def other(self):
        def inner():
            pass
        return inner


TAIL = 1
`
	for _, tc := range []struct {
		name        string
		start, size int
		want        string
	}{
		{"module docstring", 1, 1, ""},
		{"import", 3, 1, ""},
		{"def line", 6, 1, "top"},
		{"function body", 8, 1, "top"},
		{"class attribute", 14, 1, "Runner"},
		{"method body", 17, 1, "Runner.forward"},
		{"a blank first line inside a method", 18, 2, "Runner.forward"},
		{"nested function", 24, 1, "Runner.other.inner"},
		{"method after a nested function", 25, 1, "Runner.other"},
		{"module tail", 28, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, enclosingPyFunc("x.py", src, tc.start, tc.size))
		})
	}
	assert.Empty(t, enclosingPyFunc("README.md", src, 8, 1))
}

// TestGPUComponentsMatchConfig checks gpuComponentOf against the component
// globs of configs/gpu-testbed.yaml for every path of the head.
func TestGPUComponentsMatchConfig(t *testing.T) {
	dir, m := gpuRepo(t)
	cfg := gpuConfig(t)
	var names []string
	for _, c := range cfg.Components {
		names = append(names, c.Name)
	}
	assert.Equal(t, GPUComponents, names)
	for _, p := range strings.Split(gitOut(t, dir, "ls-tree", "-r", "--name-only", m.Head), "\n") {
		assert.Equal(t, cfg.Components.Match(p), gpuComponentOf(p), "component of %s", p)
	}
}

func gpuConfig(t *testing.T) *config.Config {
	t.Helper()
	data, err := configs.FS.ReadFile("gpu-testbed.yaml")
	require.NoError(t, err)
	cfg, err := config.Parse(data, "gpu-testbed.yaml")
	require.NoError(t, err)
	return cfg
}

// torchPython returns a python3 that imports torch: $TESTBED_PYTHON, else
// python3 on PATH, else Debian's /usr/bin/python3 (where python3-torch
// installs). Without one the test is skipped, except in CI, which installs
// python3-torch, so that the numerics are never silently left unchecked.
func torchPython(t *testing.T) string {
	t.Helper()
	torchFound.once.Do(func() { torchFound.path = findTorchPython() })
	if torchFound.path != "" {
		return torchFound.path
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no python3 that imports torch (CI installs python3-torch)")
	}
	t.Skip("no python3 that imports torch")
	return ""
}

var torchFound struct {
	once sync.Once
	path string
}

func findTorchPython() string {
	var candidates []string
	if p := os.Getenv("TESTBED_PYTHON"); p != "" {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "python3", "/usr/bin/python3")
	for _, c := range candidates {
		if path, err := exec.LookPath(c); err == nil && exec.Command(path, "-c", "import torch").Run() == nil {
			return path
		}
	}
	return ""
}

// checkout adds a worktree of commit and returns its directory.
func checkout(t *testing.T, repoDir, commit string) string {
	t.Helper()
	wt := filepath.Join(t.TempDir(), commit[:12])
	gitOut(t, repoDir, "worktree", "add", "-q", "--detach", wt, commit)
	t.Cleanup(func() { _, _ = git(context.Background(), repoDir, nil, "worktree", "remove", "--force", wt) })
	return wt
}

// python runs script (a path) with args in dir, with env added; it returns
// stdout and stderr together.
func python(t *testing.T, py, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(py, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "TESTBED_DEVICE=cpu"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "%s %s: %s", py, strings.Join(args, " "), out.String())
	return out.Bytes()
}

func testdataPath(t *testing.T, name string) string {
	p, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(t, err)
	return p
}

// TestGPUImportCheck imports the engine at every first-parent commit: only
// the build break fails.
func TestGPUImportCheck(t *testing.T) {
	py := torchPython(t)
	dir, m := gpuRepo(t)
	commits := strings.Split(gitOut(t, dir, "rev-list", "--first-parent", "--reverse", "main"), "\n")
	byDir := map[string]string{}
	var dirs []string
	for _, c := range commits {
		wt := checkout(t, dir, c)
		byDir[wt] = c
		dirs = append(dirs, wt)
	}
	var results map[string]string
	out := python(t, py, t.TempDir(), nil, append([]string{testdataPath(t, "gpu_imports.py")}, dirs...)...)
	require.NoError(t, json.Unmarshal(lastLine(out), &results), "%s", out)
	require.Len(t, results, len(commits))
	e, _ := m.Change("e")
	for wt, errText := range results {
		if byDir[wt] == e.Commit {
			assert.Contains(t, errText, "ImportError", "the build break fails its import check")
			continue
		}
		assert.Empty(t, errText, "commit %s imports", byDir[wt])
	}
}

func lastLine(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	return lines[len(lines)-1]
}

// numerics is what testdata/gpu_numerics.py prints.
type numerics struct {
	Torch        string      `json:"torch"`
	SDPA         bool        `json:"sdpa"`
	Graphs       []int       `json:"graphs"`
	K            int         `json:"k"`
	Greedy       []int       `json:"greedy"`
	Speculative  []int       `json:"speculative"`
	VerifySteps  int         `json:"verify_steps"`
	Accepted     int         `json:"accepted"`
	Predictions  []int       `json:"verify_predictions"`
	DecodeLogits [][]float64 `json:"decode_logits"`
	VerifyLogits [][]float64 `json:"verify_logits"`
}

// logitTolerance bounds the difference between logits of the same token
// computed in one verify pass and in decode steps (float32 on the CPU).
const logitTolerance = 1e-4

// TestGPUNumerics checks on the CPU, at the root (where the verify step
// replays its graph) and at the head (where it runs eagerly), that the
// verify step computes what decoding token by token computes, that
// speculative decoding emits greedy decoding's tokens, and that turning
// CUDA graphs off (TESTBED_CUDA_GRAPHS=0) changes none of the numbers.
func TestGPUNumerics(t *testing.T) {
	py := torchPython(t)
	dir, m := gpuRepo(t)
	revs := []struct{ name, commit string }{{"root", m.Root}, {"head", m.Head}}
	var dirs []string
	for _, rev := range revs {
		dirs = append(dirs, checkout(t, dir, rev.commit))
	}
	var results map[string]struct{ On, Off numerics }
	out := python(t, py, t.TempDir(), nil, append([]string{testdataPath(t, "gpu_numerics.py")}, dirs...)...)
	require.NoError(t, json.Unmarshal(lastLine(out), &results), "%s", out)
	for i, rev := range revs {
		t.Run(rev.name, func(t *testing.T) {
			r, ok := results[dirs[i]]
			require.True(t, ok)
			on, off := r.On, r.Off
			t.Logf("torch %s, sdpa %v, %d verify steps for %d tokens", on.Torch, on.SDPA, on.VerifySteps, len(on.Greedy))
			assert.Equal(t, []int{1, on.K + 1}, on.Graphs, "graphs for decode and verify")
			assert.Empty(t, off.Graphs, "TESTBED_CUDA_GRAPHS=0 captures nothing")

			assert.Len(t, on.Greedy, 12)
			assert.Equal(t, on.Greedy, on.Speculative, "speculative decoding emits greedy's tokens")
			assert.Less(t, on.VerifySteps, len(on.Greedy), "some drafts are accepted")
			assert.Equal(t, on.K, on.Accepted, "verify accepts greedy's own continuation in full")
			assert.Equal(t, on.Greedy[1:on.K+2], on.Predictions, "verify predicts what decode chose")
			assertClose(t, on.DecodeLogits, on.VerifyLogits, "verify against decode")

			assert.Equal(t, on.Greedy, off.Greedy, "graphs off: the same tokens")
			assert.Equal(t, on.Speculative, off.Speculative)
			assertClose(t, on.DecodeLogits, off.DecodeLogits, "decode logits, graphs on and off")
			assertClose(t, on.VerifyLogits, off.VerifyLogits, "verify logits, graphs on and off")
		})
	}
	assert.Equal(t, results[dirs[0]].On.Greedy, results[dirs[1]].On.Greedy, "no change of the history alters the tokens")
}

func assertClose(t *testing.T, want, got [][]float64, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	worst := 0.0
	for i := range want {
		require.Equal(t, len(want[i]), len(got[i]), what)
		for j := range want[i] {
			worst = max(worst, math.Abs(want[i][j]-got[i][j]))
		}
	}
	assert.Less(t, worst, logitTolerance, "%s: largest difference", what)
}

// TestGPUBenchPrintsGoBenchmarks runs bench/run.py at the head on the CPU,
// shortened and with TESTBED_CUDA_GRAPHS=0 in its environment, and selects
// every metric of configs/gpu-testbed.yaml from its output (stdout and
// stderr together, as the runner captures them).
func TestGPUBenchPrintsGoBenchmarks(t *testing.T) {
	py := torchPython(t)
	dir, m := gpuRepo(t)
	wt := checkout(t, dir, m.Head)
	out := python(t, py, wt, []string{"TESTBED_VERIFY_ITERS=4", "TESTBED_DECODE_ITERS=4", "TESTBED_WARMUP=2", "TESTBED_COUNT=2", "TESTBED_CUDA_GRAPHS=0"}, "bench/run.py")
	samples, err := bench.Parse("gobench", bytes.NewReader(out), nil)
	require.NoError(t, err, "%s", out)
	cfg := gpuConfig(t)
	for _, metric := range cfg.Metrics {
		v, err := bench.Select(samples, metric.Select, metric.Unit)
		require.NoError(t, err, "metric %s in\n%s", metric.Name, out)
		assert.Positive(t, v, metric.Name)
	}
	perName := map[string]int{}
	for _, s := range samples {
		perName[s.Name+" "+s.Unit]++
	}
	assert.Equal(t, map[string]int{"VerifyStep sec/op": 2, "VerifyStep tok/s": 2, "VerifyStep ms/verify": 2, "Decode sec/op": 2, "Decode tok/s": 2}, perName, "two rounds of each")
	assert.Contains(t, string(out), "graphs: off", "the variable reaches the engine")
}

// TestGPURepositoryTests runs the generated repository's own unit tests at
// the head.
func TestGPURepositoryTests(t *testing.T) {
	py := torchPython(t)
	dir, m := gpuRepo(t)
	wt := checkout(t, dir, m.Head)
	out := python(t, py, wt, nil, "-m", "unittest", "discover", "tests")
	assert.Contains(t, string(out), "OK")
}
