package gitops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// FileKind says how a file changes in a patch.
type FileKind int

const (
	// Modified is a text file edited in place; each fragment is a hunk.
	Modified FileKind = iota
	// Added is a new file (text or binary), one hunk.
	Added
	// Deleted is a removed file, one hunk.
	Deleted
	// Renamed is a moved file, possibly with edits, one hunk.
	Renamed
	// Binary is a binary file changed in place, one hunk.
	Binary
	// ModeOnly is a file whose permission bits alone changed, one hunk.
	ModeOnly
)

var fileKindNames = [...]string{"modified", "added", "deleted", "renamed", "binary", "mode"}

// String returns the kind's lowercase name.
func (k FileKind) String() string {
	if k < 0 || int(k) >= len(fileKindNames) {
		return fmt.Sprintf("FileKind(%d)", int(k))
	}
	return fileKindNames[k]
}

// Patch is a diff against Base cut into hunks that can be applied in any
// subset.
type Patch struct {
	// ID is a hash of the diff text: the same diff always has the same ID.
	ID string
	// Base is the full hash of the commit the hunks apply to.
	Base string
	// Files are the changed files in diff order.
	Files []*FileDiff

	text string
}

// FileDiff is the change to one file.
type FileDiff struct {
	// OldPath is the path in Base, empty for an added file.
	OldPath string
	// NewPath is the path after the change, empty for a deleted file.
	NewPath string
	Kind    FileKind
	// OldMode and NewMode are git modes (0o100644, 0o100755, 0o120000),
	// zero where the diff states none.
	OldMode, NewMode os.FileMode
	IsBinary         bool
	// Hunks are the file's hunks in order; exactly one unless Kind is
	// Modified.
	Hunks []*Hunk

	file *gitdiff.File
	// old and new hold Go and Python sources, for naming functions and
	// scanning dependencies; nil for other files.
	old, new []byte
}

// Path returns NewPath, or OldPath for a deleted file.
func (f *FileDiff) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// String returns the file's diff in git's format.
func (f *FileDiff) String() string {
	return f.file.String()
}

// Hunk is the unit of application: one fragment of a modified file, or a
// whole added, deleted, renamed, binary or mode-only file.
type Hunk struct {
	// ID is "<first 8 hex digits of sha256(File)>-<n>", n counting the
	// file's hunks from 1; stable for the same diff.
	ID   string
	File string
	// OldStart, OldLines, NewStart and NewLines span the hunk's fragments
	// in the old and new file, as in a "@@ -a,b +c,d @@" header.
	OldStart, OldLines, NewStart, NewLines int
	// Text is the fragment ("@@ … @@" and its lines); for a whole-file
	// hunk, the file header lines followed by its fragments.
	Text string
	// Function names the function or type that contains the hunk's first
	// changed line ("Select", "(*Ring).AllReduce", "Communicator.all_reduce"),
	// or git's hunk header section for other languages; "" if none.
	Function string

	frags []*gitdiff.TextFragment
}

// Hunks returns every hunk of the patch in file order.
func (p *Patch) Hunks() []*Hunk {
	var hs []*Hunk
	for _, f := range p.Files {
		hs = append(hs, f.Hunks...)
	}
	return hs
}

// Hunk returns the hunk with the given ID, or nil.
func (p *Patch) Hunk(id string) *Hunk {
	for _, f := range p.Files {
		for _, h := range f.Hunks {
			if h.ID == id {
				return h
			}
		}
	}
	return nil
}

// String returns the diff text the patch was parsed from.
func (p *Patch) String() string {
	return p.text
}

// diffArgs make git diff's output independent of the user's configuration:
// fixed prefixes, algorithm, context and hunk merging, no external or
// textconv drivers, binary data included for applying.
var diffArgs = []string{
	"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--binary", "--full-index",
	"-U1", "--inter-hunk-context=0", "--find-renames", "--diff-algorithm=myers",
	"--indent-heuristic", "--src-prefix=a/", "--dst-prefix=b/", "--no-relative",
	"--ignore-submodules=all", "-O" + os.DevNull,
}

// Diff returns the change from parent to child as hunks applicable to
// parent. Both are revisions Resolve accepts.
func (r *Repo) Diff(ctx context.Context, parent, child string) (*Patch, error) {
	from, err := r.Resolve(ctx, parent)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	to, err := r.Resolve(ctx, child)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	args := append(append([]string(nil), diffArgs...), from.Hash, to.Hash, "--")
	out, err := gitCmd(ctx, r.dir, nil, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s: %w", from.Short(), to.Short(), err)
	}
	return r.ParsePatch(ctx, from.Hash, out)
}

