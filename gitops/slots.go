package gitops

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfbot/perfbot/internal/lockfile"
	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/record"
)

// ErrSlotChanged is wrapped by VerifySlot when a slot no longer holds the
// checkout it is asked about.
var ErrSlotChanged = errors.New("the slot holds another checkout")

// Checkout makes slot's worktree an exact, clean checkout of commit (any
// revision Resolve accepts) and returns its directory. The first use of a
// slot adds the worktree under workdir/slots/N; every use then forces the
// checkout and removes all untracked and ignored files, so no output of an
// earlier build survives. Calls for the same slot serialize; different
// slots may be used concurrently.
//
// A slot here is just a numbered worktree. Which one holds what, and who
// may use it, is the business of the host pool (package runner): a local
// host maps each tree of each of its slots to one number. Unless this Repo
// holds the slot (LockSlot), Checkout takes its lock for the checkout.
func (r *Repo) Checkout(ctx context.Context, slot int, commit string) (string, error) {
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
	dir, err := r.checkout(ctx, slot, commit)
	if err != nil {
		return "", err
	}
	c, err := r.Resolve(ctx, commit)
	if err != nil {
		return "", err
	}
	if err := r.writeStamp(slot, stamp{Commit: c.Hash}); err != nil {
		return "", fmt.Errorf("checkout %s in slot %d: %w", c.Short(), slot, err)
	}
	return dir, nil
}

