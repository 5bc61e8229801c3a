package gitops

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// RevertRefPrefix is where the commits RevertOnto makes are kept: a ref
// stops them from being collected, and fetching origin (which mirrors
// refs/heads, refs/remotes/origin and refs/tags only) never prunes it.
const RevertRefPrefix = "refs/perfbot/revert/"

// ErrNotOnTip is wrapped by RevertOnto when the change to revert is no
// longer on the tip: its hunks apply to the tip forwards, so a later
// commit undid it.
var ErrNotOnTip = errors.New("the change is no longer on the tip")

// RevertConflict is RevertOnto's error when the change does not revert
// cleanly on the tip, not even by a three-way merge: later commits build
// on it.
type RevertConflict struct {
	// Files are the paths that conflict, sorted.
	Files []string
}

func (e *RevertConflict) Error() string {
	return fmt.Sprintf("the revert does not apply on the tip: %s conflict", strings.Join(e.Files, ", "))
}

// Revert is a commit that undoes a change on top of a tip.
type Revert struct {
	// Tip is the commit the revert was made on.
	Tip record.Commit
	// Commit is the full hash of the revert commit, whose one parent is
	// Tip; Ref is the ref that keeps it.
	Commit string
	Ref    string
	// Diff is the revert as a patch against Tip, in git's format
	// (git apply takes it).
	Diff string
	// Files are the paths the revert changes; Undone are the paths the
	// change touched that the tip already holds as they were before it
	// (a later commit undid that part), which the revert leaves alone.
	Files  []string
	Undone []string
}

// RevertOnto undoes hunkIDs of p (every hunk of p when hunkIDs is empty)
// on top of tip and records the result as a commit whose one parent is
// tip, kept under RevertRefPrefix+name. The hunks are reversed strictly
// first and, where later commits moved their context, by a three-way
// merge, as git revert does. When that fails too, the error is
// *RevertConflict naming the files, or ErrNotOnTip when the hunks apply
// to the tip forwards (a later commit already undid them). The revert
// commit's author, committer and dates are fixed (perfbot's, at the tip's
// date), so the same revert on the same tip is the same commit.
func (r *Repo) RevertOnto(ctx context.Context, tip string, p *Patch, hunkIDs []string, name, message string) (*Revert, error) {
	if p == nil {
		return nil, errors.New("revert: nil patch")
	}
	if !validRefName(name) {
		return nil, fmt.Errorf("revert: %q is not a ref name (letters, digits, '.', '_', '-' and '/')", name)
	}
	t, err := r.Resolve(ctx, tip)
	if err != nil {
		return nil, fmt.Errorf("revert onto %s: %w", tip, err)
	}
	if len(hunkIDs) == 0 {
		for _, h := range p.Hunks() {
			hunkIDs = append(hunkIDs, h.ID)
		}
	}
	forward, err := r.Apply(ctx, p, hunkIDs)
	if err != nil {
		return nil, fmt.Errorf("revert onto %s: %w", t.Short(), err)
	}
	fail := func(err error) (*Revert, error) {
		return nil, fmt.Errorf("revert patch %s onto %s: %w", p.ID, t.Short(), err)
	}
	tmp, err := r.scratchIndex()
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	patchFile := filepath.Join(tmp, "forward.diff")
	if err := os.WriteFile(patchFile, forward.Diff, 0o644); err != nil {
		return fail(err)
	}
	applied, err := r.reverseApply(ctx, env, t.Hash, patchFile)
	if err != nil {
		return fail(err)
	}
	if len(applied) > 0 {
		// Does the tip already look like the change was never made?
		if _, ferr := gitCmd(ctx, r.dir, nil, env, "read-tree", t.Hash); ferr != nil {
			return fail(ferr)
		}
		if _, ferr := gitCmd(ctx, r.dir, nil, env, "apply", "--cached", "--check", patchFile); ferr == nil {
			return fail(ErrNotOnTip)
		}
		return fail(&RevertConflict{Files: applied})
	}
	tree, err := gitFirstLine(ctx, r.dir, nil, env, "write-tree")
	if err != nil {
		return fail(err)
	}
	if tipTree, err := gitFirstLine(ctx, r.dir, nil, nil, "rev-parse", t.Hash+"^{tree}"); err != nil {
		return fail(err)
	} else if tipTree == tree {
		// The merge found every hunk already undone.
		return fail(ErrNotOnTip)
	}
	commit, err := r.commitTree(ctx, tree, t, message)
	if err != nil {
		return fail(err)
	}
	ref := RevertRefPrefix + name
	if _, err := gitCmd(ctx, r.dir, nil, nil, "update-ref", ref, commit); err != nil {
		return fail(err)
	}
	diff, err := gitCmd(ctx, r.dir, nil, nil, "diff", "--no-color", "--no-ext-diff", "--no-textconv",
		"--src-prefix=a/", "--dst-prefix=b/", "--find-renames", t.Hash, commit, "--")
	if err != nil {
		return fail(err)
	}
	files, err := gitCmd(ctx, r.dir, nil, nil, "diff", "--name-only", "-z", t.Hash, commit, "--")
	if err != nil {
		return fail(err)
	}
	if err := r.reopen(); err != nil {
		return fail(err)
	}
	rev := &Revert{Tip: t, Commit: commit, Ref: ref, Diff: string(diff)}
	rev.Files = splitZ(files)
	for _, f := range forward.Files {
		if !slices.Contains(rev.Files, f.Path) && !slices.Contains(rev.Undone, f.Path) {
			rev.Undone = append(rev.Undone, f.Path)
		}
	}
	slices.Sort(rev.Undone)
	return rev, nil
}

