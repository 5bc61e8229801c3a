package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfbot/perfbot/record"
)

// ApplyError reports a hunk that does not apply to the files it was cut
// from. The configuration it belongs to cannot be built: a search over
// hunk subsets treats it as unresolved, never as good.
type ApplyError struct {
	// File is the path of the file that does not apply.
	File string
	// Hunk is the ID of the hunk that does not apply.
	Hunk string
	Err  error
}

// Error names the hunk and file.
func (e *ApplyError) Error() string {
	return fmt.Sprintf("apply hunk %s to %s: %v", e.Hunk, e.File, e.Err)
}

// Unwrap returns the cause, go-gitdiff's *gitdiff.ApplyError for a
// conflict.
func (e *ApplyError) Unwrap() error { return e.Err }

// CheckoutPatch checks p.Base out into slot (as Checkout does) and applies
// exactly the hunks named by hunkIDs, in the patch's order whatever the
// order of hunkIDs, as git apply would: fragments of a modified file go
// through go-gitdiff's strict applier, and whole-file hunks create, delete,
// move, rewrite or chmod their file. A modified file's mode change comes
// with any of its hunks. Hunks apply to the base's blobs, so the user's
// line-ending conversions cannot get in the way. A hunk that does not apply
// yields an *ApplyError before the slot is touched; an unknown hunk ID is a
// plain error. Like Checkout, it takes the slot's lock unless this Repo
// holds it, and stamps the slot with what it applied (see VerifySlot).
func (r *Repo) CheckoutPatch(ctx context.Context, slot int, p *Patch, hunkIDs []string) (string, error) {
	if p == nil {
		return "", errors.New("checkout patch: nil patch")
	}
	chosen, err := p.choose(hunkIDs)
	if err != nil {
		return "", fmt.Errorf("checkout patch %s: %w", p.ID, err)
	}
	edits, err := r.planEdits(p, chosen)
	if err != nil {
		return "", err
	}
	mu, err := r.slotLock(slot)
	if err != nil {
		return "", err
	}
	mu.Lock()
	defer mu.Unlock()
	release, err := r.holdSlot(ctx, slot)
	if err != nil {
		return "", err
	}
	defer release()
	dir, err := r.checkout(ctx, slot, p.Base)
	if err != nil {
		return "", err
	}
	for _, e := range edits {
		if err := e.do(dir); err != nil {
			return "", fmt.Errorf("checkout patch %s in slot %d: %w", p.ID, slot, err)
		}
	}
	s := stamp{Commit: p.Base, Patch: p.ID, Hunks: sortedCopy(hunkIDs)}
	if len(s.Hunks) == 0 {
		s.Patch = ""
	}
	if err := r.writeStamp(slot, s); err != nil {
		return "", fmt.Errorf("checkout patch %s in slot %d: %w", p.ID, slot, err)
	}
	return dir, nil
}

func (p *Patch) choose(ids []string) (map[string]bool, error) {
	chosen := map[string]bool{}
	for _, id := range ids {
		if p.Hunk(id) == nil {
			return nil, fmt.Errorf("no hunk %q in the patch", id)
		}
		chosen[id] = true
	}
	return chosen, nil
}

// edit is one file's change in a slot: remove a path, write a path, or
// both for a rename.
type edit struct {
	remove  string
	write   string
	content []byte
	mode    os.FileMode // git mode; 0 keeps the mode of the file replaced
}

// planEdits computes every chosen file's new content from the base's
// blobs.
func (r *Repo) planEdits(p *Patch, chosen map[string]bool) ([]edit, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	commit, err := r.git.CommitObject(plumbing.NewHash(p.Base))
	if err != nil {
		return nil, fmt.Errorf("checkout patch %s: base %s: %w", p.ID, record.ShortHash(p.Base), err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("checkout patch %s: base %s: %w", p.ID, record.ShortHash(p.Base), err)
	}
	var edits []edit
	for _, fd := range p.Files {
		var hunks []*Hunk
		for _, h := range fd.Hunks {
			if chosen[h.ID] {
				hunks = append(hunks, h)
			}
		}
		if len(hunks) == 0 {
			continue
		}
		e, err := fd.plan(tree, hunks)
		if err != nil {
			return nil, err
		}
		edits = append(edits, e)
	}
	return edits, nil
}

func (fd *FileDiff) plan(tree *object.Tree, hunks []*Hunk) (edit, error) {
	f := *fd.file
	f.TextFragments = nil
	for _, h := range hunks {
		f.TextFragments = append(f.TextFragments, h.frags...)
	}
	var src []byte
	if !f.IsNew {
		var err error
		if src, err = readBlob(tree, fd.OldPath); err != nil {
			return edit{}, &ApplyError{File: fd.OldPath, Hunk: hunks[0].ID, Err: err}
		}
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, bytes.NewReader(src), &f); err != nil {
		return edit{}, &ApplyError{File: fd.Path(), Hunk: failedHunk(err, hunks), Err: err}
	}
	e := edit{mode: fd.NewMode}
	if f.IsRename || f.IsDelete {
		e.remove = fd.OldPath
	}
	if !f.IsDelete {
		e.write, e.content = fd.NewPath, out.Bytes()
	}
	if e.mode == 0 && f.IsRename {
		e.mode = fd.OldMode
	}
	return e, nil
}

// failedHunk maps go-gitdiff's fragment number (counted over the fragments
// handed to it, which keep the patch's order) back to a hunk ID.
func failedHunk(err error, hunks []*Hunk) string {
	var ae *gitdiff.ApplyError
	if errors.As(err, &ae) && ae.Fragment > 0 {
		n := ae.Fragment
		for _, h := range hunks {
			if n <= len(h.frags) {
				return h.ID
			}
			n -= len(h.frags)
		}
	}
	return hunks[0].ID
}

const gitSymlink = 0o120000

func (e edit) do(dir string) error {
	if e.remove != "" {
		full := filepath.Join(dir, filepath.FromSlash(e.remove))
		if err := os.Remove(full); err != nil {
			return err
		}
		removeEmptyParents(dir, filepath.Dir(full))
	}
	if e.write == "" {
		return nil
	}
	full := filepath.Join(dir, filepath.FromSlash(e.write))
	perm := os.FileMode(0o644)
	if fi, err := os.Lstat(full); err == nil {
		perm = fi.Mode().Perm()
		if err := os.Remove(full); err != nil {
			return err
		}
	}
	if e.mode != 0 {
		perm = 0o644
		if e.mode&0o111 != 0 {
			perm = 0o755
		}
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	if e.mode == gitSymlink {
		return os.Symlink(string(e.content), full)
	}
	if err := os.WriteFile(full, e.content, perm); err != nil {
		return err
	}
	// WriteFile's permission is filtered by the umask; git's is not.
	return os.Chmod(full, perm)
}

// removeEmptyParents deletes the directories a deletion left empty, up to
// the worktree's root, as git apply does.
func removeEmptyParents(root, dir string) {
	for dir != root && len(dir) > len(root) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}
