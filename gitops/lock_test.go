package gitops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
)

// Two perfbot processes started on one fresh workdir both clone: the
// second waits for the first's clone instead of racing it, and no
// repo.partial is left behind.
func TestOpenConcurrentClones(t *testing.T) {
	t.Parallel()
	src, commits := gitopstest.NewRepo(t, 3)
	workdir := t.TempDir()
	const n = 4
	errs := make([]error, n)
	repos := make([]*gitops.Repo, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			repos[i], errs[i] = gitops.Open(context.Background(), src, workdir)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "open %d", i)
		c, err := repos[i].Resolve(context.Background(), "main")
		require.NoError(t, err)
		assert.Equal(t, commits[2], c.Hash)
	}
	_, err := os.Stat(filepath.Join(workdir, "repo.partial"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no partial clone is left behind")
}

// A slot held by one Repo (one process) is refused to another one on the
// same workdir, with the holder named, until it is released.
func TestLockSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 2)
	workdir := t.TempDir()
	first, err := gitops.Open(ctx, src, workdir)
	require.NoError(t, err)
	second, err := gitops.Open(ctx, src, workdir)
	require.NoError(t, err)

	lock, err := first.LockSlot(ctx, 0, 0, nil)
	require.NoError(t, err)
	_, err = second.LockSlot(ctx, 0, 20*time.Millisecond, nil)
	require.ErrorContains(t, err, "lock slot 0:")
	assert.ErrorContains(t, err, fmt.Sprintf("is held by pid %d", os.Getpid()))
	_, err = first.LockSlot(ctx, 0, 0, nil)
	assert.ErrorContains(t, err, "holds it already")

	// The holder checks out without waiting for itself.
	_, err = first.Checkout(ctx, 0, commits[0])
	require.NoError(t, err)
	other, err := second.LockSlot(ctx, 1, 0, nil)
	require.NoError(t, err, "other slots are free")
	other.Release()

	time.AfterFunc(50*time.Millisecond, lock.Release)
	lock2, err := second.LockSlot(ctx, 0, 10*time.Second, nil)
	require.NoError(t, err, "a waiter gets the slot once it is released")
	lock2.Release()
	lock.Release()
}

func TestVerifySlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	c1 := b.Commit("1", map[string]string{"f.txt": "one\n", "g.txt": "g\n"})
	c2 := b.Commit("2", map[string]string{"f.txt": "two\n", "g.txt": "g2\n"})
	workdir := t.TempDir()
	r, err := gitops.Open(ctx, b.Dir, workdir)
	require.NoError(t, err)
	other, err := gitops.Open(ctx, b.Dir, workdir)
	require.NoError(t, err)
	p, err := r.Diff(ctx, c1, c2)
	require.NoError(t, err)
	hunk := map[string]string{}
	for _, h := range p.Hunks() {
		hunk[h.File] = h.ID
	}
	gHunk := []string{hunk["g.txt"]}

	tests := []struct {
		name    string
		hunks   []string // applied by the checkout verified; nil checks out c1
		tamper  func(t *testing.T, dir string)
		verify  []string // the hunks asked about; nil means the applied ones
		wantErr string   // "" means the slot verifies
	}{
		{name: "a fresh checkout verifies", tamper: func(*testing.T, string) {}},
		{name: "hunks verify", hunks: gHunk, tamper: func(*testing.T, string) {}},
		{name: "build outputs do not matter", hunks: gHunk, tamper: func(t *testing.T, dir string) {
			writeFile(t, dir, "bin/engine", "binary")
		}},
		{name: "another checkout since", tamper: func(t *testing.T, dir string) {
			_, err := other.Checkout(ctx, 0, c1)
			require.NoError(t, err)
		}, wantErr: "checked out again since"},
		{name: "HEAD moved under the checkout", tamper: func(t *testing.T, dir string) {
			gitIn(t, dir, "", "checkout", "-q", "--detach", c2)
		}, wantErr: "HEAD is " + c2[:10]},
		{name: "a hunk's file rewritten", hunks: gHunk, tamper: func(t *testing.T, dir string) {
			writeFile(t, dir, "g.txt", "g\n")
		}, wantErr: "g.txt does not hold what the hunks wrote"},
		{name: "other hunks than the ones applied", hunks: gHunk, verify: []string{hunk["f.txt"]}, tamper: func(*testing.T, string) {},
			wantErr: "holds " + c1[:10] + " with 1 hunk "},
		{name: "hunks asked of a plain checkout", verify: gHunk, tamper: func(*testing.T, string) {},
			wantErr: "holds " + c1[:10]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dir string
			var err error
			if tt.hunks == nil {
				dir, err = r.Checkout(ctx, 0, c1)
			} else {
				dir, err = r.CheckoutPatch(ctx, 0, p, tt.hunks)
			}
			require.NoError(t, err)
			id, err := r.CheckoutID(0)
			require.NoError(t, err)
			tt.tamper(t, dir)
			asked := tt.hunks
			if tt.verify != nil {
				asked = tt.verify
			}
			err = r.VerifySlot(ctx, 0, id, c1, p, asked)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, gitops.ErrSlotChanged)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// A crash in the middle of a checkout leaves git's own lock files in the
// slot; the next checkout recovers the slot instead of failing until
// someone removes them by hand.
func TestCheckoutRecoversStaleGitLocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 2)
	r := open(t, src)
	dir, err := r.Checkout(ctx, 0, commits[0])
	require.NoError(t, err)
	gitdir := strings.TrimSpace(gitIn(t, dir, "", "rev-parse", "--absolute-git-dir"))
	for _, name := range []string{"index.lock", "HEAD.lock"} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(gitdir, name), nil, 0o644))
			_, err := r.Checkout(ctx, 0, commits[1])
			require.NoError(t, err)
			assert.Equal(t, "2\n", readFile(t, dir, "counter.txt"))
			_, err = r.Checkout(ctx, 0, commits[0])
			require.NoError(t, err)
		})
	}
}
