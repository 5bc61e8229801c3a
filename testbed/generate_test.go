package testbed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/record"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// generated is one repository for the tests that only read it.
var generated struct {
	once sync.Once
	dir  string
	m    *Manifest
	err  error
}

func repo(t *testing.T) (string, *Manifest) {
	t.Helper()
	requireGit(t)
	generated.once.Do(func() {
		dir, err := os.MkdirTemp("", "testbed-")
		if err != nil {
			generated.err = err
			return
		}
		generated.dir = filepath.Join(dir, "infer")
		generated.m, generated.err = Generate(context.Background(), generated.dir, 1)
	})
	require.NoError(t, generated.err)
	return generated.dir, generated.m
}

func TestMain(m *testing.M) {
	code := m.Run()
	if generated.dir != "" {
		os.RemoveAll(filepath.Dir(generated.dir))
	}
	for _, dir := range sharedDirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(context.Background(), dir, nil, args...)
	require.NoError(t, err)
	return strings.TrimSpace(out)
}

func TestGenerateIsDeterministic(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	gen := func(seed int64) *Manifest {
		dir := filepath.Join(t.TempDir(), "infer")
		m, err := Generate(ctx, dir, seed)
		require.NoError(t, err)
		return m
	}
	first, again, other := gen(7), gen(7), gen(8)
	assert.Equal(t, first.Head, again.Head, "same seed, same history")
	for i := range first.Changes {
		assert.Equal(t, first.Changes[i].Commit, again.Changes[i].Commit, "change %s", first.Changes[i].ID)
	}
	assert.NotEqual(t, first.Head, other.Head, "another seed, another history")
	assert.Equal(t, first.Root, other.Root, "the root commit does not depend on the seed")
}

func TestGenerateRelativeDir(t *testing.T) {
	requireGit(t)
	t.Chdir(t.TempDir())
	m, err := Generate(context.Background(), "infer", 1)
	require.NoError(t, err)
	assert.True(t, filepath.IsAbs(m.Repo), "the manifest names the repository absolutely: %s", m.Repo)
	_, err = LoadManifest("infer.manifest.json")
	require.NoError(t, err)
}

func TestGenerateRejectsNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), nil, 0o644))
	_, err := Generate(context.Background(), dir, 1)
	require.ErrorContains(t, err, "not empty")
}

func TestManifestBesideRepository(t *testing.T) {
	dir, m := repo(t)
	loaded, err := LoadManifest(ManifestPath(dir))
	require.NoError(t, err)
	assert.Equal(t, m, loaded)
	assert.Equal(t, dir+".manifest.json", ManifestPath(dir+"/"))
	assert.Empty(t, gitOut(t, dir, "status", "--porcelain"), "the repository holds nothing but its history")
}

func TestHistoryShape(t *testing.T) {
	dir, m := repo(t)
	count, err := strconv.Atoi(gitOut(t, dir, "rev-list", "--first-parent", "--count", "main"))
	require.NoError(t, err)
	assert.Equal(t, m.Commits, count)
	assert.GreaterOrEqual(t, count, 120)
	assert.Equal(t, m.Head, gitOut(t, dir, "rev-parse", "HEAD"))
	assert.Equal(t, m.Root, gitOut(t, dir, "rev-list", "--max-parents=0", "main"))

	authors := slices.Compact(slices.Sorted(slices.Values(strings.Split(gitOut(t, dir, "log", "--format=%an", "main"), "\n"))))
	assert.GreaterOrEqual(t, len(authors), 5, "authors: %q", authors)

	var prev int64
	for _, s := range strings.Split(gitOut(t, dir, "log", "--first-parent", "--reverse", "--format=%ct", "main"), "\n") {
		ts, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		assert.Greater(t, ts, prev, "dates rise along the first-parent chain")
		prev = ts
	}

	head := gitOut(t, dir, "show", "HEAD:go.mod")
	assert.Equal(t, strings.TrimSpace(goMod), head, "a module with no dependencies")
	assert.Empty(t, gitGrep(t, dir, enginePath), "import paths are rewritten")
	assert.Equal(t, "main", gitOut(t, dir, "branch", "--format=%(refname:short)"), "only main remains")
}

func gitGrep(t *testing.T, dir, s string) string {
	out, err := git(context.Background(), dir, nil, "grep", "-l", s, "HEAD")
	if err != nil {
		return "" // git grep exits 1 when nothing matches
	}
	return out
}

func TestGroundTruthAgreesWithGit(t *testing.T) {
	dir, m := repo(t)
	ids := ""
	prevIndex := 0
	for _, id := range []string{"b", "e", "c", "g", "f", "a", "d"} {
		c, ok := m.Change(id)
		require.True(t, ok, "change %s", id)
		assert.Greater(t, c.Index, prevIndex, "change %s comes after the one before it", id)
		prevIndex = c.Index
		ids += c.ID
		t.Run(id, func(t *testing.T) {
			assert.Equal(t, c.Parent, gitOut(t, dir, "rev-parse", c.Commit+"^1"))
			assert.Equal(t, c.Subject, gitOut(t, dir, "log", "-1", "--format=%s", c.Commit))
			assert.Equal(t, strings.Join(c.Files, "\n"), gitOut(t, dir, "diff", "--name-only", c.Parent, c.Commit))
			onMain := gitOut(t, dir, "rev-list", "--first-parent", "main")
			assert.Contains(t, onMain, c.Commit, "on the first-parent chain")
			n, err := strconv.Atoi(gitOut(t, dir, "rev-list", "--first-parent", "--count", c.Commit))
			require.NoError(t, err)
			assert.Equal(t, c.Index+1, n, "index on the first-parent chain")
		})
	}
	assert.Len(t, m.Changes, len(ids))
}

