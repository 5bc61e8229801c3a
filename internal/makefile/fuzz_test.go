package makefile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFuzzRunsEveryTarget: make fuzz runs every fuzz target even when some
// fail, names each failure in its summary, and fails.
func TestFuzzRunsEveryTarget(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	want := fuzzTargets(t, root)
	require.Greater(t, len(want), 2)

	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fakeGo := filepath.Join(dir, "go")
	// The stand-in records each target and fails the first and the last.
	script := "#!/bin/sh\nfor a in \"$@\"; do case $a in ^Fuzz*) echo \"$a\" >> " + calls + ";; esac; done\n" +
		"case \"$*\" in *'^" + want[0] + "$'*|*'^" + want[len(want)-1] + "$'*) echo boom; exit 1;; esac\n"
	require.NoError(t, os.WriteFile(fakeGo, []byte(script), 0o755))

	cmd := exec.Command("make", "-s", "-C", root, "fuzz", "GO="+fakeGo)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "make fuzz must fail when a target fails: %v\n%s", err, out)

	data, err := os.ReadFile(calls)
	require.NoError(t, err)
	ran := strings.Fields(string(data))
	assert.Len(t, ran, len(want), "every target runs:\n%s", out)
	assert.Contains(t, string(out), "targets, 2 failed")
	assert.Regexp(t, `FAIL \S+:`+want[0]+`\n`, string(out))
	assert.Regexp(t, `FAIL \S+:`+want[len(want)-1]+`\n`, string(out))
}

// fuzzTargets returns the names of the fuzz targets under root, in the
// order make fuzz runs them (files sorted, functions in file order).
func fuzzTargets(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return nil
	}))
	re := regexp.MustCompile(`(?m)^func (Fuzz[A-Za-z0-9_]*)\(`)
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			names = append(names, m[1])
		}
	}
	return names
}
