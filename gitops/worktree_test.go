package gitops_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
)

func TestWorkingDiff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	user := gitopstest.NewBuilder(t)
	head := user.Commit("base", map[string]string{
		".gitignore":   "*.log\n",
		"engine.txt":   numberedLines(20, nil),
		"obsolete.txt": "old\n",
	})
	r := open(t, user.Dir)

	user.Write(map[string]string{
		"engine.txt":     numberedLines(20, map[int]string{2: "two\n", 18: "eighteen\n"}),
		"obsolete.txt":   "",
		"staged.txt":     "staged\n",
		"sub/fresh.txt":  "untracked\n",
		"build/run.log":  "ignored\n",
		"trace.log":      "ignored too\n",
		"notes/todo.txt": "untracked too\n",
	})
	user.Git("add", "staged.txt")
	index := filepath.Join(user.Dir, ".git", "index")
	indexBefore, err := os.ReadFile(index)
	require.NoError(t, err)
	statusBefore := user.Git("status", "--porcelain")

	p, c, err := r.WorkingDiff(ctx, filepath.Join(user.Dir, "sub"))
	require.NoError(t, err)
	assert.Equal(t, head, c.Hash)
	assert.Equal(t, head, p.Base)
	kinds := map[string]gitops.FileKind{}
	for _, f := range p.Files {
		kinds[f.Path()] = f.Kind
	}
	assert.Equal(t, map[string]gitops.FileKind{
		"engine.txt":     gitops.Modified,
		"obsolete.txt":   gitops.Deleted,
		"staged.txt":     gitops.Added,
		"sub/fresh.txt":  gitops.Added,
		"notes/todo.txt": gitops.Added,
	}, kinds)
	assert.Len(t, p.Hunks(), 6)

	indexAfter, err := os.ReadFile(index)
	require.NoError(t, err)
	assert.Equal(t, indexBefore, indexAfter, "the user's index is untouched")
	assert.Equal(t, statusBefore, user.Git("status", "--porcelain"))

	dir, err := r.CheckoutPatch(ctx, 0, p, ids(p.Hunks()))
	require.NoError(t, err)
	for _, path := range []string{"engine.txt", "staged.txt", "sub/fresh.txt", "notes/todo.txt"} {
		assert.Equal(t, readFile(t, user.Dir, path), readFile(t, dir, path), path)
	}
	assert.NoFileExists(t, filepath.Join(dir, "obsolete.txt"))
	assert.NoFileExists(t, filepath.Join(dir, "trace.log"))

	again, _, err := r.WorkingDiff(ctx, user.Dir)
	require.NoError(t, err)
	assert.Equal(t, p.ID, again.ID, "same changes, same patch")
}

func TestWorkingDiffFetchesHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	upstream := gitopstest.NewBuilder(t)
	upstream.Numbered(2)
	r := open(t, upstream.Dir)

	tests := []struct {
		name string
		// user returns the user's checkout, whose next commit the clone
		// lacks.
		user func(t *testing.T) *gitopstest.Builder
	}{
		{name: "pushed after the clone", user: func(t *testing.T) *gitopstest.Builder {
			return upstream
		}},
		{name: "never pushed", user: func(t *testing.T) *gitopstest.Builder {
			local := gitopstest.NewBuilder(t)
			local.Git("fetch", "-q", upstream.Dir, "main")
			local.Git("checkout", "-q", "--detach", "FETCH_HEAD")
			return local
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := tt.user(t)
			want := user.Commit(tt.name, map[string]string{"c.txt": tt.name + "\n"})
			user.Write(map[string]string{"c.txt": "changed\n"})

			p, c, err := r.WorkingDiff(ctx, user.Dir)
			require.NoError(t, err)
			assert.Equal(t, want, c.Hash)
			assert.Equal(t, tt.name, c.Subject)
			assert.Equal(t, []string{"c.txt"}, paths(p))
			_, err = r.Resolve(ctx, want)
			assert.NoError(t, err, "the clone keeps the commit")
		})
	}
}