func TestChangesAreWhatTheySay(t *testing.T) {
	dir, m := repo(t)
	change := func(id string) Change {
		c, ok := m.Change(id)
		require.True(t, ok)
		return c
	}
	for _, tc := range []struct {
		id, file, function, component, line string
		kind                                Kind
		minFiles                            int
	}{
		{"a", "communicator/options.go", "Options.customIneligible", "communicator", "case n*4 < minCustomBytes:", Regression, 6},
		{"b", "attention/tiled.go", "(*tiled).Extend", "attention", "tm = max(tm, kernels.Dot(", Regression, 1},
		{"c", "speculative/draft.go", "(*Draft).Forward", "speculative", "dr.logitsOf(b.x[:t*d], t)", Regression, 1},
		{"d", "model/kernels/kernels.go", "Dot", "model", "s0 += aa[0] * bb[0]", Improvement, 1},
	} {
		t.Run(tc.id, func(t *testing.T) {
			c := change(tc.id)
			assert.Equal(t, tc.kind, c.Kind)
			assert.GreaterOrEqual(t, len(c.Files), tc.minFiles)
			require.NotNil(t, c.Hunk)
			assert.Equal(t, Hunk{File: tc.file, Function: tc.function, Component: tc.component, Start: c.Hunk.Start, Lines: c.Hunk.Lines}, *c.Hunk)
			lines := strings.Split(gitOut(t, dir, "show", c.Commit+":"+tc.file), "\n")
			require.LessOrEqual(t, c.Hunk.Start-1+c.Hunk.Lines, len(lines))
			hunk := strings.Join(lines[c.Hunk.Start-1:c.Hunk.Start-1+c.Hunk.Lines], "\n")
			assert.Contains(t, hunk, tc.line, "the hunk's lines hold the change")
			assert.NotContains(t, gitOut(t, dir, "show", c.Parent+":"+tc.file), tc.line, "the parent does not")
			assert.NotZero(t, c.Effects[VerifyTokS])
		})
	}

	e := change("e")
	assert.Equal(t, BuildBreak, e.Kind)
	assert.Equal(t, e.Commit, gitOut(t, dir, "rev-parse", e.Fix+"^1"), "the fix follows the break")

	f := change("f")
	parents := strings.Fields(gitOut(t, dir, "rev-list", "--parents", "-n1", f.Commit))
	require.Len(t, parents, 3, "a merge has two parents")
	assert.Equal(t, f.Parent, parents[1], "its first parent is on main")
	assert.NotContains(t, gitOut(t, dir, "rev-list", "--first-parent", "main"), parents[2])
	for _, p := range f.Files {
		assert.True(t, strings.HasPrefix(p, "cmd/infer/") || strings.HasPrefix(p, "docs/"), "merged file %s", p)
	}

	g := change("g")
	for _, p := range g.Files {
		assert.True(t, strings.HasPrefix(p, "docs/") || strings.HasSuffix(p, "_test.go"), "file %s is documentation or a test", p)
	}
	for _, id := range []string{"f", "g"} {
		for metric, pct := range change(id).Effects {
			assert.Zero(t, pct, "%s must not move %s", id, metric)
		}
	}
}

// TestCommitsBuild type-checks the benchmark package, tests included, at
// every commit the manifest names and at the head, and checks that the
// broken commit does not build.
func TestCommitsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the engine at several commits")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	dir, m := repo(t)
	build := func(commit string) error {
		wt := filepath.Join(t.TempDir(), "wt")
		gitOut(t, dir, "worktree", "add", "-q", "--detach", wt, commit)
		defer gitOut(t, dir, "worktree", "remove", "--force", wt)
		cmd := exec.Command(goBin, "vet", "./bench")
		cmd.Dir = wt
		out, err := cmd.CombinedOutput()
		if err != nil {
			return &exec.ExitError{Stderr: out}
		}
		return nil
	}
	commits := []string{m.Head}
	for _, c := range m.Changes {
		if c.Kind == BuildBreak {
			assert.Error(t, build(c.Commit), "change %s must not build", c.ID)
			commits = append(commits, c.Parent, c.Fix)
			continue
		}
		commits = append(commits, c.Parent, c.Commit)
	}
	slices.Sort(commits)
	for _, c := range slices.Compact(commits) {
		if err := build(c); err != nil {
			t.Errorf("%s does not build: %s", record.ShortHash(c), err.(*exec.ExitError).Stderr)
		}
	}
}
