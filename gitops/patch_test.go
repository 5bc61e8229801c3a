package gitops_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
)

// numberedLines returns "line 1\n".."line n\n" with the given replacements
// (line number → text, "" drops the line).
func numberedLines(n int, edits map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		text, ok := edits[i]
		if !ok {
			text = fmt.Sprintf("line %d\n", i)
		}
		b.WriteString(text)
	}
	return b.String()
}

func TestApplyEverySubsetLikeGitApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	base := b.Commit("base", map[string]string{"f.txt": numberedLines(30, nil)})
	child := b.Commit("four hunks", map[string]string{"f.txt": numberedLines(30, map[int]string{
		2:  "line 2 changed\n",                 // modification
		9:  "line 9\ninserted a\ninserted b\n", // pure insertion
		16: "", 17: "",                         // pure deletion
		30: "line 30 without newline", // end of file, newline removed
	})})
	r := open(t, b.Dir)

	p, err := r.Diff(ctx, base, child)
	require.NoError(t, err)
	assert.Equal(t, base, p.Base)
	require.Len(t, p.Files, 1)
	assert.Equal(t, gitops.Modified, p.Files[0].Kind)
	hunks := p.Hunks()
	require.Len(t, hunks, 4)
	assert.Equal(t, []int{1, 9, 15, 29}, []int{hunks[0].OldStart, hunks[1].OldStart, hunks[2].OldStart, hunks[3].OldStart})

	for mask := range 1 << len(hunks) {
		var ids []string
		var texts []string
		for i, h := range hunks {
			if mask&(1<<i) != 0 {
				ids = append(ids, h.ID)
				texts = append(texts, h.Text)
			}
		}
		t.Run(fmt.Sprintf("subset %04b", mask), func(t *testing.T) {
			dir, err := r.CheckoutPatch(ctx, 0, p, reversed(ids))
			require.NoError(t, err)

			// The reference: git apply of the same fragments, in a plain
			// directory holding the base file.
			ref := t.TempDir()
			writeFile(t, ref, "f.txt", numberedLines(30, nil))
			if len(texts) > 0 {
				diff := "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n" + strings.Join(texts, "")
				gitIn(t, ref, diff, "apply")
			}
			assert.Equal(t, readFile(t, ref, "f.txt"), readFile(t, dir, "f.txt"))
		})
	}
	dir, err := r.CheckoutPatch(ctx, 0, p, ids(hunks))
	require.NoError(t, err)
	assert.Equal(t, gitIn(t, b.Dir, "", "show", child+":f.txt"), readFile(t, dir, "f.txt"))
}

func TestApplyWholeFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	moved := numberedLines(20, nil)
	base := b.Commit("base", map[string]string{
		"gone/deleted.txt": "bye\n",
		"old/name.txt":     moved,
		"blob.bin":         "\x00\x01\x02 old binary",
		"run.sh":           "#!/bin/sh\necho run\n",
		"edit.txt":         numberedLines(10, nil),
	})
	b.Write(map[string]string{
		"added.txt":        "hello\nworld\n",
		"img.bin":          "\x89PNG\x00\x00\x00 new binary",
		"new/name.txt":     numberedLines(20, map[int]string{5: "line 5 edited while moving\n"}),
		"old/name.txt":     "",
		"gone/deleted.txt": "",
		"blob.bin":         "\x00\x01\x03 new binary!",
		"edit.txt":         numberedLines(10, map[int]string{2: "two\n", 8: "eight\n"}),
	})
	b.Chmod("run.sh", 0o755)
	b.Chmod("edit.txt", 0o755)
	require.NoError(t, os.Symlink("run.sh", filepath.Join(b.Dir, "link")))
	child := b.Commit("every kind of change", nil)
	r := open(t, b.Dir)

	p, err := r.Diff(ctx, base, child)
	require.NoError(t, err)
	kinds := map[string]gitops.FileKind{}
	hunksOf := map[string][]string{}
	for _, f := range p.Files {
		kinds[f.Path()] = f.Kind
		hunksOf[f.Path()] = ids(f.Hunks)
	}
	assert.Equal(t, map[string]gitops.FileKind{
		"added.txt":        gitops.Added,
		"img.bin":          gitops.Added,
		"gone/deleted.txt": gitops.Deleted,
		"new/name.txt":     gitops.Renamed,
		"blob.bin":         gitops.Binary,
		"run.sh":           gitops.ModeOnly,
		"edit.txt":         gitops.Modified,
		"link":             gitops.Added,
	}, kinds)
	for path, hs := range hunksOf {
		if path == "edit.txt" {
			assert.Len(t, hs, 2, path)
		} else {
			assert.Len(t, hs, 1, "%s is one unit", path)
		}
	}
	renamed := p.Hunk(hunksOf["new/name.txt"][0])
	assert.True(t, strings.HasPrefix(renamed.Text, "rename from old/name.txt\nrename to new/name.txt\n@@ -4,3 +4,3 @@"), renamed.Text)
	assert.Equal(t, "new file mode 100644\nBinary files /dev/null and b/img.bin differ\n", p.Hunk(hunksOf["img.bin"][0]).Text)
	assert.Equal(t, "old mode 100644\nnew mode 100755\n", p.Hunk(hunksOf["run.sh"][0]).Text)

	tests := []struct {
		name  string
		files []string // whose hunks are applied
		paths []string // paths that then differ from base
	}{
		{name: "nothing", files: nil, paths: nil},
		{name: "new text file", files: []string{"added.txt"}, paths: []string{"added.txt"}},
		{name: "new binary file", files: []string{"img.bin"}, paths: []string{"img.bin"}},
		{name: "deleted file", files: []string{"gone/deleted.txt"}, paths: []string{"gone/deleted.txt"}},
		{name: "rename with edits", files: []string{"new/name.txt"}, paths: []string{"new/name.txt", "old/name.txt"}},
		{name: "binary file", files: []string{"blob.bin"}, paths: []string{"blob.bin"}},
		{name: "mode only", files: []string{"run.sh"}, paths: []string{"run.sh"}},
		{name: "new symbolic link", files: []string{"link"}, paths: []string{"link"}},
		{name: "edits with a mode change", files: []string{"edit.txt"}, paths: []string{"edit.txt"}},
		{name: "everything", files: []string{"added.txt", "img.bin", "gone/deleted.txt", "new/name.txt", "blob.bin", "run.sh", "edit.txt", "link"},
			paths: []string{"added.txt", "blob.bin", "edit.txt", "gone/deleted.txt", "img.bin", "link", "new/name.txt", "old/name.txt", "run.sh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chosen []string
			for _, f := range tt.files {
				chosen = append(chosen, hunksOf[f]...)
			}
			dir, err := r.CheckoutPatch(ctx, 0, p, chosen)
			require.NoError(t, err)
			gitIn(t, dir, "", "add", "-A")
			changed := strings.Fields(gitIn(t, dir, "", "diff", "--cached", "--no-renames", "--name-only", base))
			sort.Strings(changed)
			assert.Equal(t, tt.paths, nilIfEmpty(changed), "paths changed from base")
			if len(tt.paths) > 0 {
				args := append([]string{"diff", "--cached", "--no-renames", "--stat", child, "--"}, tt.paths...)
				assert.Empty(t, gitIn(t, dir, "", args...), "applied paths equal the child's, modes included")
			}
		})
	}
	dir, err := r.CheckoutPatch(ctx, 0, p, hunksOf["gone/deleted.txt"])
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(dir, "gone"), "emptied directory removed")
}

func TestApplyError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	c1 := b.Commit("1", map[string]string{"f.txt": numberedLines(20, nil)})
	c2 := b.Commit("2", map[string]string{"f.txt": numberedLines(20, map[int]string{3: "three\n", 15: "fifteen\n"})})
	c3 := b.Commit("3", map[string]string{"f.txt": numberedLines(20, map[int]string{15: "other\n"})})
	r := open(t, b.Dir)

	p, err := r.Diff(ctx, c1, c2)
	require.NoError(t, err)
	hunks := p.Hunks()
	require.Len(t, hunks, 2)

	moved := *p
	moved.Base = c3
	slot, err := r.CheckoutPatch(ctx, 0, &moved, []string{hunks[0].ID})
	require.NoError(t, err, "the first hunk still applies on c3")

	dir, err := r.CheckoutPatch(ctx, 0, &moved, ids(hunks))
	var ae *gitops.ApplyError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "f.txt", ae.File)
	assert.Equal(t, hunks[1].ID, ae.Hunk)
	assert.Contains(t, err.Error(), "apply hunk "+hunks[1].ID+" to f.txt")
	assert.Empty(t, dir)
	assert.Contains(t, readFile(t, slot, "f.txt"), "three\n", "a failed apply leaves the slot untouched")

	_, err = r.CheckoutPatch(ctx, 0, p, []string{"deadbeef-9"})
	assert.ErrorContains(t, err, `no hunk "deadbeef-9"`)
	assert.False(t, errors.As(err, &ae), "an unknown hunk is not an apply failure")

	_, err = r.ParsePatch(ctx, c3, []byte(p.String()))
	assert.ErrorContains(t, err, "f.txt does not apply to the base")
}

func TestPatchIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	c1 := b.Commit("1", map[string]string{"a.txt": numberedLines(10, nil), "b.txt": "b\n"})
	c2 := b.Commit("2", map[string]string{"a.txt": numberedLines(10, map[int]string{1: "one\n", 9: "nine\n"}), "b.txt": ""})

	first, err := open(t, b.Dir).Diff(ctx, c1, c2)
	require.NoError(t, err)
	r := open(t, b.Dir)
	second, err := r.Diff(ctx, c1[:8], "main")
	require.NoError(t, err)
	assert.Equal(t, first.ID, second.ID)
	assert.Equal(t, ids(first.Hunks()), ids(second.Hunks()))
	for _, h := range first.Hunks() {
		assert.Regexp(t, `^[0-9a-f]{8}-[0-9]+$`, h.ID)
	}
	a, bb := first.Hunks()[0].ID, first.Hunks()[2].ID
	assert.Equal(t, a[:8], first.Hunks()[1].ID[:8], "hunks of one file share the prefix")
	assert.NotEqual(t, a[:8], bb[:8])

	reparsed, err := r.ParsePatch(ctx, c1, []byte(first.String()))
	require.NoError(t, err)
	assert.Equal(t, first.ID, reparsed.ID)
	assert.Equal(t, ids(first.Hunks()), ids(reparsed.Hunks()))

	empty, err := r.Diff(ctx, c2, c2)
	require.NoError(t, err)
	assert.Empty(t, empty.Hunks())
}

func ids(hs []*gitops.Hunk) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// gitIn runs git in dir with stdin and returns its output, failing the
// test on error.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(t, cmd.Run(), "git %v: %s", args, stderr.String())
	return out.String()
}

func TestChangesCode(t *testing.T) {
	tests := []struct {
		name       string
		file       string // m.go when empty
		old, new   string
		wantChange bool
	}{
		{name: "a comment added", old: "package m\n\nfunc F() {}\n", new: "package m\n\n// F does nothing.\nfunc F() {}\n", wantChange: false},
		{name: "blank lines and a block comment", old: "package m\n\nfunc F() {}\n", new: "package m\n\n/* F\n * does nothing.\n */\n\nfunc F() {}\n", wantChange: false},
		{name: "a statement", old: "package m\n\nfunc F() {}\n", new: "package m\n\nfunc F() { println() }\n", wantChange: true},
		{name: "a comment and a statement", old: "package m\n\nfunc F() {}\n", new: "package m\n\n// F prints.\nfunc F() { println() }\n", wantChange: true},
		{name: "a compiler directive", old: "package m\n\nfunc F() {}\n", new: "package m\n\n//go:noinline\nfunc F() {}\n", wantChange: true},
		{name: "a Python comment", file: "m.py", old: "def f():\n    pass\n", new: "def f():\n    # nothing to do\n    pass\n", wantChange: false},
		{name: "a CUDA pragma", file: "k.cu", old: "__global__ void k() {\n  #pragma unroll 4\n  for (;;) {}\n}\n", new: "__global__ void k() {\n  #pragma unroll 1\n  for (;;) {}\n}\n", wantChange: true},
		{name: "a C dereference", file: "m.c", old: "void f(int *p) {\n  *p = 1;\n}\n", new: "void f(int *p) {\n  *p = 2;\n}\n", wantChange: true},
		{name: "a C decrement", file: "m.c", old: "void f(int i) {\n  --i;\n}\n", new: "void f(int i) {\n  --i;\n  --i;\n}\n", wantChange: true},
		{name: "an SQL comment", file: "q.sql", old: "SELECT 1;\n", new: "-- one\nSELECT 1;\n", wantChange: false},
		{name: "a shebang", file: "run.sh", old: "#!/bin/sh\necho\n", new: "#!/bin/bash\necho\n", wantChange: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := gitopstest.NewBuilder(t)
			file := tt.file
			if file == "" {
				file = "m.go"
			}
			parent := b.Commit("old", map[string]string{file: tt.old})
			child := b.Commit("new", map[string]string{file: tt.new})
			repo, err := gitops.Open(context.Background(), b.Dir, t.TempDir())
			require.NoError(t, err)
			p, err := repo.Diff(context.Background(), parent, child)
			require.NoError(t, err)
			require.Equal(t, tt.wantChange, p.ChangesCode())
		})
	}
}
