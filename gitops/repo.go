package gitops

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfbot/perfbot/internal/lockfile"
	"github.com/perfbot/perfbot/record"
)

// ErrUnknownRevision is wrapped by Resolve when a revision names no commit.
var ErrUnknownRevision = errors.New("unknown revision")

// ErrAmbiguousRevision is wrapped by Resolve when a short hash matches more
// than one commit.
var ErrAmbiguousRevision = errors.New("ambiguous short hash")

// ErrNotOnChain is wrapped by Chain when good is not on bad's first-parent
// chain.
var ErrNotOnChain = errors.New("not on the first-parent chain")

// Repo is perfbot's bare clone of the watched repository plus its worktree
// slots. Its methods are safe for concurrent use; Checkout and
// CheckoutPatch serialize per slot.
type Repo struct {
	origin  string
	workdir string
	dir     string // the bare clone, workdir/repo

	mu  sync.Mutex // go-git's repository is not safe for concurrent use
	git *git.Repository

	slotsMu    sync.Mutex
	slots      map[int]*sync.Mutex
	held       map[int]bool // slots whose lock LockSlot holds
	worktreeMu sync.Mutex   // serializes git worktree add
}

// LockWait is how long a Repo waits for the workdir's lock, which another
// perfbot process holds while it clones, fetches or adds a worktree.
const LockWait = 30 * time.Minute

// fetchSpecs mirror origin's branches as both local and remote-tracking
// branches, so "main" and "origin/main" resolve alike, and copy its tags.
var fetchSpecs = []config.RefSpec{
	"+refs/heads/*:refs/heads/*",
	"+refs/heads/*:refs/remotes/origin/*",
	"+refs/tags/*:refs/tags/*",
}

// Open returns the clone of url under workdir/repo, cloning it on first use
// and fetching otherwise. url is a local path (made absolute) or a clone
// URL; the repository it names is only ever read. Another perfbot process
// opening the same workdir waits until this one's clone or fetch is done
// (see LockWait), so the two never race over the clone.
func Open(ctx context.Context, url, workdir string) (*Repo, error) {
	if url == "" {
		return nil, errors.New("open repository: empty url")
	}
	origin := url
	if IsLocalPath(url) {
		abs, err := filepath.Abs(url)
		if err != nil {
			return nil, fmt.Errorf("open repository %s: %w", url, err)
		}
		origin = abs
	}
	// Slots are registered with git by path, so the path must not depend
	// on the directory a git command happens to run in.
	workdir, err := filepath.Abs(workdir)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", url, err)
	}
	r := &Repo{
		origin:  origin,
		workdir: workdir,
		dir:     filepath.Join(workdir, "repo"),
		slots:   map[int]*sync.Mutex{},
		held:    map[int]bool{},
	}
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		return nil, fmt.Errorf("open repository %s: %w", url, err)
	}
	lock, err := r.lockWorkdir(ctx)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", url, err)
	}
	defer lock.Release()
	repo, err := git.PlainOpen(r.dir)
	switch {
	case errors.Is(err, git.ErrRepositoryNotExists):
		if err := r.clone(ctx); err != nil {
			return nil, err
		}
		if repo, err = git.PlainOpen(r.dir); err != nil {
			return nil, fmt.Errorf("open clone %s: %w", r.dir, err)
		}
	case err != nil:
		return nil, fmt.Errorf("open clone %s: %w", r.dir, err)
	default:
		if err := setOrigin(repo, origin); err != nil {
			return nil, fmt.Errorf("open clone %s: %w", r.dir, err)
		}
	}
	r.git = repo
	if err := r.fetch(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// lockWorkdir takes the lock that other perfbot processes on the workdir
// take before they write to the clone's refs, packs or worktree list.
func (r *Repo) lockWorkdir(ctx context.Context) (*lockfile.Lock, error) {
	return lockfile.Acquire(ctx, filepath.Join(r.workdir, "lock"), LockWait, nil)
}

// clone clones into a scratch directory and renames it into place, so a
// clone interrupted halfway is never mistaken for a usable one. The caller
// holds the workdir's lock: a partial clone left here is a dead process's.
func (r *Repo) clone(ctx context.Context) error {
	partial := r.dir + ".partial"
	if err := os.RemoveAll(partial); err != nil {
		return fmt.Errorf("clone %s: %w", r.origin, err)
	}
	if err := os.MkdirAll(r.workdir, 0o755); err != nil {
		return fmt.Errorf("clone %s: %w", r.origin, err)
	}
	// git itself clones (a local repository through hard links, in a
	// second where go-git took 20 for a module of a few thousand commits);
	// go-git reads the clone.
	if _, err := gitCmd(ctx, r.workdir, nil, nil, "clone", "--bare", "--no-tags", "--quiet", "--", r.origin, partial); err != nil {
		os.RemoveAll(partial)
		return fmt.Errorf("clone %s: %w", r.origin, err)
	}
	if out, err := gitCmd(ctx, partial, nil, nil, "for-each-ref", "--count=1", "refs/heads"); err != nil || len(bytes.TrimSpace(out)) == 0 {
		os.RemoveAll(partial)
		if err != nil {
			return fmt.Errorf("clone %s: %w", r.origin, err)
		}
		return fmt.Errorf("clone %s: repository has no commits", r.origin)
	}
	if err := os.Rename(partial, r.dir); err != nil {
		os.RemoveAll(partial)
		return fmt.Errorf("clone %s: %w", r.origin, err)
	}
	return nil
}

// setOrigin points an existing clone at url when the configuration moved
// the watched repository.
func setOrigin(repo *git.Repository, url string) error {
	cfg, err := repo.Config()
	if err != nil {
		return err
	}
	remote, ok := cfg.Remotes[git.DefaultRemoteName]
	if !ok {
		return errors.New("clone has no origin remote")
	}
	if len(remote.URLs) == 1 && remote.URLs[0] == url {
		return nil
	}
	remote.URLs = []string{url}
	return repo.SetConfig(cfg)
}

// IsLocalPath tells a filesystem path from a clone URL ("https://…",
// "ssh://…", "file://…") or an scp-like address ("git@github.com:org/repo"),
// by git's own rule: a path has no "://" and no colon before its first
// slash. Whether the path exists does not matter, as it does not to git: a
// directory whose name holds a colon is named with a slash before it
// ("./a:b").
func IsLocalPath(url string) bool {
	if strings.Contains(url, "://") {
		return false
	}
	colon := strings.Index(url, ":")
	slash := strings.Index(url, "/")
	return colon < 0 || (slash >= 0 && slash < colon)
}

// reopen rereads the clone after the git command line wrote to it: go-git
// caches the list of packs it has indexed.
func (r *Repo) reopen() error {
	repo, err := git.PlainOpen(r.dir)
	if err != nil {
		return fmt.Errorf("reopen clone %s: %w", r.dir, err)
	}
	r.mu.Lock()
	r.git = repo
	r.mu.Unlock()
	return nil
}

// Origin returns the path or URL the clone fetches from.
func (r *Repo) Origin() string {
	return r.origin
}

// Dir returns the clone's directory, a local origin for another clone of
// the repository (a host's clone on storage its nodes share).
func (r *Repo) Dir() string {
	return r.dir
}

// Fetch updates all branches and tags from origin, under the workdir's
// lock.
func (r *Repo) Fetch(ctx context.Context) error {
	lock, err := r.lockWorkdir(ctx)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", r.origin, err)
	}
	defer lock.Release()
	return r.fetch(ctx)
}