// ParsePatch reads a git diff (as Diff or WorkingDiff produce, or one saved
// from Patch.String) against base. Every file must apply to base in full:
// a diff made against another commit is rejected here rather than when a
// subset of it fails to build.
func (r *Repo) ParsePatch(ctx context.Context, base string, diff []byte) (*Patch, error) {
	c, err := r.Resolve(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("parse patch: %w", err)
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(diff))
	if err != nil {
		return nil, fmt.Errorf("parse patch on %s: %w", c.Short(), err)
	}
	sum := sha256.Sum256(diff)
	p := &Patch{ID: hex.EncodeToString(sum[:8]), Base: c.Hash, text: string(diff)}

	r.mu.Lock()
	defer r.mu.Unlock()
	commit, err := r.git.CommitObject(plumbing.NewHash(c.Hash))
	if err != nil {
		return nil, fmt.Errorf("parse patch on %s: %w", c.Short(), err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("parse patch on %s: %w", c.Short(), err)
	}
	ids := map[string]string{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fd, err := newFileDiff(tree, f)
		if err != nil {
			return nil, fmt.Errorf("parse patch on %s: %w", c.Short(), err)
		}
		for _, h := range fd.Hunks {
			if other, dup := ids[h.ID]; dup {
				return nil, fmt.Errorf("parse patch on %s: hunk id %s of %s collides with %s", c.Short(), h.ID, h.File, other)
			}
			ids[h.ID] = h.File
		}
		p.Files = append(p.Files, fd)
	}
	return p, nil
}

func newFileDiff(tree *object.Tree, f *gitdiff.File) (*FileDiff, error) {
	fd := &FileDiff{
		OldPath:  f.OldName,
		NewPath:  f.NewName,
		OldMode:  f.OldMode,
		NewMode:  f.NewMode,
		IsBinary: f.IsBinary,
		Kind:     kindOf(f),
		file:     f,
	}
	if f.IsCopy {
		return nil, fmt.Errorf("%s: copies are not supported", fd.Path())
	}
	for _, p := range []string{f.OldName, f.NewName} {
		if p != "" && !filepath.IsLocal(filepath.FromSlash(p)) {
			return nil, fmt.Errorf("%q: path leaves the repository", p)
		}
	}
	var old []byte
	if !f.IsNew {
		var err error
		if old, err = readBlob(tree, f.OldName); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := gitdiff.Apply(&buf, bytes.NewReader(old), f); err != nil {
		return nil, fmt.Errorf("%s does not apply to the base: %w", fd.Path(), err)
	}
	if isGo(fd.Path()) || isPython(fd.Path()) {
		fd.old = old
		if !f.IsDelete {
			fd.new = buf.Bytes()
		}
	}
	fd.Hunks = fd.cut()
	return fd, nil
}

func kindOf(f *gitdiff.File) FileKind {
	switch {
	case f.IsNew:
		return Added
	case f.IsDelete:
		return Deleted
	case f.IsRename:
		return Renamed
	case f.IsBinary:
		return Binary
	case len(f.TextFragments) == 0:
		return ModeOnly
	}
	return Modified
}

// cut splits the file into hunks: one per fragment for an edited text
// file, one for the whole file otherwise.
func (fd *FileDiff) cut() []*Hunk {
	sum := sha256.Sum256([]byte(fd.Path()))
	prefix := hex.EncodeToString(sum[:4])
	frags := fd.file.TextFragments
	if fd.Kind != Modified {
		h := newHunk(fd, prefix+"-1", frags)
		h.Text = fd.header() + h.Text
		return []*Hunk{h}
	}
	hs := make([]*Hunk, len(frags))
	for i := range frags {
		hs[i] = newHunk(fd, fmt.Sprintf("%s-%d", prefix, i+1), frags[i:i+1])
	}
	return hs
}

func newHunk(fd *FileDiff, id string, frags []*gitdiff.TextFragment) *Hunk {
	h := &Hunk{ID: id, File: fd.Path(), frags: frags}
	if len(frags) == 0 {
		return h
	}
	first, last := frags[0], frags[len(frags)-1]
	h.OldStart, h.NewStart = int(first.OldPosition), int(first.NewPosition)
	h.OldLines = int(last.OldPosition + last.OldLines - first.OldPosition)
	h.NewLines = int(last.NewPosition + last.NewLines - first.NewPosition)
	var text strings.Builder
	for _, f := range frags {
		text.WriteString(f.String())
	}
	h.Text = text.String()
	h.Function = functionName(fd, first)
	return h
}

// header describes a whole-file hunk in git's words, without binary data.
func (fd *FileDiff) header() string {
	var b strings.Builder
	switch fd.Kind {
	case Added:
		fmt.Fprintf(&b, "new file mode %o\n", fd.NewMode)
	case Deleted:
		fmt.Fprintf(&b, "deleted file mode %o\n", fd.OldMode)
	case Renamed:
		fmt.Fprintf(&b, "rename from %s\nrename to %s\n", fd.OldPath, fd.NewPath)
	}
	if fd.OldMode != 0 && fd.NewMode != 0 && fd.OldMode != fd.NewMode {
		fmt.Fprintf(&b, "old mode %o\nnew mode %o\n", fd.OldMode, fd.NewMode)
	}
	if fd.IsBinary {
		old, new := "a/"+fd.OldPath, "b/"+fd.NewPath
		if fd.OldPath == "" {
			old = "/dev/null"
		}
		if fd.NewPath == "" {
			new = "/dev/null"
		}
		fmt.Fprintf(&b, "Binary files %s and %s differ\n", old, new)
	}
	return b.String()
}

// readBlob returns the content of path in tree; a symbolic link's content
// is its target, as git stores it.
func readBlob(tree *object.Tree, path string) ([]byte, error) {
	f, err := tree.File(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not in the base: %w", path, err)
	}
	if f.Mode == filemode.Submodule {
		return nil, fmt.Errorf("%s is a submodule", path)
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

func isGo(path string) bool     { return strings.HasSuffix(path, ".go") }
func isPython(path string) bool { return strings.HasSuffix(path, ".py") }

// ChangesCode reports whether any line the patch adds or removes is more
// than a comment or blank (see commentLine), so the answer is a heuristic
// that errs towards "changes code". A patch that adds, deletes, renames or
// changes the mode of a file, or changes a binary one, changes code.
func (p *Patch) ChangesCode() bool {
	for _, fd := range p.Files {
		if fd.Kind != Modified {
			return true
		}
	}
	for _, h := range p.Hunks() {
		inFragment := false
		for line := range strings.SplitSeq(h.Text, "\n") {
			if strings.HasPrefix(line, "@@") {
				inFragment = true
				continue
			}
			if !inFragment || line == "" || (line[0] != '+' && line[0] != '-') {
				continue
			}
			if !commentLine(h.File, strings.TrimSpace(line[1:])) {
				return true
			}
		}
	}
	return false
}

// cFamily are the extensions of files whose lines starting with "#" are
// preprocessor directives (#pragma unroll, #define), not comments: C, C++,
// CUDA, Objective-C and assembly.
var cFamily = map[string]bool{
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".cxx": true, ".hpp": true, ".hh": true, ".hxx": true,
	".cu": true, ".cuh": true, ".m": true, ".mm": true, ".s": true,
}

// dashComment are the extensions of files in which "--" starts a comment.
var dashComment = map[string]bool{".sql": true, ".lua": true, ".hs": true}

// commentLine reports whether text, a changed line of the file at path
// with its white space trimmed, is blank or a comment that no compiler or
// interpreter acts on: "//" and "/*" (but not Go's directives, //go:noinline
// or //go:build, nor cgo's #cgo lines), a block comment's "*" continuation
// (not a dereference, *p = x), "#" outside the C family (not a shebang),
// and "--" in SQL, Lua and Haskell.
func commentLine(path, text string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case text == "":
		return true
	case strings.HasPrefix(text, "//"):
		rest := text[2:]
		for _, directive := range []string{"go:", "line ", "export ", " +build", "#cgo", " #cgo"} {
			if strings.HasPrefix(rest, directive) {
				return false
			}
		}
		return true
	case strings.HasPrefix(text, "/*"):
		return true
	case strings.HasPrefix(text, "*"):
		return text == "*" || strings.HasPrefix(text, "* ") || strings.HasPrefix(text, "*/")
	case strings.HasPrefix(text, "#!"):
		return false // a shebang picks the interpreter
	case strings.HasPrefix(text, "#"):
		return !cFamily[ext]
	case strings.HasPrefix(text, "--"):
		return dashComment[ext]
	}
	return false
}
