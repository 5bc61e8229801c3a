package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandPaths returns the path of every command of perfbot's tree, root
// first, as the words one types after "perfbot" (none for the root),
// without cobra's own help and completion commands.
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	root := perfbotTree()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" || sub.Hidden {
				continue
			}
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(root, nil)
	return paths
}

// perfbotTree is the command tree run executes.
func perfbotTree() *cobra.Command {
	return newRoot(&globals{stdout: io.Discard, stderr: io.Discard})
}

// TestHelpGoldens holds every command's --help in
// testdata/help/<command>.golden (testbed-init.golden, perfbot.golden for perfbot itself) (go test -update rewrites them), and
// checks that every command says what it does at length and by example.
func TestHelpGoldens(t *testing.T) {
	paths := commandPaths(t)
	require.Greater(t, len(paths), 15)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Join("testdata", "help"), 0o755))
	}
	for _, path := range paths {
		name := strings.Join(path, "-")
		if name == "" {
			name = "perfbot"
		}
		t.Run(name, func(t *testing.T) {
			out, errOut, code := perfbot(t, t.TempDir(), append(append([]string(nil), path...), "--help")...)
			require.Equal(t, exitOK, code, errOut)
			assert.Empty(t, errOut)
			assert.Contains(t, out, "Examples:\n", "%s has no Example", name)
			golden(t, filepath.Join("help", name+".golden"), []byte(out))
		})
	}
}

// TestEveryCommandDocumented: Long and Example are set on every command,
// so help says more than the one-line summary.
func TestEveryCommandDocumented(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" || c.Name() == "completion" {
			return
		}
		assert.NotEmpty(t, c.Long, "%s: Long", c.CommandPath())
		assert.NotEmpty(t, c.Example, "%s: Example", c.CommandPath())
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(perfbotTree())
}

// TestFlagRules: required flags, flags that exclude each other and the
// choice between an argument and a flag are declared to cobra, and every
// breach is a usage error (exit status 1) that names the flags, with
// nothing on stdout and nothing created.
func TestFlagRules(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"bisect without --bad", []string{"bisect", "--good", "HEAD~5"}, "perfbot: bisect needs --bad (see perfbot bisect --help)"},
		{"bisect without ends", []string{"bisect"}, "perfbot: bisect needs --bad and --good"},
		{"envbisect without its files", []string{"envbisect", "--rev", "HEAD"}, "perfbot: envbisect needs --bad-env and --good-env"},
		{"parse without --format", []string{"parse", "out.txt"}, "perfbot: parse needs --format"},
		{"testbed init's flags are checked too", []string{"testbed", "init", "x", "--seed", "y"}, `invalid argument "y" for "--seed"`},
		{"history --json with --format", []string{"history", "--json", "--format", "csv"}, "perfbot: history: if any flags in the group [json format] are set none of the others can be"},
		{"history --speculative with --metric", []string{"history", "--speculative", "--metric", "x"}, "group [speculative metric]"},
		{"history --speculative with --format", []string{"history", "--speculative", "--format", "csv"}, "group [speculative format]"},
		{"report --file-issue with --retry-unfiled", []string{"report", "--file-issue", "--retry-unfiled"}, "group [file-issue retry-unfiled]"},
		{"report with neither", []string{"report"}, "give either FINDING or --retry-unfiled"},
		{"report with both", []string{"report", "3f2a", "--retry-unfiled"}, "give either FINDING or --retry-unfiled"},
		{"hunks with neither", []string{"hunks"}, "hunks needs REV or --worktree"},
		{"hunks with both", []string{"hunks", "HEAD", "--worktree"}, "give either REV or --worktree, not both"},
		{"hunks with two revisions", []string{"hunks", "HEAD~1", "HEAD"}, "accepts at most 1 arg(s), received 2"},
		{"testbed init without its directory", []string{"testbed", "init"}, "accepts 1 arg(s), received 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := perfbot(t, dir, tt.args...)
			assert.Equal(t, exitInput, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.stderr)
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a usage error creates nothing")
}