func (r *Repo) fetch(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	args := []string{"fetch", "--quiet", "--force", "--prune", "--no-tags", "--", git.DefaultRemoteName}
	for _, s := range fetchSpecs {
		args = append(args, s.String())
	}
	if _, err := gitCmd(ctx, r.dir, nil, nil, args...); err != nil {
		return fmt.Errorf("fetch %s: %w", r.origin, err)
	}
	// go-git lists the packs once: open the clone again to see the new ones.
	repo, err := git.PlainOpen(r.dir)
	if err != nil {
		return fmt.Errorf("fetch %s: open clone: %w", r.origin, err)
	}
	r.git = repo
	return nil
}

// Resolve returns the commit a revision names: a full or short (at least 4
// digits) hash, a branch (local or origin/…), a tag, or any of those with
// ~N and ^N suffixes.
func (r *Repo) Resolve(ctx context.Context, rev string) (record.Commit, error) {
	if err := ctx.Err(); err != nil {
		return record.Commit{}, fmt.Errorf("resolve %q: %w", rev, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.resolve(rev)
	if err != nil {
		return record.Commit{}, fmt.Errorf("resolve %q: %w", rev, err)
	}
	return newCommit(c), nil
}

func (r *Repo) resolve(rev string) (*object.Commit, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return nil, ErrUnknownRevision
	}
	base := rev
	if i := strings.IndexAny(rev, "~^@:"); i >= 0 {
		base = rev[:i]
	}
	if isHex(base) && len(base) < 2*len(plumbing.ZeroHash) {
		matches := r.commitsWithPrefix(base)
		switch {
		case len(matches) > 1:
			return nil, fmt.Errorf("%w: %s", ErrAmbiguousRevision, strings.Join(shorts(matches), ", "))
		case len(matches) == 0 && len(base) < 4 && !r.isRef(base):
			return nil, ErrUnknownRevision
		}
	}
	h, err := r.git.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, ErrUnknownRevision
	}
	c, err := r.git.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", record.ShortHash(h.String()), err)
	}
	return c, nil
}

