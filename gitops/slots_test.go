package gitops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops/gitopstest"
)

func TestCheckoutIsClean(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	first := b.Commit("first", map[string]string{".gitignore": "*.o\n", "main.go": "package main\n", "old.txt": "old\n"})
	second := b.Commit("second", map[string]string{"main.go": "package main // 2\n", "old.txt": ""})
	r := open(t, b.Dir)

	dir, err := r.Checkout(ctx, 0, first)
	require.NoError(t, err)
	assert.Equal(t, "0", filepath.Base(dir))
	assert.Equal(t, "package main\n", readFile(t, dir, "main.go"))

	// A build leaves outputs behind, ignored or not, and edits a file.
	writeFile(t, dir, "bin/engine", "binary")
	writeFile(t, dir, "kernel.o", "object")
	writeFile(t, dir, "main.go", "package main // edited by the build\n")

	again, err := r.Checkout(ctx, 0, second)
	require.NoError(t, err)
	assert.Equal(t, dir, again)
	assert.Equal(t, "package main // 2\n", readFile(t, dir, "main.go"))
	for _, gone := range []string{"bin", "kernel.o", "old.txt"} {
		assert.NoFileExists(t, filepath.Join(dir, gone))
	}
	assert.NoDirExists(t, filepath.Join(dir, "bin"))
	assert.FileExists(t, filepath.Join(dir, ".gitignore"))

	// A slot whose directory vanished is recreated.
	require.NoError(t, os.RemoveAll(dir))
	dir, err = r.Checkout(ctx, 0, first)
	require.NoError(t, err)
	assert.Equal(t, "old\n", readFile(t, dir, "old.txt"))

	_, err = r.Checkout(ctx, -1, first)
	assert.ErrorContains(t, err, "slot -1")
	_, err = r.Checkout(ctx, 1, "nope")
	assert.ErrorContains(t, err, `resolve "nope": unknown revision`)
}

func TestCheckoutSlotsConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, commits := gitopstest.NewRepo(t, 4)
	r := open(t, dir)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for slot := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Two rounds per slot, the second moving to another commit.
			for round := range 2 {
				c := (slot + round) % len(commits)
				d, err := r.Checkout(ctx, slot, commits[c])
				if err != nil {
					errs[slot] = err
					return
				}
				got, err := os.ReadFile(filepath.Join(d, "counter.txt"))
				if err != nil {
					errs[slot] = err
					return
				}
				if want := fmt.Sprintf("%d\n", c+1); string(got) != want {
					errs[slot] = fmt.Errorf("slot %d at %d holds %q", slot, c+1, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	for slot, err := range errs {
		assert.NoError(t, err, "slot %d", slot)
	}
}

func readFile(t *testing.T, dir, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, path))
	require.NoError(t, err)
	return string(data)
}

func writeFile(t *testing.T, dir, path, content string) {
	t.Helper()
	full := filepath.Join(dir, path)
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
}
