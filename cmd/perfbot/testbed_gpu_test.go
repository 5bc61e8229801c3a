package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/configs"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/testbed"
)

// TestTestbedInitGPUAndMeasure generates the GPU testbed with the command,
// then measures its build break and its head with configs/gpu-testbed.yaml
// as written (the import check, bench/run.py on the CPU): the break is
// build_failed and the head yields every metric.
func TestTestbedInitGPUAndMeasure(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	stdout, stderr, code := perfbot(t, dir, "testbed", "init", "--gpu", "gpu-testbed")
	require.Equal(t, 0, code, stderr)
	m, err := testbed.LoadManifest(testbed.ManifestPath(filepath.Join(dir, "gpu-testbed")))
	require.NoError(t, err)
	assert.Equal(t, "gpu", m.Testbed)
	assert.Contains(t, stdout, "generated gpu-testbed: 44 commits")
	for _, c := range m.Changes {
		assert.Contains(t, stdout, record.ShortHash(c.Commit)+" "+c.Subject)
	}

	py := torchPython(t)
	// The config runs python3: the one with torch goes first on PATH.
	t.Setenv("PATH", filepath.Dir(py)+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("TESTBED_VERIFY_ITERS", "4")
	t.Setenv("TESTBED_DECODE_ITERS", "4")
	t.Setenv("TESTBED_DEVICE", "cpu")
	data, err := configs.FS.ReadFile("gpu-testbed.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), data, 0o644))
	e, ok := m.Change("e")
	require.True(t, ok)
	stdout, stderr, code = perfbot(t, dir, "measure", e.Commit, m.Head, "--repeats", "1")
	require.Equal(t, 0, code, stderr)
	var broken, measured []string
	for _, l := range strings.Split(stdout, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 2 && f[0] == record.ShortHash(e.Commit) && f[1] == "build_failed":
			broken = append(broken, l)
		case len(f) > 3 && f[0] == record.ShortHash(m.Head) && f[1] == "ok":
			measured = append(measured, f[2])
		}
	}
	assert.NotEmpty(t, broken, "the build break fails its import check:\n%s", stdout)
	assert.Contains(t, stdout, "ImportError")
	assert.ElementsMatch(t, []string{"verify_tok_s", "decode_tok_s", "verify_ms"}, measured, "%s", stdout)
}

// torchPython returns a python3 that imports torch, as testbed's tests find
// it; it skips the test without one, except in CI, which installs
// python3-torch.
func torchPython(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("TESTBED_PYTHON"), "python3", "/usr/bin/python3"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if path, err := exec.LookPath(c); err == nil && exec.Command(path, "-c", "import torch").Run() == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no python3 that imports torch (CI installs python3-torch)")
	}
	t.Skip("no python3 that imports torch")
	return ""
}
