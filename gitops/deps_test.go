package gitops_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops/gitopstest"
)

const cacheOld = `package engine

// KVCache holds keys and values.
type KVCache struct {
	blocks int
}

// Blocks returns the capacity.
func (c *KVCache) Blocks() int {
	return c.blocks
}
`

const stepOld = `package engine

import "fmt"

func Step(cfg Config) error {
	fmt.Println("step")
	return nil
}

func Verify() error {
	err := check()
	if err != nil {
		return err
	}
	fmt.Println("verify")
	return nil
}

func check() error { return nil }
`

const commOld = `import os


def all_reduce(x):
    return x


LIMIT = 4
`

func TestDependencies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	base := b.Commit("base", map[string]string{
		"engine/cache.go":      cacheOld,
		"engine/step.go":       stepOld,
		"comm/communicator.py": commOld,
	})
	child := b.Commit("change", map[string]string{
		"engine/cache.go": replaceAll(cacheOld, "\tblocks int\n", "\tblocks int\n\tBudget int\n") +
			"\n// NewKVCache makes a cache.\nfunc NewKVCache(n int) *KVCache {\n\treturn &KVCache{blocks: n}\n}\n",
		"engine/step.go": replaceAll(stepOld,
			`import "fmt"`, "import (\n\t\"fmt\"\n\n\t\"example.com/infer/engine/spec\"\n)",
			"\tfmt.Println(\"step\")\n",
			"\tfmt.Println(\"step\")\n\tc := NewKVCache(8)\n\terr := check()\n\tfmt.Println(c, err, cfg.Budget, spec.Draft())\n",
			"\tfmt.Println(\"verify\")\n", "\tfmt.Println(\"verify\")\n\tfmt.Println(\"verified\", err)\n",
		),
		"engine/spec/draft.go": "package spec\n\n// Draft proposes tokens.\nfunc Draft() int { return 3 }\n",
		"comm/communicator.py": replaceAll(commOld,
			"import os\n", "import os\nfrom .topk import select_experts\n",
			"    return x\n", "    return helper(x)\n",
		) + "\n\ndef helper(x):\n    return select_experts(x)\n",
		"comm/topk.py": "def select_experts(x):\n    return x\n",
	})
	r := open(t, b.Dir)
	p, err := r.Diff(ctx, base, child)
	require.NoError(t, err)
	require.Len(t, p.Hunks(), 10, "fixture hunks:\n%s", p)

	id := func(file, text string) string {
		t.Helper()
		for _, h := range p.Hunks() {
			if h.File == file && strings.Contains(h.Text, text) {
				return h.ID
			}
		}
		t.Fatalf("no hunk of %s holds %q", file, text)
		return ""
	}
	var (
		budget    = id("engine/cache.go", "Budget int")
		newCache  = id("engine/cache.go", "func NewKVCache")
		imports   = id("engine/step.go", "example.com/infer/engine/spec")
		step      = id("engine/step.go", "NewKVCache(8)")
		draft     = id("engine/spec/draft.go", "func Draft")
		fromTopk  = id("comm/communicator.py", "from .topk")
		callsHelp = id("comm/communicator.py", "return helper(x)")
		helper    = id("comm/communicator.py", "def helper")
		topk      = id("comm/topk.py", "def select_experts")
	)
	assert.Equal(t, map[string][]string{
		// Uses NewKVCache, the Budget field and spec.Draft; its err := is
		// local to Step, so Verify's new use of err needs nothing.
		step:    sorted(newCache, budget, draft),
		imports: {draft},
		// Imports the new module and uses its function.
		fromTopk:  {topk},
		callsHelp: {helper},
		helper:    {topk},
	}, p.Dependencies())
}

func sorted(ids ...string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}