// commitsWithPrefix lists the commits (and annotated tags' commits) whose
// hash starts with prefix, which go-git's ResolveRevision would pick from
// silently.
func (r *Repo) commitsWithPrefix(prefix string) []string {
	if len(prefix) < 4 {
		return nil
	}
	prefix = strings.ToLower(prefix)
	lister, ok := r.git.Storer.(interface {
		HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error)
	})
	if !ok {
		return nil
	}
	raw, err := hex.DecodeString(prefix[:len(prefix)&^1])
	if err != nil {
		return nil
	}
	hashes, err := lister.HashesWithPrefix(raw)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var commits []string
	for _, h := range hashes {
		if !strings.HasPrefix(h.String(), prefix) {
			continue
		}
		target := h
		if tag, err := r.git.TagObject(h); err == nil {
			target = tag.Target
		}
		if _, err := r.git.CommitObject(target); err == nil && !seen[target.String()] {
			seen[target.String()] = true
			commits = append(commits, target.String())
		}
	}
	return commits
}

func (r *Repo) isRef(name string) bool {
	for _, rule := range plumbing.RefRevParseRules {
		if _, err := r.git.Reference(plumbing.ReferenceName(fmt.Sprintf(rule, name)), true); err == nil {
			return true
		}
	}
	return false
}

// Commit returns the commit with the given hash (or any revision Resolve
// accepts).
func (r *Repo) Commit(ctx context.Context, hash string) (record.Commit, error) {
	return r.Resolve(ctx, hash)
}

// hasCommit reports whether the clone holds the commit with the full hash.
func (r *Repo) hasCommit(hash string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.git.CommitObject(plumbing.NewHash(hash))
	return err == nil
}

// Chain returns the first-parent chain from good to bad, oldest first,
// both included. Merge commits appear once, as the change they bring to
// the first parent. It fails with ErrNotOnChain when good is not a
// first-parent ancestor of bad (for example a commit of a merged branch).
func (r *Repo) Chain(ctx context.Context, good, bad string) ([]record.Commit, error) {
	g, err := r.Resolve(ctx, good)
	if err != nil {
		return nil, fmt.Errorf("chain: %w", err)
	}
	b, err := r.Resolve(ctx, bad)
	if err != nil {
		return nil, fmt.Errorf("chain: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var chain []record.Commit
	h := plumbing.NewHash(b.Hash)
	for {
		if len(chain)%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("chain %s..%s: %w", good, bad, err)
			}
		}
		c, err := r.git.CommitObject(h)
		if err != nil {
			return nil, fmt.Errorf("chain %s..%s: read commit %s: %w", good, bad, record.ShortHash(h.String()), err)
		}
		chain = append(chain, newCommit(c))
		if c.Hash.String() == g.Hash {
			break
		}
		if len(c.ParentHashes) == 0 {
			return nil, fmt.Errorf("chain %s..%s: good %s is %w of bad %s",
				good, bad, g.Short(), ErrNotOnChain, b.Short())
		}
		h = c.ParentHashes[0]
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}

// FirstParents returns the first-parent chain that ends at tip, oldest
// first, at most limit commits long (the newest ones; limit <= 0 is the
// whole chain to the root).
func (r *Repo) FirstParents(ctx context.Context, tip string, limit int) ([]record.Commit, error) {
	t, err := r.Resolve(ctx, tip)
	if err != nil {
		return nil, fmt.Errorf("first parents: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var chain []record.Commit
	h := plumbing.NewHash(t.Hash)
	for limit <= 0 || len(chain) < limit {
		if len(chain)%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("first parents of %s: %w", t.Short(), err)
			}
		}
		c, err := r.git.CommitObject(h)
		if err != nil {
			return nil, fmt.Errorf("first parents of %s: read commit %s: %w", t.Short(), record.ShortHash(h.String()), err)
		}
		chain = append(chain, newCommit(c))
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	slices.Reverse(chain)
	return chain, nil
}

func newCommit(c *object.Commit) record.Commit {
	parents := make([]string, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		parents[i] = p.String()
	}
	return record.Commit{
		Hash:    c.Hash.String(),
		Subject: subject(c.Message),
		Author:  c.Author.Name,
		Email:   c.Author.Email,
		Date:    c.Author.When,
		Parents: parents,
	}
}

// subject is a commit message's subject as git gives it: the first
// paragraph joined into one line.
func subject(msg string) string {
	head, _, _ := strings.Cut(strings.TrimLeft(msg, "\n"), "\n\n")
	return strings.Join(strings.Fields(head), " ")
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func shorts(hashes []string) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = record.ShortHash(h)
	}
	return out
}

// gitCmd runs the git command line in dir for what go-git lacks
// (worktrees, diffs) and returns its standard output. Hooks, the
// filesystem monitor (core.fsmonitor, a command git would run on its own)
// and automatic gc are disabled, so no command of the user's configuration
// runs, neither in perfbot's clone nor in the user's checkout that
// WorkingDiff reads; extraEnv is appended to the environment; stdin may be
// nil.
func gitCmd(ctx context.Context, dir string, stdin []byte, extraEnv []string, args ...string) ([]byte, error) {
	full := append([]string{
		"-c", "core.hooksPath=" + os.DevNull,
		"-c", "core.fsmonitor=false",
		"-c", "gc.auto=0",
		"-c", "advice.detachedHead=false",
		"-c", "core.quotePath=false",
	}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	cmd.Env = append(cmd.Env, extraEnv...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}
