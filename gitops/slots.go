package gitops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Checkout makes slot's worktree an exact, clean checkout of commit (any
// revision Resolve accepts) and returns its directory. The first use of a
// slot adds the worktree under workdir/slots/N; every use then forces the
// checkout and removes all untracked and ignored files, so no output of an
// earlier build survives. Calls for the same slot serialize; different
// slots may be used concurrently.
//
// A slot here is just a numbered worktree. Which one holds what, and who
// may use it, is the business of the host pool (package runner): a local
// host maps each tree of each of its slots to one number.
func (r *Repo) Checkout(ctx context.Context, slot int, commit string) (string, error) {
	mu, err := r.slotLock(slot)
	if err != nil {
		return "", err
	}
	mu.Lock()
	defer mu.Unlock()
	return r.checkout(ctx, slot, commit)
}

func (r *Repo) checkout(ctx context.Context, slot int, rev string) (string, error) {
	c, err := r.Resolve(ctx, rev)
	if err != nil {
		return "", fmt.Errorf("checkout slot %d: %w", slot, err)
	}
	dir := r.slotDir(slot)
	if err := r.addWorktree(ctx, dir, c.Hash); err != nil {
		return "", fmt.Errorf("checkout %s in slot %d: %w", c.Short(), slot, err)
	}
	args := append(slotConfig(), "checkout", "--quiet", "--detach", "--force", c.Hash)
	if _, err := gitCmd(ctx, dir, nil, nil, args...); err != nil {
		return "", fmt.Errorf("checkout %s in slot %d: %w", c.Short(), slot, err)
	}
	if _, err := gitCmd(ctx, dir, nil, nil, "clean", "-ffdxq"); err != nil {
		return "", fmt.Errorf("clean slot %d: %w", slot, err)
	}
	return dir, nil
}

// addWorktree creates the slot's linked worktree unless it exists. A
// directory left without its .git file (an interrupted add, a hand-made
// mess) is replaced; --force re-registers a path git still remembers.
func (r *Repo) addWorktree(ctx context.Context, dir, hash string) error {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return nil
	}
	r.worktreeMu.Lock()
	defer r.worktreeMu.Unlock()
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	args := append(slotConfig(), "worktree", "add", "--quiet", "--force", "--detach", dir, hash)
	_, err := gitCmd(ctx, r.dir, nil, nil, args...)
	return err
}

// slotConfig makes checkouts in slots what a CI machine would get: the
// repository's own attributes decide line endings, not the user's global
// core.autocrlf.
func slotConfig() []string {
	return []string{"-c", "core.autocrlf=false"}
}

func (r *Repo) slotDir(slot int) string {
	return filepath.Join(r.workdir, "slots", strconv.Itoa(slot))
}

func (r *Repo) slotLock(slot int) (*sync.Mutex, error) {
	if slot < 0 {
		return nil, fmt.Errorf("checkout: slot %d is negative", slot)
	}
	r.slotsMu.Lock()
	defer r.slotsMu.Unlock()
	mu, ok := r.slots[slot]
	if !ok {
		mu = &sync.Mutex{}
		r.slots[slot] = mu
	}
	return mu, nil
}
