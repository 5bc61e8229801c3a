package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/internal/sshdtest"
)

// withSSHHost adds an ssh host on srv to the toy project's configuration;
// its workdir is a directory apart from the project's.
func withSSHHost(t *testing.T, dir string, srv *sshdtest.Server) string {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "remote")
	path := filepath.Join(dir, "perfbot.yaml")
	cfg, err := os.ReadFile(path)
	require.NoError(t, err)
	cfg = append(cfg, fmt.Sprintf("hosts:\n  - {name: gpu1, kind: ssh, address: %q, user: %s, key_file: %s, known_hosts: %s, workdir: %s}\n",
		srv.Addr, srv.User, srv.KeyFile, srv.KnownHosts, remote)...)
	require.NoError(t, os.WriteFile(path, cfg, 0o644))
	return remote
}

// Measure and bisect with the one host reached over SSH: every run is the
// host's, and the trees are checked out on its side, not in the local
// workdir.
func TestMeasureAndBisectOverSSH(t *testing.T) {
	srv := sshdtest.Start(t)
	dir, hashes := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 100}, {tokS: 80}})
	remote := withSSHHost(t, dir, srv)

	out, errOut, code := perfbot(t, dir, "measure", "HEAD", "--repeats", "2", "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "80")
	h := history(t, dir)
	require.NotEmpty(t, h)
	for _, r := range h {
		assert.Equal(t, "gpu1", r.Host)
		assert.Equal(t, "ok", r.Status)
		assert.Equal(t, "LL", r.Fingerprint.Env["NCCL_PROTO"], "the environment the remote benchmark saw")
	}
	assert.DirExists(t, filepath.Join(remote, "trees", "0"))
	assert.FileExists(t, filepath.Join(remote, "trees", "0", "bench.sh"))
	assert.NoDirExists(t, filepath.Join(dir, ".perfbot", "work", "slots"), "nothing is checked out locally")

	out, errOut, code = perfbot(t, dir, "bisect", "--good", "HEAD~2", "--bad", "HEAD", "--json")
	require.Equal(t, 0, code, errOut)
	var rep struct {
		Verdict  string
		Culprits []struct{ Commit string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, "culprit", rep.Verdict, errOut)
	require.Len(t, rep.Culprits, 1)
	assert.Equal(t, hashes[2], rep.Culprits[0].Commit)
	assert.Positive(t, countByCommit(history(t, dir))[hashes[1]], "the probe ran on the host too")
}

// A host that cannot be reached is an infrastructure failure that names
// it (exit status 2), after the bounded retries; nothing is recorded as a
// measurement.
func TestUnreachableSSHHost(t *testing.T) {
	srv := sshdtest.Start(t)
	dir, _ := toyProject(t, []toyCommit{{tokS: 1}})
	withSSHHost(t, dir, srv)
	srv.Kill()

	out, errOut, code := perfbot(t, dir, "measure", "HEAD")
	require.Equal(t, exitInfra, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "host gpu1: ")
	assert.Contains(t, errOut, "connect to "+srv.Addr)
	assert.Contains(t, errOut, "tried 4 times")
	assert.NotContains(t, errOut, "internal error")
}
