package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

	// So does measure, as a job.
	out, errOut, code = perfbot(t, dir, "measure", "HEAD~1", "--repeats", "1", "--json")
	require.Equal(t, exitOK, code, errOut+stderr.String())
	require.Contains(t, errOut, "going through it")
	require.Contains(t, out, hashes[1])

	// So do findings and report.
	out, errOut, code = perfbot(t, dir, "findings", "--json")
	require.Equal(t, exitOK, code, errOut+stderr.String())
	require.Contains(t, errOut, "going through it")
	require.JSONEq(t, "[]", out)
	_, errOut, code = perfbot(t, dir, "report", "perfbotfp00")
	require.Equal(t, exitInput, code, errOut+stderr.String())
	require.Contains(t, errOut, "going through it")
	require.Contains(t, errOut, `no finding "perfbotfp00"`)

	// Filing is a job of the queue, so that it never files beside an
	// alert job.
	_, errOut, code = perfbot(t, dir, "report", "perfbotfp00", "--file-issue")
	require.Equal(t, exitInput, code, errOut+stderr.String())
	require.Contains(t, errOut, "going through it")
	require.Contains(t, errOut, `no finding "perfbotfp00"`)
	_, errOut, code = perfbot(t, dir, "report", "--retry-unfiled")
	require.Equal(t, exitOK, code, errOut+stderr.String())
	require.Contains(t, errOut, "going through it")
	require.Contains(t, errOut, "0 unfiled findings")

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

// TestIdleConnectionsBesideAJob: a client holding more idle keep-alive
// connections than the server keeps (and more than its process has
// descriptors) while a bisection runs does not stop the job: the server
// keeps at most its limit and the job forks git and the benchmark to the
// end.
func TestIdleConnectionsBesideAJob(t *testing.T) {
	dir, hashes := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 100}, {tokS: 80}})
	exe, err := os.Executable()
	require.NoError(t, err)
	const nofile, idle = 256, 400
	// ulimit lowers the hard limit too, so that Go does not raise the soft
	// one back at start.
	cmd := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" serve --listen 127.0.0.1:0`, nofile), exe)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PERFBOT_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	endpointFile := filepath.Join(dir, ".perfbot", "perfbot.db.serve")
	waitFor(t, func() bool { _, ok := readEndpoint(endpointFile); return ok })
	ep, _ := readEndpoint(endpointFile)
	addr := strings.TrimPrefix(ep.URL, "http://")

	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range idle {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		conns = append(conns, c)
		// One request, its answer never read: the connection stays open,
		// idle between requests.
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	}
	time.Sleep(500 * time.Millisecond)
	held := sockets(t, cmd.Process.Pid)

	done := make(chan struct{})
	var out, errOut string
	var code int
	go func() {
		defer close(done)
		out, errOut, code = perfbot(t, dir, "bisect", "--good", "HEAD~2", "--bad", "HEAD", "--json")
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the bisection did not finish beside %d idle connections: %s", idle, stderr.String())
	}
	t.Logf("%d idle connections opened, %d sockets held by the server before the job (limit %d of %d descriptors); the job exited %d", idle, held, nofile/4, nofile, code)
	require.Equal(t, 0, code, errOut+stderr.String())
	var rep struct {
		Verdict  string `json:"verdict"`
		Culprits []struct {
			Commit string `json:"commit"`
		} `json:"culprits"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, "culprit", rep.Verdict)
	require.Equal(t, hashes[2], rep.Culprits[0].Commit)
	require.LessOrEqual(t, held, nofile/4+1, "the server keeps at most its limit (and its listener)")
}

// sockets counts the sockets process pid holds open.
func sockets(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// TestListenWarning: serving on every interface, where any GET reads the
// store without a token, is said at start; a loopback or named address is
// not.
func TestListenWarning(t *testing.T) {
	for _, tt := range []struct {
		listen string
		warns  bool
	}{
		{"127.0.0.1:8080", false},
		{"[::1]:8080", false},
		{"perf.internal:8080", false},
		{"0.0.0.0:8080", true},
		{"[::]:8080", true},
		{":8080", true},
	} {
		t.Run(tt.listen, func(t *testing.T) {
			w := listenWarning(tt.listen)
			if !tt.warns {
				require.Empty(t, w)
				return
			}
			require.Contains(t, w, "binds every interface")
			require.Contains(t, w, tt.listen)
		})
	}
}
