package gitopstest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops/gitopstest"
)

func TestNewRepo(t *testing.T) {
	dir, commits := gitopstest.NewRepo(t, 5)
	require.Len(t, commits, 5)

	for i, c := range commits {
		msg := git(t, dir, "log", "-1", "--format=%s", c)
		assert.Equal(t, strconv.Itoa(i+1), msg, "title of commit %d", i)
	}
	assert.Equal(t, commits[4], git(t, dir, "rev-parse", "HEAD"))
	content, err := os.ReadFile(filepath.Join(dir, "counter.txt"))
	require.NoError(t, err)
	assert.Equal(t, "5\n", string(content), "working tree is checked out at the tip")
	assert.Empty(t, git(t, dir, "status", "--porcelain"))
}

func TestDeterministicHashes(t *testing.T) {
	build := func() []string {
		b := gitopstest.NewBuilder(t)
		hashes := b.Numbered(3)
		b.Branch("feature")
		f := b.Commit("feature work", map[string]string{"f.txt": "f\n"})
		b.Switch("main")
		m := b.Commit("main work", map[string]string{"counter.txt": ""})
		merge := b.Merge("feature", "merge feature")
		b.Tag("v1")
		return append(hashes, f, m, merge, b.Git("rev-parse", "v1"))
	}
	first, second := build(), build()
	assert.Equal(t, first, second)
}

func TestBuilderHistory(t *testing.T) {
	b := gitopstest.NewBuilder(t)
	base := b.Commit("base", map[string]string{"a.txt": "a\n", "dir/b.txt": "b\n"})
	b.Branch("side")
	side := b.Commit("side", map[string]string{"dir/b.txt": ""})
	b.Switch("main")
	main := b.Commit("main", map[string]string{"a.txt": "a2\n"})
	merge := b.Merge("side", "merge side")

	parents := strings.Fields(b.Git("log", "-1", "--format=%P", merge))
	assert.Equal(t, []string{main, side}, parents, "first parent is the branch merged into")
	assert.Equal(t, base, b.Git("rev-parse", "main~2"))
	assert.Equal(t, "a.txt", b.Git("ls-tree", "--name-only", "-r", "HEAD"), "deletion recorded")

	more := b.Numbered(2)
	assert.Equal(t, "2", b.Git("log", "-1", "--format=%s", more[1]))
	assert.Equal(t, merge, b.Git("rev-parse", more[0]+"^"), "numbered commits continue the branch")
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, "git %v", args)
	return strings.TrimSpace(string(out))
}