func (r *Repo) checkout(ctx context.Context, slot int, rev string) (string, error) {
	c, err := r.Resolve(ctx, rev)
	if err != nil {
		return "", fmt.Errorf("checkout slot %d: %w", slot, err)
	}
	// A checkout that stops halfway must not pass for the one before.
	if err := os.Remove(r.stampPath(slot)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("checkout %s in slot %d: %w", c.Short(), slot, err)
	}
	dir := r.slotDir(slot)
	if err := r.addWorktree(ctx, dir, c.Hash); err != nil {
		return "", fmt.Errorf("checkout %s in slot %d: %w", c.Short(), slot, err)
	}
	if err := removeStaleLocks(dir); err != nil {
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
	lock, err := r.lockWorkdir(ctx)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	args := append(slotConfig(), "worktree", "add", "--quiet", "--force", "--detach", dir, hash)
	_, err = gitCmd(ctx, r.dir, nil, nil, args...)
	return err
}

// staleLocks are the lock files git leaves in a worktree's private git
// directory when it is killed in the middle of a checkout.
var staleLocks = []string{"index.lock", "HEAD.lock"}

// removeStaleLocks removes git's lock files from the slot's worktree at
// dir. The caller holds the slot, in this process (its mutex) and against
// other processes (its lock), so no git runs there: a lock file is a dead
// git's, and left alone it would fail every later checkout.
func removeStaleLocks(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return err
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return fmt.Errorf("%s/.git is not a worktree's gitdir file", dir)
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	for _, name := range staleLocks {
		if err := os.Remove(filepath.Join(gitdir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove stale %s: %w", name, err)
		}
	}
	return nil
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

// SlotLock is a slot held by one Repo, and so by one process, until
// Release.
type SlotLock struct {
	r    *Repo
	slot int
	lock *lockfile.Lock
}

// LockSlot takes slot for this Repo until the lock is released: another
// perfbot process on the same workdir (or another Repo of this one) that
// wants the slot waits, up to wait, and then fails with an error that
// names this process. onWait, when not nil, is told whom this call waits
// for when it has to. The lock is an flock on workdir/slots/N.lock, which
// the kernel drops when its process dies.
func (r *Repo) LockSlot(ctx context.Context, slot int, wait time.Duration, onWait func(lockfile.Holder)) (*SlotLock, error) {
	if slot < 0 {
		return nil, fmt.Errorf("lock slot %d: slot is negative", slot)
	}
	if err := os.MkdirAll(filepath.Join(r.workdir, "slots"), 0o755); err != nil {
		return nil, fmt.Errorf("lock slot %d: %w", slot, err)
	}
	r.slotsMu.Lock()
	held := r.held[slot]
	r.slotsMu.Unlock()
	if held {
		return nil, fmt.Errorf("lock slot %d: this repository holds it already", slot)
	}
	lock, err := lockfile.Acquire(ctx, r.slotDir(slot)+".lock", wait, onWait)
	if err != nil {
		return nil, fmt.Errorf("lock slot %d: %w", slot, err)
	}
	r.slotsMu.Lock()
	r.held[slot] = true
	r.slotsMu.Unlock()
	return &SlotLock{r: r, slot: slot, lock: lock}, nil
}

// Release gives the slot back. Releasing twice is harmless.
func (l *SlotLock) Release() {
	if l.lock == nil {
		return
	}
	l.r.slotsMu.Lock()
	delete(l.r.held, l.slot)
	l.r.slotsMu.Unlock()
	l.lock.Release()
	l.lock = nil
}

// holdSlot takes slot's lock for one checkout unless LockSlot holds it,
// and returns what gives it back.
func (r *Repo) holdSlot(ctx context.Context, slot int) (func(), error) {
	r.slotsMu.Lock()
	held := r.held[slot]
	r.slotsMu.Unlock()
	if held {
		return func() {}, nil
	}
	l, err := r.LockSlot(ctx, slot, LockWait, nil)
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

// stamp is what a slot's last checkout made of it, kept beside the slot
// (workdir/slots/N.checkout) where neither git clean nor a build reaches.
// ID is new at every checkout, whichever process made it.
type stamp struct {
	ID     string   `json:"id"`
	Commit string   `json:"commit"`
	Patch  string   `json:"patch,omitempty"`
	Hunks  []string `json:"hunks,omitempty"`
}

func (r *Repo) stampPath(slot int) string { return r.slotDir(slot) + ".checkout" }

func (r *Repo) writeStamp(slot int, s stamp) error {
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	s.ID = hex.EncodeToString(id[:])
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := r.stampPath(slot) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.stampPath(slot))
}

func (r *Repo) readStamp(slot int) (stamp, error) {
	var s stamp
	data, err := os.ReadFile(r.stampPath(slot))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(data, &s)
}

// CheckoutID returns the identity of slot's last checkout: a value new at
// every Checkout and CheckoutPatch of the slot, by any process. Pass it to
// VerifySlot to learn whether the slot still holds that checkout.
func (r *Repo) CheckoutID(slot int) (string, error) {
	s, err := r.readStamp(slot)
	if err != nil {
		return "", fmt.Errorf("slot %d: read checkout stamp: %w", slot, err)
	}
	return s.ID, nil
}

// VerifySlot checks that slot still holds the checkout id of commit with
// exactly hunkIDs of p applied (p may be nil without hunks): no checkout
// happened since, HEAD is the commit, and every file the hunks write holds
// what they wrote (a file they delete is absent). Files the hunks do not
// touch are not compared, so a build may write what it likes. A mismatch
// wraps ErrSlotChanged.
func (r *Repo) VerifySlot(ctx context.Context, slot int, id, commit string, p *Patch, hunkIDs []string) error {
	want, err := r.Resolve(ctx, commit)
	if err != nil {
		return fmt.Errorf("verify slot %d: %w", slot, err)
	}
	s, err := r.readStamp(slot)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("verify slot %d: %w: no finished checkout", slot, ErrSlotChanged)
	case err != nil:
		return fmt.Errorf("verify slot %d: read checkout stamp: %w", slot, err)
	case s.ID != id:
		return fmt.Errorf("verify slot %d: %w: checked out again since (now %s)", slot, ErrSlotChanged, describe(s))
	case s.Commit != want.Hash:
		return fmt.Errorf("verify slot %d: %w: stamped %s, not %s", slot, ErrSlotChanged, record.ShortHash(s.Commit), want.Short())
	}
	patchID := ""
	if p != nil && len(hunkIDs) > 0 {
		patchID = p.ID
	}
	if s.Patch != patchID || !slices.Equal(s.Hunks, sortedCopy(hunkIDs)) {
		return fmt.Errorf("verify slot %d: %w: holds %s", slot, ErrSlotChanged, describe(s))
	}
	dir := r.slotDir(slot)
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return fmt.Errorf("verify slot %d: %w: the worktree is gone: %v", slot, ErrSlotChanged, err)
	}
	head, err := gitLine(ctx, dir, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return fmt.Errorf("verify slot %d: %w", slot, err)
	}
	if head != want.Hash {
		return fmt.Errorf("verify slot %d: %w: HEAD is %s, not %s", slot, ErrSlotChanged, record.ShortHash(head), want.Short())
	}
	if patchID == "" {
		return nil
	}
	chosen, err := p.choose(hunkIDs)
	if err != nil {
		return fmt.Errorf("verify slot %d: %w", slot, err)
	}
	edits, err := r.planEdits(p, chosen)
	if err != nil {
		return fmt.Errorf("verify slot %d: %w", slot, err)
	}
	for _, e := range edits {
		if err := e.check(dir); err != nil {
			return fmt.Errorf("verify slot %d: %w: %v", slot, ErrSlotChanged, err)
		}
	}
	return nil
}

func describe(s stamp) string {
	if len(s.Hunks) == 0 {
		return record.ShortHash(s.Commit)
	}
	return fmt.Sprintf("%s with %s of patch %s", record.ShortHash(s.Commit), num.Count(len(s.Hunks), "hunk"), s.Patch)
}

func sortedCopy(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// check reports how dir differs from what e did to it.
func (e edit) check(dir string) error {
	if e.remove != "" && e.remove != e.write {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(e.remove))); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s is still there", e.remove)
		}
	}
	if e.write == "" {
		return nil
	}
	full := filepath.Join(dir, filepath.FromSlash(e.write))
	var got []byte
	var err error
	if e.mode == gitSymlink {
		var target string
		target, err = os.Readlink(full)
		got = []byte(target)
	} else {
		got, err = os.ReadFile(full)
	}
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", e.write, err)
	case !bytes.Equal(got, e.content):
		return fmt.Errorf("%s does not hold what the hunks wrote", e.write)
	}
	return nil
}
