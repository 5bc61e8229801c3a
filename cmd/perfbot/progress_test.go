package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops/gitopstest"
)

// docsProject is a repository of two commits, the second touching
// documentation only, with a benchmark that reports the same figure at
// every commit in every environment.
func docsProject(t *testing.T) string {
	t.Helper()
	b := gitopstest.NewBuilder(t)
	b.Commit("engine", map[string]string{"bench.sh": benchScript(toyCommit{tokS: 100}), "README.md": "# toy\n"})
	b.Commit("docs: usage", map[string]string{"README.md": "# toy\n\nUsage.\n", "docs/usage.md": "# Usage\n"})
	dir := t.TempDir()
	cfg := `repo:
  url: ` + b.Dir + `
build:
  - name: build
    run: "true"
benchmarks:
  - name: toy
    run: sh bench.sh
    format: gobench
metrics:
  - name: gen_tok_s
    benchmark: toy
    select: BenchmarkGen
    unit: tok/s
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), []byte(cfg), 0o644))
	return dir
}

func TestLongCommandsSayWhatTheyDo(t *testing.T) {
	dir := docsProject(t)

	t.Run("measure prints a line per run", func(t *testing.T) {
		_, errOut, code := perfbot(t, dir, "measure", "HEAD", "--repeats", "3")
		require.Equal(t, 0, code, errOut)
		for _, n := range []string{"1", "2", "3"} {
			assert.Regexp(t, regexp.MustCompile(`measure +\S+ run `+n+` of 3: gen_tok_s 100`), errOut)
		}
	})
	t.Run("hunks answers a docs-only commit at once", func(t *testing.T) {
		out, errOut, code := perfbot(t, dir, "hunks", "HEAD")
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "none of its 2 hunks can change gen_tok_s")
		assert.Contains(t, out, "every changed file is documentation (README.md, docs/usage.md)")
		assert.NotContains(t, errOut, "  ends ", "nothing was measured")
	})
	t.Run("envbisect stops when the environments make no difference", func(t *testing.T) {
		good, bad := filepath.Join(dir, "good.env"), filepath.Join(dir, "bad.env")
		require.NoError(t, os.WriteFile(good, []byte("NCCL_PROTO=Simple\n"), 0o644))
		require.NoError(t, os.WriteFile(bad, []byte("NCCL_PROTO=LL\n"), 0o644))
		_, errOut, code := perfbot(t, dir, "envbisect", "--rev", "HEAD", "--good-env", good, "--bad-env", bad)
		require.Equal(t, 1, code, errOut)
		assert.Contains(t, errOut, "within the 2.0% worth isolating")
		assert.Contains(t, errOut, "make no measurable difference to gen_tok_s")
		ends := strings.Count(errOut, "  ends ")
		assert.Positive(t, ends, "the ends' runs were reported")
		assert.LessOrEqual(t, ends, 4, "the search stopped at the ends' first comparison")
	})
}