// splitZ splits git's NUL-terminated list of paths.
func splitZ(out []byte) []string {
	var paths []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			paths = append(paths, f)
		}
	}
	return paths
}

// reverseApply reads tip into the scratch index and reverses the patch
// there, strictly and then by a three-way merge. It returns the files
// that would not revert (none when the index holds the revert).
func (r *Repo) reverseApply(ctx context.Context, env []string, tip, patchFile string) ([]string, error) {
	if _, err := gitCmd(ctx, r.dir, nil, env, "read-tree", tip); err != nil {
		return nil, err
	}
	if _, err := gitCmd(ctx, r.dir, nil, env, "apply", "--cached", "-R", patchFile); err == nil {
		return nil, nil
	}
	if _, err := gitCmd(ctx, r.dir, nil, env, "read-tree", tip); err != nil {
		return nil, err
	}
	_, err := gitCmd(ctx, r.dir, nil, env, "apply", "--cached", "-R", "--3way", patchFile)
	if err == nil {
		return nil, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	files := conflictFiles(err.Error())
	if len(files) == 0 {
		return nil, fmt.Errorf("reverse the patch: %w", err)
	}
	return files, nil
}

var (
	unmergedLine = regexp.MustCompile(`(?m)^U (.+)$`)
	failedLine   = regexp.MustCompile(`(?m)^error: (.+?): (?:patch does not apply|does not exist in index|does not match index|already exists in index)$`)
)

// conflictFiles reads the files git apply could not apply from its
// messages: "U path" after a three-way merge, "error: path: patch does not
// apply" where no merge was possible.
func conflictFiles(msg string) []string {
	seen := map[string]bool{}
	for _, re := range []*regexp.Regexp{unmergedLine, failedLine} {
		for _, m := range re.FindAllStringSubmatch(msg, -1) {
			seen[strings.TrimSpace(m[1])] = true
		}
	}
	files := make([]string, 0, len(seen))
	for f := range seen {
		files = append(files, f)
	}
	slices.Sort(files)
	return files
}

// commitTree records tree as a commit on parent under perfbot's name, at
// the parent's commit date, so that the same tree on the same parent is
// always the same commit.
func (r *Repo) commitTree(ctx context.Context, tree string, parent record.Commit, message string) (string, error) {
	date := parent.Date.UTC().Format("2006-01-02T15:04:05Z")
	env := []string{
		"GIT_AUTHOR_NAME=perfbot", "GIT_AUTHOR_EMAIL=perfbot@users.noreply.github.com", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=perfbot", "GIT_COMMITTER_EMAIL=perfbot@users.noreply.github.com", "GIT_COMMITTER_DATE=" + date,
	}
	return gitFirstLine(ctx, r.dir, []byte(message), env, "commit-tree", tree, "-p", parent.Hash)
}

// scratchIndex makes a directory for a temporary index under the
// workdir; the caller removes it.
func (r *Repo) scratchIndex() (string, error) {
	parent := filepath.Join(r.workdir, "tmp")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(parent, "index-")
}

var refName = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)

// validRefName reports whether name is a safe ref name below a prefix:
// no "..", no leading dot or dash in a part, no ".lock" ending.
func validRefName(name string) bool {
	if !refName.MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") {
		return false
	}
	for part := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasPrefix(part, "-") {
			return false
		}
	}
	return true
}

// RefCommit returns the commit a ref of the clone names, and whether the
// ref exists.
func (r *Repo) RefCommit(ctx context.Context, ref string) (string, bool, error) {
	out, err := gitCmd(ctx, r.dir, nil, nil, "for-each-ref", "--format=%(objectname)", ref)
	if err != nil {
		return "", false, fmt.Errorf("read ref %s: %w", ref, err)
	}
	h := string(bytes.TrimSpace(out))
	return h, h != "", nil
}

// RevertBranchPrefix starts every branch PushRevert pushes: a branch of
// perfbot's own, never a branch people work on.
const RevertBranchPrefix = "perfbot/revert-"

// PushRevert pushes commit to branch of remote (a URL or a local path),
// replacing what perfbot pushed there before. It pushes only branches
// under RevertBranchPrefix. An https remote is authenticated with token
// (as GitHub takes it, in a header that never reaches the command line);
// any other with git's own credentials.
func (r *Repo) PushRevert(ctx context.Context, remote, commit, branch, token string) error {
	if !strings.HasPrefix(branch, RevertBranchPrefix) || !validRefName(branch) {
		return fmt.Errorf("push revert: branch %q is not one of perfbot's (%s…)", branch, RevertBranchPrefix)
	}
	if remote == "" {
		return errors.New("push revert: no remote")
	}
	var env []string
	if strings.HasPrefix(remote, "https://") && token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader",
			"GIT_CONFIG_VALUE_0=Authorization: Basic "+basic)
	}
	if _, err := gitCmd(ctx, r.dir, nil, env, "push", "--quiet", "--force", "--", remote, commit+":refs/heads/"+branch); err != nil {
		return fmt.Errorf("push revert %s to %s of %s: %w", record.ShortHash(commit), branch, remote, err)
	}
	return nil
}
