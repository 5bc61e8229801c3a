package gitops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops/gitopstest"
)

const ringOld = `package engine

import "sync"

// Ring is a ring allreduce.
type Ring struct {
	mu    sync.Mutex
	ranks int
}

// Size returns the number of ranks.
func (r Ring) Size() int {
	return r.ranks
}

// AllReduce sums the buffers.
func (r *Ring) AllReduce(buf []float32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range buf {
		buf[i] *= 1
	}
}

func Select(k int) int {
	x := k
	// a comment to delete
	return x
}

type Cache[T any] struct{ items []T }

func (c *Cache[T]) Len() int {
	return len(c.items)
}

// Tail stays.
func Tail() {}
`

const pyOld = `import os


class Communicator:
    def __init__(self, world):
        self.world = world

    @property
    def size(self):
        return self.world

    def all_reduce(self, x):
        if x is None:
            return x
        return x * self.world


def helper(
    a,
):
    def inner(b):
        return b + 1

    return inner(a)


LIMIT = 4
`

const cOld = `#include <stdio.h>

int setup(void)
{
	int a = 1;
	int b = 2;
	int c = 3;
	return a + b + c;
}
`

func TestFunctionNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	base := b.Commit("base", map[string]string{"engine/ring.go": ringOld, "comm/communicator.py": pyOld, "kernels/attn.c": cOld})
	child := b.Commit("change", map[string]string{
		"engine/ring.go": replaceAll(ringOld,
			"\tranks int\n", "\tranks int\n\tchunk int\n",
			"return r.ranks", "return r.ranks + 0",
			"*= 1", "*= 2",
			"\t// a comment to delete\n", "",
			"return len(c.items)", "return len(c.items) + 0",
		) + "\n// Added is new.\nfunc Added() {}\n",
		"comm/communicator.py": replaceAll(pyOld,
			"    @property", "    @functools.cached_property",
			"            return x\n", "            return None\n",
			"return b + 1", "return b + 2",
			"LIMIT = 4", "LIMIT = 8",
		),
		"kernels/attn.c": strings.Replace(cOld, "int c = 3;", "int c = 4;", 1),
	})
	r := open(t, b.Dir)
	p, err := r.Diff(ctx, base, child)
	require.NoError(t, err)

	got := map[string][]string{}
	for _, h := range p.Hunks() {
		got[h.File] = append(got[h.File], h.Function)
	}
	assert.Equal(t, map[string][]string{
		"engine/ring.go":       {"Ring", "Ring.Size", "(*Ring).AllReduce", "Select", "(*Cache).Len", "Added"},
		"comm/communicator.py": {"Communicator.size", "Communicator.all_reduce", "helper.inner", ""},
		"kernels/attn.c":       {"int setup(void)"},
	}, got)
}

// replaceAll applies old, new pairs in order, each exactly once.
func replaceAll(s string, pairs ...string) string {
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			panic("fixture lacks " + pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}