func paths(p *gitops.Patch) []string {
	var out []string
	for _, f := range p.Files {
		out = append(out, f.Path())
	}
	sort.Strings(out)
	return out
}

// TestWorkingDiffScratchUnderWorkdir checks that the copy of the user's
// index lives under perfbot's workdir, not in the temp directory, and is
// removed.
func TestWorkingDiffScratchUnderWorkdir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	user := gitopstest.NewBuilder(t)
	user.Commit("base", map[string]string{"engine.txt": "one\n"})
	workdir := t.TempDir()
	r, err := gitops.Open(ctx, user.Dir, workdir)
	require.NoError(t, err)
	user.Write(map[string]string{"engine.txt": "two\n", "fresh.txt": "new\n"})

	p, _, err := r.WorkingDiff(ctx, user.Dir)
	require.NoError(t, err)
	assert.Len(t, p.Files, 2)
	left, err := os.ReadDir(filepath.Join(workdir, "tmp"))
	require.NoError(t, err)
	assert.Empty(t, left, "the scratch index is removed")
	inTmp, err := filepath.Glob(filepath.Join(tmp, "perfbot-*"))
	require.NoError(t, err)
	assert.Empty(t, inTmp)
}

// The user's checkout may configure commands that git runs on its own:
// perfbot's git commands there run none of them, as they run no hooks.
func TestWorkingDiffRunsNoUserCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, key string
	}{
		{name: "an fsmonitor hook", key: "core.fsmonitor"},
		{name: "a post-index-change hook", key: "core.hooksPath"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := gitopstest.NewBuilder(t)
			user.Commit("base", map[string]string{"engine.txt": "one\n"})
			r := open(t, user.Dir)
			mark := filepath.Join(t.TempDir(), "ran")
			script := filepath.Join(t.TempDir(), "run-me")
			require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho ran >> "+mark+"\n"), 0o755))
			value := script
			if tc.key == "core.hooksPath" {
				hooks := t.TempDir()
				for _, h := range []string{"post-index-change", "fsmonitor-watchman"} {
					require.NoError(t, os.Symlink(script, filepath.Join(hooks, h)))
				}
				value = hooks
			}
			user.Git("config", tc.key, value)
			user.Write(map[string]string{"engine.txt": "two\n", "new.txt": "new\n"})

			p, _, err := r.WorkingDiff(ctx, user.Dir)
			require.NoError(t, err)
			assert.Len(t, p.Files, 2)
			assert.NoFileExists(t, mark, "the user's %s ran", tc.key)
		})
	}
}

// TestWorkingDiffLeavesOutPerfbotsOwnFiles: with perfbot.yaml inside the
// working copy, perfbot's state (.perfbot/: clone, store, issues) and the
// config itself are not the user's changes, tracked or not.
func TestWorkingDiffLeavesOutPerfbotsOwnFiles(t *testing.T) {
	ctx := context.Background()
	user := gitopstest.NewBuilder(t)
	user.Commit("base", map[string]string{"engine.txt": "one\n", ".perfbot/issues/old.md": "committed by mistake\n"})
	r, err := gitops.Open(ctx, user.Dir, t.TempDir())
	require.NoError(t, err)
	user.Write(map[string]string{
		"engine.txt":             "two\n",
		"perfbot.yaml":           "repo: {url: .}\n",
		".perfbot/perfbot.db":    "bbolt\n",
		".perfbot/work/x/a.go":   "package x\n",
		".perfbot/issues/old.md": "rewritten\n",
	})
	p, _, err := r.WorkingDiff(ctx, user.Dir, ".perfbot/work", filepath.Join(user.Dir, ".perfbot/perfbot.db"), ".perfbot/issues", "perfbot.yaml", "/elsewhere/out-of-tree")
	require.NoError(t, err)
	assert.Equal(t, []string{"engine.txt"}, paths(p))

	p, _, err = r.WorkingDiff(ctx, user.Dir)
	require.NoError(t, err)
	assert.Len(t, p.Files, 5, "nothing left out unless asked")
}
