// Package sshdtest starts a real OpenSSH server on 127.0.0.1 for tests:
// its own host key, a client key it accepts, a known_hosts file that
// names it, all in a temporary directory, and the sshd process stopped
// when the test ends.
//
// The server is Debian's openssh-server (/usr/sbin/sshd). Where it is not
// installed a test that asks for one is skipped, unless the variable CI
// is set: there the missing server fails the test, so that CI never
// passes by skipping.
package sshdtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Binary is the server started.
const Binary = "/usr/sbin/sshd"

// Server is a running sshd.
type Server struct {
	// Addr is the server's 127.0.0.1:port.
	Addr string
	// User is the account to log in as: the test's own.
	User string
	// KeyFile is a private key the server accepts (OpenSSH format, no
	// passphrase).
	KeyFile string
	// KnownHosts is a known_hosts file that holds the server's host key
	// under Addr.
	KnownHosts string
	// HostKey is the server's public host key.
	HostKey ssh.PublicKey

	dir    string
	config string
	mu     sync.Mutex
	cmd    *exec.Cmd
	stderr *bytes.Buffer
}

// Start starts an sshd on a free port of 127.0.0.1 and stops it, with
// every session it runs, when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("sshd is not installed (%v); CI needs Debian's openssh-server", err)
		}
		t.Skipf("sshd is not installed (%v): apt-get install openssh-server", err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("current user: %v", err)
	}
	if u.Uid == "0" {
		// The privilege separation directory sshd wants when it runs as
		// root.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatalf("create /run/sshd: %v", err)
		}
	}
	dir := t.TempDir()
	s := &Server{dir: dir, User: u.Username}
	hostPub := writeKey(t, filepath.Join(dir, "host_ed25519"))
	clientPub := writeKey(t, filepath.Join(dir, "id_ed25519"))
	s.KeyFile = filepath.Join(dir, "id_ed25519")
	s.HostKey = hostPub
	write(t, filepath.Join(dir, "authorized_keys"), ssh.MarshalAuthorizedKey(clientPub), 0o600)

	port := freePort(t)
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.KnownHosts = filepath.Join(dir, "known_hosts")
	write(t, s.KnownHosts, []byte(knownhosts.Line([]string{s.Addr}, hostPub)+"\n"), 0o600)

	s.config = filepath.Join(dir, "sshd_config")
	write(t, s.config, []byte(strings.Join([]string{
		"ListenAddress 127.0.0.1",
		"Port " + strconv.Itoa(port),
		"HostKey " + filepath.Join(dir, "host_ed25519"),
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"PidFile " + filepath.Join(dir, "sshd.pid"),
		"PermitRootLogin yes",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"LogLevel ERROR",
		// bash, as a login shell started by sshd, reads ~/.bashrc even
		// for a command (bash -c) unless it is a nested shell: a slow
		// rc file of the machine's user (pyenv, conda) would be paid by
		// every session of every test.
		"SetEnv SHLVL=1",
		"",
	}, "\n")), 0o600)
	s.start(t)
	t.Cleanup(s.Kill)
	return s
}

// start runs sshd and waits until it accepts connections.
func (s *Server) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(Binary, "-D", "-e", "-f", s.config)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.stderr = cmd, &stderr
	s.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("sshd exited at start: %s", stderr.String())
		default:
		}
		c, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd does not listen on %s: %v; its output: %s", s.Addr, err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Restart starts the server again after Kill, on the same address and
// with the same keys: the host came back.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.start(t)
}

// Kill stops the server the way a host goes away: sshd and everything it
// started (the sessions and the commands they run) are killed at once,
// so every connection drops. Killing twice is harmless.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	pids := append(descendants(cmd.Process.Pid), cmd.Process.Pid)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range pids {
		waitGone(pid, 5*time.Second)
	}
}

// descendants lists the processes below pid, children before their own.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parent(p); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			walk(c)
			out = append(out, c)
		}
	}
	walk(pid)
	return out
}

func parent(pid int) (int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// waitGone waits until pid is gone or a zombie.
func waitGone(pid int, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// writeKey writes a new ed25519 private key in OpenSSH format to path and
// returns its public key.
func writeKey(t testing.TB, path string) ssh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("generate key: %v", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatalf("marshal key: %v", err)
	}
	write(t, path, pem.EncodeToMemory(block), 0o600)
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatalf("public key: %v", err)
	}
	write(t, path+".pub", ssh.MarshalAuthorizedKey(sshPub), 0o644)
	return sshPub
}

// WrongKnownHosts writes a known_hosts file in t's temporary directory
// that names the server's address with another host's key, as after a
// reinstall or in front of a man in the middle, and returns its path.
func (s *Server) WrongKnownHosts(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	other := writeKey(t, filepath.Join(dir, "other_host_key"))
	path := filepath.Join(dir, "known_hosts")
	write(t, path, []byte(knownhosts.Line([]string{s.Addr}, other)+"\n"), 0o600)
	return path
}

func write(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// String names the server in test messages.
func (s *Server) String() string { return fmt.Sprintf("sshd at %s", s.Addr) }
