package gitops

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// This file serves hosts that keep a clone of their own and never reach
// origin (an ssh host): what they lack travels as a git bundle, and a
// target's hunks as a diff that git apply turns into exactly the tree
// CheckoutPatch makes.

// WriteBundle writes to w a git bundle of commit and its history, less
// what is reachable from haves: the commits the receiving clone already
// holds. Haves this clone does not know are ignored. The bundle's one ref
// is BundleRef. The clone itself is not written: the bundle is made in a
// scratch repository that borrows the clone's objects.
func (r *Repo) WriteBundle(ctx context.Context, w io.Writer, commit string, haves []string) error {
	c, err := r.Resolve(ctx, commit)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	tmp, err := r.scratchRepo(ctx)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", c.Short(), err)
	}
	defer os.RemoveAll(tmp)
	if _, err := gitCmd(ctx, tmp, nil, nil, "update-ref", BundleRef, c.Hash); err != nil {
		return fmt.Errorf("bundle %s: %w", c.Short(), err)
	}
	var revs strings.Builder
	revs.WriteString(BundleRef + "\n")
	for _, h := range haves {
		if len(h) == 40 && r.hasCommit(h) && h != c.Hash {
			revs.WriteString("^" + h + "\n")
		}
	}
	cmd := exec.CommandContext(ctx, "git", "bundle", "create", "--quiet", "-", "--stdin")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	cmd.Stdin = strings.NewReader(revs.String())
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("bundle %s: git bundle create: %w: %s", c.Short(), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// BundleRef is the ref a bundle of WriteBundle holds.
const BundleRef = "refs/perfbot/bundle"

// scratchRepo makes a bare repository under the workdir whose objects are
// the clone's (an alternate), for refs that must not touch the clone.
func (r *Repo) scratchRepo(ctx context.Context) (string, error) {
	parent := filepath.Join(r.workdir, "tmp")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, "bundle-")
	if err != nil {
		return "", err
	}
	if _, err := gitCmd(ctx, tmp, nil, nil, "init", "--quiet", "--bare"); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	objects, err := filepath.Abs(filepath.Join(r.dir, "objects"))
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, "objects", "info", "alternates"), []byte(objects+"\n"), 0o644)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

// Applied is what a subset of a patch's hunks does to its base, in a form
// for a clone elsewhere: Diff, given to git apply --binary in a clean
// checkout of the base, makes the very tree CheckoutPatch makes; Files
// says what each path the hunks write or remove then holds, for checking
// that tree later.
type Applied struct {
	Diff  []byte
	Files []AppliedFile
}

// AppliedFile is one path the hunks write or remove.
type AppliedFile struct {
	Path string
	// Blob is the git blob hash of the file's content (of a symlink's
	// target); empty when the hunks remove the path.
	Blob    string
	Symlink bool
}

// Apply computes what exactly hunkIDs of p do to p.Base (as CheckoutPatch
// applies them, strictly) and returns it as an Applied. A hunk that does
// not apply is an *ApplyError; no slot is touched. The new blobs are
// written to the clone's object store, where nothing refers to them.
func (r *Repo) Apply(ctx context.Context, p *Patch, hunkIDs []string) (*Applied, error) {
	if p == nil {
		return nil, fmt.Errorf("apply: nil patch")
	}
	chosen, err := p.choose(hunkIDs)
	if err != nil {
		return nil, fmt.Errorf("apply patch %s: %w", p.ID, err)
	}
	edits, err := r.planEdits(p, chosen)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Applied, error) {
		return nil, fmt.Errorf("apply patch %s to %s: %w", p.ID, record.ShortHash(p.Base), err)
	}
	parent := filepath.Join(r.workdir, "tmp")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fail(err)
	}
	tmp, err := os.MkdirTemp(parent, "index-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := gitCmd(ctx, r.dir, nil, env, "read-tree", p.Base); err != nil {
		return fail(err)
	}
	// One --index-info line per path: mode 0 removes it.
	var files []AppliedFile
	var info bytes.Buffer
	for _, e := range edits {
		if e.remove != "" && e.remove != e.write {
			fmt.Fprintf(&info, "0 %s\t%s\n", strings.Repeat("0", 40), e.remove)
			files = append(files, AppliedFile{Path: e.remove})
		}
		if e.write == "" {
			continue
		}
		mode := e.mode
		if mode == 0 {
			if mode, err = r.indexMode(ctx, env, e.write); err != nil {
				return fail(err)
			}
		}
		blob, err := gitFirstLine(ctx, r.dir, e.content, nil, "hash-object", "-w", "--no-filters", "--stdin")
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(&info, "%o %s\t%s\n", mode, blob, e.write)
		files = append(files, AppliedFile{Path: e.write, Blob: blob, Symlink: mode == gitSymlink})
	}
	if info.Len() > 0 {
		if _, err := gitCmd(ctx, r.dir, info.Bytes(), env, "update-index", "--index-info"); err != nil {
			return fail(err)
		}
	}
	tree, err := gitFirstLine(ctx, r.dir, nil, env, "write-tree")
	if err != nil {
		return fail(err)
	}
	diff, err := gitCmd(ctx, r.dir, nil, nil, "diff-tree", "-p", "--binary", "--full-index", "--no-renames", "--no-color", p.Base, tree)
	if err != nil {
		return fail(err)
	}
	return &Applied{Diff: diff, Files: files}, nil
}

// indexMode is the mode of path in the index env names, 0o100644 when it
// is not there (a new file of a patch that states no mode).
func (r *Repo) indexMode(ctx context.Context, env []string, path string) (os.FileMode, error) {
	out, err := gitCmd(ctx, r.dir, nil, env, "ls-files", "--stage", "--", path)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return 0o100644, nil
	}
	m, err := strconv.ParseUint(f[0], 8, 32)
	if err != nil {
		return 0, fmt.Errorf("mode of %s: %w", path, err)
	}
	return os.FileMode(m), nil
}

// gitFirstLine runs git as gitCmd does and returns the first line of its
// output.
func gitFirstLine(ctx context.Context, dir string, stdin []byte, env []string, args ...string) (string, error) {
	out, err := gitCmd(ctx, dir, stdin, env, args...)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(out, []byte("\n"))
	return strings.TrimSpace(string(line)), nil
}
