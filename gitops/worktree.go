package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// WorkingDiff returns the uncommitted changes of the working copy at dir
// (the user's checkout, not perfbot's clone) against its HEAD, and that
// HEAD. Tracked modifications, staged or not, count, and so do untracked
// files that are not ignored, as new files. The user's index and refs are
// left alone. HEAD must be in the clone; it is fetched from origin, or
// straight from dir for a commit that was never pushed.
//
// The paths in exclude (absolute, or relative to dir: perfbot's own
// workdir, store and issues when they lie inside the working copy) are
// left out of the diff, tracked or not.
func (r *Repo) WorkingDiff(ctx context.Context, dir string, exclude ...string) (*Patch, record.Commit, error) {
	top, err := gitLine(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, record.Commit{}, fmt.Errorf("working diff of %s: %w", dir, err)
	}
	head, err := gitLine(ctx, top, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, record.Commit{}, fmt.Errorf("working diff of %s: no HEAD commit: %w", top, err)
	}
	diff, err := r.workingDiffText(ctx, top, excludeSpecs(dir, top, exclude))
	if err != nil {
		return nil, record.Commit{}, fmt.Errorf("working diff of %s: %w", top, err)
	}
	if err := r.ensureCommit(ctx, head, top); err != nil {
		return nil, record.Commit{}, fmt.Errorf("working diff of %s: %w", top, err)
	}
	p, err := r.ParsePatch(ctx, head, diff)
	if err != nil {
		return nil, record.Commit{}, fmt.Errorf("working diff of %s: %w", top, err)
	}
	c, err := r.Commit(ctx, head)
	if err != nil {
		return nil, record.Commit{}, fmt.Errorf("working diff of %s: %w", top, err)
	}
	return p, c, nil
}

// workingDiffText diffs HEAD against the working tree through a copy of
// the index in which the untracked files are marked intent-to-add, so git
// shows them as new files without writing their content anywhere and
// without touching the real index. The copy lives under the workdir, as
// every scratch file of perfbot does.
func (r *Repo) workingDiffText(ctx context.Context, top string, excluded []string) ([]byte, error) {
	tmp := filepath.Join(r.workdir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp(tmp, "index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	index := filepath.Join(scratch, "index")
	env := []string{"GIT_INDEX_FILE=" + index}

	real, err := gitLine(ctx, top, "rev-parse", "--git-path", "index")
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(real) {
		real = filepath.Join(top, real)
	}
	data, err := os.ReadFile(real)
	switch {
	case err == nil:
		err = copyIndex(real, index, data)
	case errors.Is(err, os.ErrNotExist):
		_, err = gitCmd(ctx, top, nil, env, "read-tree", "HEAD")
	}
	if err != nil {
		return nil, fmt.Errorf("copy index: %w", err)
	}

	untracked, err := gitCmd(ctx, top, nil, nil, append([]string{"ls-files", "-z", "--others", "--exclude-standard", "--", "."}, excluded...)...)
	if err != nil {
		return nil, err
	}
	if len(untracked) > 0 {
		_, err := gitCmd(ctx, top, untracked, env,
			"add", "--intent-to-add", "--pathspec-from-file=-", "--pathspec-file-nul")
		if err != nil {
			return nil, err
		}
	}
	args := append(append([]string(nil), diffArgs...), "HEAD", "--", ".")
	return gitCmd(ctx, top, nil, env, append(args, excluded...)...)
}

// copyIndex writes the copy of the user's index with the original's
// modification time: git tells a file changed within the same clock tick
// as the index was written ("racily clean") by comparing the file's time
// with the index's, and a copy stamped now would hide such a change (same
// size, same time) from the diff.
func copyIndex(real, index string, data []byte) error {
	info, err := os.Stat(real)
	if err != nil {
		return err
	}
	if err := os.WriteFile(index, data, 0o600); err != nil {
		return err
	}
	return os.Chtimes(index, info.ModTime(), info.ModTime())
}

// excludeSpecs turns the paths to leave out into git pathspecs relative to
// top, the working copy's root; a path outside it needs none.
func excludeSpecs(dir, top string, paths []string) []string {
	var specs []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		rel, err := filepath.Rel(top, filepath.Clean(p))
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		specs = append(specs, ":(exclude,top,literal)"+filepath.ToSlash(rel))
	}
	return specs
}

// ensureCommit makes sure the clone holds commit hash, fetching origin and
// then, for a commit origin does not have, the HEAD of the working copy at
// dir into refs/perfbot/worktree/<hash> (a ref keeps it from being
// collected).
func (r *Repo) ensureCommit(ctx context.Context, hash, dir string) error {
	if r.hasCommit(hash) {
		return nil
	}
	lock, err := r.lockWorkdir(ctx)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := r.fetch(ctx); err != nil {
		return err
	}
	if r.hasCommit(hash) {
		return nil
	}
	// go-git cannot fetch a detached HEAD (the usual state of a commit
	// that was never pushed), so the git command line does, and the
	// repository is reopened to see the new pack.
	ref := "+HEAD:refs/perfbot/worktree/" + hash
	if _, err := gitCmd(ctx, r.dir, nil, nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", dir, ref); err != nil {
		return fmt.Errorf("fetch HEAD of %s: %w", dir, err)
	}
	if err := r.reopen(); err != nil {
		return err
	}
	if !r.hasCommit(hash) {
		return fmt.Errorf("commit %s is neither in %s nor at the HEAD of %s", record.ShortHash(hash), r.origin, dir)
	}
	return nil
}

// gitLine runs git and returns the first line of its output.
func gitLine(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := gitCmd(ctx, dir, nil, nil, args...)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(out, []byte("\n"))
	return strings.TrimSpace(string(line)), nil
}
