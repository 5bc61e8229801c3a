package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// While perfbot serve holds the store, history reads through it and
// bisect runs as a job of its queue; SIGTERM stops it cleanly.
func TestCommandsBesideServe(t *testing.T) {
	dir, hashes := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 100}, {tokS: 80}})
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "serve", "--listen", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PERFBOT_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	endpointFile := filepath.Join(dir, ".perfbot", "perfbot.db.serve")
	waitFor(t, func() bool { _, ok := readEndpoint(endpointFile); return ok })
	info, err := os.Stat(endpointFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the session token is for this user only")

	out, errOut, code := perfbot(t, dir, "bisect", "--good", "HEAD~2", "--bad", "HEAD", "--json")
	require.Equal(t, 0, code, errOut+stderr.String())
	require.Contains(t, errOut, "going through it")
	var rep struct {
		Verdict  string `json:"verdict"`
		Culprits []struct {
			Commit string `json:"commit"`
		} `json:"culprits"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, "culprit", rep.Verdict)
	require.Equal(t, hashes[2], rep.Culprits[0].Commit)

	h := history(t, dir)
	require.NotEmpty(t, h)
	require.Positive(t, countByCommit(h)[hashes[2]])

	// Triage goes through the server too (a job's bisection stores no
	// finding, so the server answers that it knows none by that name).
	_, errOut, code = perfbot(t, dir, "triage", "perfbotfp00", "fixed")
	require.Equal(t, exitInput, code, errOut+stderr.String())
	require.Contains(t, errOut, "going through it")
	require.Contains(t, errOut, `no finding "perfbotfp00"`)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop on SIGTERM: %s", stderr.String())
	}
	require.NoFileExists(t, endpointFile)
	require.Contains(t, stderr.String(), "stopped")
}
