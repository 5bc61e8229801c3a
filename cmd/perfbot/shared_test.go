package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two perfbot processes on one workdir, each with its own store, measure
// two commits at once, the clone included: every sample either stored is
// its own commit's (the toy benchmark prints 920 at HEAD~1, 1000 at HEAD,
// after a pause that lets the other process change the tree), or the
// process refused with a clear message; no repo.partial is left.
func TestTwoProcessesOnOneWorkdir(t *testing.T) {
	dir, hashes := toyProject(t, []toyCommit{{tokS: 920}, {tokS: 1000}})
	cfg, err := os.ReadFile(filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	cfg = []byte(strings.Replace(string(cfg), "run: sh bench.sh", "run: sleep 0.05; sh bench.sh", 1))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), cfg, 0o644))
	exe, err := os.Executable()
	require.NoError(t, err)

	want := map[string]float64{hashes[0]: 920, hashes[1]: 1000}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i, rev := range []string{hashes[0], hashes[1]} {
		cmd := exec.Command(exe, "measure", rev, "--repeats", "6", "--json", "--store", filepath.Join(dir, []string{"a.db", "b.db"}[i]))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PERFBOT_TEST_MAIN=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "process %d: %s", i, outs[i])
	}
	for _, store := range []string{"a.db", "b.db"} {
		out, errOut, code := perfbot(t, dir, "history", "--json", "--store", filepath.Join(dir, store))
		require.Equal(t, 0, code, errOut)
		var h historyJSON
		require.NoError(t, json.Unmarshal([]byte(out), &h), out)
		require.Len(t, h, 6, store)
		for _, r := range h {
			require.Equal(t, want[r.Commit], r.Value, "%s: a sample of %s", store, r.Commit[:10])
		}
	}
	_, err = os.Stat(filepath.Join(dir, ".perfbot", "work", "repo.partial"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
