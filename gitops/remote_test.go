package gitops_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
)

// A clone that never saw origin gets what it lacks as bundles: first the
// whole history up to a commit, then only what follows what it has.
func TestWriteBundle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 6)
	r := open(t, src)
	remote := t.TempDir()
	gitIn(t, remote, "", "init", "--quiet", "--bare")

	receive := func(commit string, haves ...string) int {
		var b bytes.Buffer
		require.NoError(t, r.WriteBundle(ctx, &b, commit, haves))
		file := filepath.Join(t.TempDir(), "b")
		require.NoError(t, os.WriteFile(file, b.Bytes(), 0o644))
		gitIn(t, remote, "", "fetch", "--quiet", file, "+"+gitops.BundleRef+":refs/have/"+commit)
		assert.Equal(t, commit+"\n", gitIn(t, remote, "", "rev-parse", "refs/have/"+commit))
		return b.Len()
	}
	full := receive(commits[2])
	// A have the clone does not know (another history) is ignored.
	incremental := receive(commits[5], commits[2], strings.Repeat("ab", 20))
	var whole bytes.Buffer
	require.NoError(t, r.WriteBundle(ctx, &whole, commits[5], nil))
	assert.Less(t, incremental, whole.Len(), "an incremental bundle leaves out what the receiver has")
	assert.Positive(t, full)
	gitIn(t, remote, "", "fsck", "--no-dangling")
	_, err := os.Stat(filepath.Join(src, ".git", gitops.BundleRef))
	assert.True(t, os.IsNotExist(err), "the user's repository is not written")
}

// Apply's diff, given to git apply in a clean checkout of the base made
// elsewhere, yields the tree CheckoutPatch makes, for every kind of
// change; its Files say what each path written then holds.
func TestApplyDiffMatchesCheckoutPatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	base := b.Commit("base", map[string]string{
		"gone/deleted.txt": "bye\n",
		"old/name.txt":     numberedLines(20, nil),
		"blob.bin":         "\x00\x01\x02 old binary",
		"run.sh":           "#!/bin/sh\necho run\n",
		"edit.txt":         numberedLines(10, nil),
	})
	b.Write(map[string]string{
		"added.txt":        "hello\nworld\n",
		"new/name.txt":     numberedLines(20, map[int]string{5: "line 5 edited while moving\n"}),
		"old/name.txt":     "",
		"gone/deleted.txt": "",
		"blob.bin":         "\x00\x01\x03 new binary!",
		"edit.txt":         numberedLines(10, map[int]string{2: "two\n", 8: "eight\n"}),
	})
	b.Chmod("run.sh", 0o755)
	require.NoError(t, os.Symlink("run.sh", filepath.Join(b.Dir, "link")))
	child := b.Commit("every kind of change", nil)
	r := open(t, b.Dir)
	p, err := r.Diff(ctx, base, child)
	require.NoError(t, err)
	hunksOf := map[string][]string{}
	for _, f := range p.Files {
		hunksOf[f.Path()] = ids(f.Hunks)
	}
	elsewhere := t.TempDir()
	gitIn(t, elsewhere, "", "clone", "--quiet", b.Dir, ".")

	for _, tt := range []struct {
		name  string
		hunks []string
	}{
		{name: "the second hunk of a file alone", hunks: hunksOf["edit.txt"][1:]},
		{name: "rename with edits", hunks: hunksOf["new/name.txt"]},
		{name: "deletion, binary, mode and link", hunks: append(append(append(hunksOf["gone/deleted.txt"], hunksOf["blob.bin"]...), hunksOf["run.sh"]...), hunksOf["link"]...)},
		{name: "everything", hunks: ids(p.Hunks())},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := r.CheckoutPatch(ctx, 0, p, tt.hunks)
			require.NoError(t, err)
			gitIn(t, dir, "", "add", "-A")
			want := gitIn(t, dir, "", "write-tree")

			a, err := r.Apply(ctx, p, tt.hunks)
			require.NoError(t, err)
			gitIn(t, elsewhere, "", "checkout", "--quiet", "--force", "--detach", base)
			gitIn(t, elsewhere, "", "clean", "-ffdxq")
			gitIn(t, elsewhere, string(a.Diff), "apply", "--binary", "-")
			gitIn(t, elsewhere, "", "add", "-A")
			assert.Equal(t, want, gitIn(t, elsewhere, "", "write-tree"))
			for _, f := range a.Files {
				if f.Blob == "" {
					assert.NoFileExists(t, filepath.Join(elsewhere, f.Path))
					continue
				}
				var got string
				if f.Symlink {
					target, err := os.Readlink(filepath.Join(elsewhere, f.Path))
					require.NoError(t, err)
					got = strings.TrimSpace(gitIn(t, elsewhere, target, "hash-object", "--stdin"))
				} else {
					got = strings.TrimSpace(gitIn(t, elsewhere, "", "hash-object", "--no-filters", f.Path))
				}
				assert.Equal(t, f.Blob, got, f.Path)
			}
		})
	}
}

// Hunks that do not apply are the target's fault, found before anything
// is sent anywhere.
func TestApplyDiffError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	c1 := b.Commit("1", map[string]string{"f.txt": numberedLines(20, nil)})
	c2 := b.Commit("2", map[string]string{"f.txt": numberedLines(20, map[int]string{15: "fifteen\n"})})
	c3 := b.Commit("3", map[string]string{"f.txt": numberedLines(20, map[int]string{15: "other\n"})})
	r := open(t, b.Dir)
	p, err := r.Diff(ctx, c1, c2)
	require.NoError(t, err)
	p.Base = c3 // the hunk's context is not in c3
	_, err = r.Apply(ctx, p, ids(p.Hunks()))
	var ae *gitops.ApplyError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "f.txt", ae.File)
}
