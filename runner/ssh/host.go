// Package ssh is a machine reached over SSH as a runner.Host: perfbot
// keeps a clone and trees of its own there, sends it the commits it lacks
// as git bundles, and runs each command in a process group that the
// machine kills when perfbot or its connection goes away.
package ssh

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
)

// Host is a machine reached over SSH. It needs no access to the
// repository's origin: it keeps a bare clone of its own under
// Workdir/repo, and perfbot sends it the commits it lacks as git bundles
// through the connection. Tree N is a worktree of that clone at
// Workdir/trees/N (slot by slot, as on a Local host), checked out clean
// for every target and kept with its build for the next measurement of
// the same target; a target's hunks are computed here (so a hunk that
// does not apply is the target's *gitops.ApplyError, found before the
// host is touched) and applied there with git apply. Each checkout writes
// a stamp beside its tree, and Verify compares the tree with it, its HEAD
// and the content of every file the hunks wrote.
//
// A lease locks its tree with flock(1) on Workdir/trees/N.lock, held by a
// session that lasts as long as the lease: another perfbot process
// sharing the workdir, from any machine, waits up to LockWait and then
// fails naming the holder, and a perfbot that dies or loses its
// connection lets go of the lock with its session.
//
// Each command runs under setsid(1) in a session and process group of its
// own; its group is recorded in the tree's scratch directory
// (Workdir/scratch/N) while it runs, marked as on a Local host. A timeout
// or a cancelled context kills the whole group through a second session
// (SIGTERM, then SIGKILL after KillGrace); should perfbot or its
// connection go away instead, the end of the session's input tells the
// host to kill the group itself, and the next lock of the tree kills what
// is still recorded. Output is streamed back and capped as on a Local
// host. Commands see the login environment of the host's user plus their
// Command.Env; nothing of perfbot's own environment travels.
//
// The host key is checked against KnownHosts unless InsecureIgnoreHostKey
// is set. Connecting is retried ConnectAttempts times with a backoff that
// doubles from ConnectBackoff, except when the host key or the key is
// refused, which retrying cannot mend. Every failure to reach the host, or
// a connection that drops under a command, is a *record.InfraError naming
// the host. Sessions are spread over as many connections as needed, a few
// per connection, below sshd's default MaxSessions.
//
// The remote host needs a POSIX sh, git, grep -z (GNU grep), flock(1) and setsid(1) (Debian's
// util-linux), coreutils and a Linux /proc. Every session starts the
// user's login shell, whose rc files (bash reads ~/.bashrc for sshd) are
// paid by each; a step costs two sessions (its command, and the check of
// its tree after a benchmark).
type Host struct {
	// HostName is the configured name; Address when empty.
	HostName string
	// Address is host or host:port; the port defaults to 22.
	Address string
	// User logs in; the current user when empty.
	User string
	// KeyFile is a private key (OpenSSH or PEM, without passphrase);
	// when empty, the agent at SSH_AUTH_SOCK signs.
	KeyFile string
	// KnownHosts is checked for the host's key; ~/.ssh/known_hosts when
	// empty.
	KnownHosts string
	// InsecureIgnoreHostKey accepts any host key.
	InsecureIgnoreHostKey bool
	// Workdir is perfbot's directory on the host, an absolute path.
	Workdir string
	// Repo is the local clone whose commits are sent to the host.
	Repo *gitops.Repo
	// Slots is the number of targets measured at once; 1 when zero.
	Slots int
	// Trees is the number of trees each slot keeps; DefaultTrees when
	// zero.
	Trees int
	// OutputCap bounds the output kept of one command; DefaultOutputCap
	// when zero.
	OutputCap int
	// LockWait is how long a lease waits for a tree that another process
	// holds; DefaultLockWait when zero, no wait when negative.
	LockWait time.Duration
	// ConnectAttempts bounds the tries to connect;
	// DefaultConnectAttempts when zero.
	ConnectAttempts int
	// ConnectBackoff is the wait after the first failed try, doubled
	// after each; DefaultConnectBackoff when zero.
	ConnectBackoff time.Duration
	// KillGrace is how long a killed command's group has between SIGTERM
	// and SIGKILL; DefaultKillGrace when zero.
	KillGrace time.Duration
	// Logger is told about retries and waits; nil discards it.
	Logger *slog.Logger

	mu      sync.Mutex
	conns   []*sshConn
	config  *gossh.ClientConfig
	facts   *record.Fingerprint
	held    map[int]*remoteLock
	applied map[string][]gitops.AppliedFile // by stamp
	has     map[string]bool                 // commits the remote clone holds
	fetchMu sync.Mutex
}

var _ runner.Host = (*Host)(nil)

// Defaults of an SSH host.
const (
	DefaultConnectAttempts = 4
	DefaultConnectBackoff  = time.Second
	DefaultKillGrace       = 5 * time.Second
)

// sshDialTimeout bounds one TCP connect and SSH handshake.
const sshDialTimeout = 15 * time.Second

// sshSessionsPerConn is how many sessions one connection carries: sshd
// allows 10 by default (MaxSessions), and a lease holds two (its lock and
// its command) plus a short one now and then.
const sshSessionsPerConn = 8

// sshKeepalive is how often an idle connection is probed, so that a host
// that went away is noticed before the next command needs it.
const sshKeepalive = 30 * time.Second

// Name returns the configured name.
func (s *Host) Name() string {
	if s.HostName == "" {
		return s.Address
	}
	return s.HostName
}

// Layout returns the configured slots and trees, defaulted.
func (s *Host) Layout() runner.Layout {
	lay := runner.Layout{Slots: s.Slots, Trees: s.Trees}
	if lay.Slots <= 0 {
		lay.Slots = 1
	}
	if lay.Trees <= 0 {
		lay.Trees = runner.DefaultTrees
	}
	return lay
}

// Close drops the host's connections.
func (s *Host) Close() error {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		c.client.Close()
	}
	return nil
}

func (s *Host) infra(op string, err error) *record.InfraError {
	return &record.InfraError{Host: s.Name(), Op: op, Err: err}
}

func (s *Host) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// addr is Address with its port.
func (s *Host) addr() string {
	if _, _, err := net.SplitHostPort(s.Address); err == nil {
		return s.Address
	}
	return net.JoinHostPort(strings.Trim(s.Address, "[]"), "22")
}

// sshConn is one connection and the sessions it carries.
type sshConn struct {
	client   *gossh.Client
	sessions int
	limit    int
	dead     bool
}

// session opens a session on a connection with room for it, connecting
// when none has. done must be called when the session has ended.
func (s *Host) session(ctx context.Context) (sess *gossh.Session, done func(), err error) {
	for range 3 {
		c, err := s.conn(ctx)
		if err != nil {
			return nil, nil, err
		}
		sess, err := c.client.NewSession()
		if err == nil {
			var once sync.Once
			return sess, func() { once.Do(func() { s.leave(c) }) }, nil
		}
		var refused *gossh.OpenChannelError
		s.mu.Lock()
		c.sessions--
		if errors.As(err, &refused) {
			// The server's MaxSessions is lower than ours.
			c.limit = max(c.sessions, 1)
		} else {
			c.dead = true
		}
		s.mu.Unlock()
		if !errors.As(err, &refused) {
			c.client.Close()
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
	}
	return nil, nil, s.infra("open session", runner.HostDown(errors.New("the host refuses new sessions")))
}

func (s *Host) leave(c *sshConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.sessions--
}

// conn returns a live connection with room for one more session, counted
// in, dialing a new one when none has room.
func (s *Host) conn(ctx context.Context) (*sshConn, error) {
	s.mu.Lock()
	for _, c := range s.conns {
		if !c.dead && c.sessions < c.limit {
			c.sessions++
			s.mu.Unlock()
			return c, nil
		}
	}
	s.mu.Unlock()
	client, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	c := &sshConn{client: client, sessions: 1, limit: sshSessionsPerConn}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	go s.watch(c)
	return c, nil
}

// watch forgets c once its connection ends, and probes it meanwhile so
// that a host that went away closes it.
func (s *Host) watch(c *sshConn) {
	ended := make(chan struct{})
	go func() {
		_ = c.client.Wait()
		close(ended)
	}()
	tick := time.NewTicker(sshKeepalive)
	defer tick.Stop()
	for {
		select {
		case <-ended:
			s.mu.Lock()
			c.dead = true
			for i, x := range s.conns {
				if x == c {
					s.conns = append(s.conns[:i:i], s.conns[i+1:]...)
					break
				}
			}
			s.mu.Unlock()
			return
		case <-tick.C:
			answered := make(chan error, 1)
			go func() {
				_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
				answered <- err
			}()
			select {
			case err := <-answered:
				if err != nil {
					c.client.Close()
				}
			case <-time.After(sshKeepalive):
				c.client.Close()
			case <-ended:
			}
		}
	}
}

// dial connects, retrying with backoff what may pass. Its failures are
// the host's (ErrHostDown): the pool counts them.
func (s *Host) dial(ctx context.Context) (*gossh.Client, error) {
	op := "connect to " + s.addr()
	cfg, err := s.clientConfig()
	if err != nil {
		return nil, s.infra(op, runner.HostDown(err))
	}
	attempts := s.ConnectAttempts
	if attempts <= 0 {
		attempts = DefaultConnectAttempts
	}
	backoff := s.ConnectBackoff
	if backoff <= 0 {
		backoff = DefaultConnectBackoff
	}
	for attempt := 1; ; attempt++ {
		client, err := s.dialOnce(ctx, cfg)
		if err == nil {
			return client, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if final(err) {
			return nil, s.infra(op, runner.HostDown(err))
		}
		if attempt >= attempts {
			return nil, s.infra(op, runner.HostDown(fmt.Errorf("%w (tried %d times)", err, attempt)))
		}
		s.logger().Warn("cannot connect to host; trying again", "host", s.Name(), "attempt", attempt, "wait", backoff, "error", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// final reports a failure to connect that trying again cannot mend: the
// host key or the client key refused.
func final(err error) bool {
	var hk *hostKeyError
	return errors.As(err, &hk) || strings.Contains(err.Error(), "unable to authenticate")
}

func (s *Host) dialOnce(ctx context.Context, cfg *gossh.ClientConfig) (*gossh.Client, error) {
	addr := s.addr()
	d := net.Dialer{Timeout: sshDialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	_ = conn.SetDeadline(time.Now().Add(sshDialTimeout))
	cfg = s.withKnownAlgorithms(cfg, addr, conn.RemoteAddr())
	c, chans, reqs, err := gossh.NewClientConn(conn, addr, cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return gossh.NewClient(c, chans, reqs), nil
}

// hostKeyError is a host key that known_hosts does not vouch for.
type hostKeyError struct {
	msg string
	err error
}

func (e *hostKeyError) Error() string { return e.msg }
func (e *hostKeyError) Unwrap() error { return e.err }

// clientConfig builds, once, how to authenticate and what host key to
// accept.
func (s *Host) clientConfig() (*gossh.ClientConfig, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.config != nil {
		return s.config, nil
	}
	name := s.User
	if name == "" {
		u, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("no user configured and the current one is unknown: %w", err)
		}
		name = u.Username
	}
	auth, err := s.auth()
	if err != nil {
		return nil, err
	}
	check, err := s.hostKeyCallback()
	if err != nil {
		return nil, err
	}
	s.config = &gossh.ClientConfig{User: name, Auth: []gossh.AuthMethod{auth}, HostKeyCallback: check, Timeout: sshDialTimeout}
	return s.config, nil
}

func (s *Host) auth() (gossh.AuthMethod, error) {
	if s.KeyFile != "" {
		data, err := os.ReadFile(s.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("read key_file: %w", err)
		}
		signer, err := gossh.ParsePrivateKey(data)
		var pass *gossh.PassphraseMissingError
		if errors.As(err, &pass) {
			return nil, fmt.Errorf("key_file %s is protected by a passphrase: add it to an SSH agent and leave key_file unset", s.KeyFile)
		}
		if err != nil {
			return nil, fmt.Errorf("key_file %s: %w", s.KeyFile, err)
		}
		return gossh.PublicKeys(signer), nil
	}
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, errors.New("no key_file configured and no SSH agent (SSH_AUTH_SOCK is unset)")
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("SSH agent at %s: %w", sock, err)
	}
	return gossh.PublicKeysCallback(agent.NewClient(conn).Signers), nil
}

func (s *Host) knownHosts() (string, error) {
	if s.KnownHosts != "" {
		return s.KnownHosts, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no known_hosts configured and no home directory: %w", err)
	}
	return filepath.Join(home, ".ssh", "known_hosts"), nil
}

// hostKeyCallback checks the host's key against known_hosts, with errors
// that say what to do.
func (s *Host) hostKeyCallback() (gossh.HostKeyCallback, error) {
	if s.InsecureIgnoreHostKey {
		return gossh.InsecureIgnoreHostKey(), nil //nolint:gosec // the configuration asked for it by name
	}
	file, err := s.knownHosts()
	if err != nil {
		return nil, err
	}
	check, err := knownhosts.New(file)
	if err != nil {
		return nil, fmt.Errorf("known_hosts: %w (or set insecure_ignore_host_key: true)", err)
	}
	return func(hostname string, remote net.Addr, key gossh.PublicKey) error {
		err := check(hostname, remote, key)
		var ke *knownhosts.KeyError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ke) && len(ke.Want) == 0:
			host, port, _ := net.SplitHostPort(hostname)
			return &hostKeyError{err: err, msg: fmt.Sprintf("the host key of %s is not in %s: add it (ssh-keyscan -p %s %s >> %s, after checking the key), or set insecure_ignore_host_key: true",
				hostname, file, port, host, file)}
		case errors.As(err, &ke):
			w := ke.Want[0]
			return &hostKeyError{err: err, msg: fmt.Sprintf("REFUSED: the host key of %s (%s %s) is not the one %s:%d knows: another machine answers at that address, or the host was reinstalled (then replace its line)",
				hostname, key.Type(), gossh.FingerprintSHA256(key), w.Filename, w.Line)}
		}
		return &hostKeyError{err: err, msg: fmt.Sprintf("host key of %s: %v", hostname, err)}
	}, nil
}

// withKnownAlgorithms has the server offer the key types known_hosts
// holds for addr, so a host with several keys is not refused for showing
// an unknown type first.
func (s *Host) withKnownAlgorithms(cfg *gossh.ClientConfig, addr string, remote net.Addr) *gossh.ClientConfig {
	if s.InsecureIgnoreHostKey {
		return cfg
	}
	file, err := s.knownHosts()
	if err != nil {
		return cfg
	}
	check, err := knownhosts.New(file)
	if err != nil {
		return cfg
	}
	pub, _, _ := ed25519.GenerateKey(nil)
	probe, err := gossh.NewPublicKey(pub)
	if err != nil {
		return cfg
	}
	var ke *knownhosts.KeyError
	if !errors.As(check(addr, remote, probe), &ke) || len(ke.Want) == 0 {
		return cfg
	}
	var algos []string
	for _, k := range ke.Want {
		switch t := k.Key.Type(); t {
		case gossh.KeyAlgoRSA:
			algos = append(algos, gossh.KeyAlgoRSASHA512, gossh.KeyAlgoRSASHA256, gossh.KeyAlgoRSA)
		default:
			algos = append(algos, t)
		}
	}
	c := *cfg
	c.HostKeyAlgorithms = algos
	return &c
}

// output runs script with /bin/sh on the host, stdin read from in (none
// when nil), and returns its standard output. A script that fails, or a
// host that cannot run it, is a *record.InfraError that quotes the
// script's standard error.
func (s *Host) output(ctx context.Context, op, script string, in io.Reader) ([]byte, error) {
	sess, done, err := s.session(ctx)
	if err != nil {
		return nil, withOp(err, op)
	}
	defer done()
	defer sess.Close()
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	if in != nil {
		sess.Stdin = in
	}
	ran := make(chan error, 1)
	go func() { ran <- sess.Run(remoteShell(script)) }()
	select {
	case err = <-ran:
	case <-ctx.Done():
		sess.Close()
		<-ran
		return nil, ctx.Err()
	}
	if err != nil {
		return stdout.Bytes(), s.infra(op, scriptError(err, stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

// withOp names op in an *record.InfraError from connecting.
func withOp(err error, op string) error {
	var ie *record.InfraError
	if errors.As(err, &ie) {
		ie.Op = op + ": " + ie.Op
	}
	return err
}

// scriptError says why a remote script failed: its exit status and
// standard error, or a connection that ended without one (the host's
// failure, ErrHostDown).
func scriptError(err error, stderr []byte) error {
	msg := proc.Clip(strings.TrimSpace(strings.ToValidUTF8(string(stderr), "\uFFFD")), 500)
	var exit *gossh.ExitError
	var missing *gossh.ExitMissingError
	switch {
	case errors.As(err, &exit) && msg != "":
		return fmt.Errorf("exit status %d: %s", exit.ExitStatus(), msg)
	case errors.As(err, &exit):
		return fmt.Errorf("exit status %d", exit.ExitStatus())
	case errors.As(err, &missing), errors.Is(err, io.EOF):
		return runner.HostDown(errors.New("the connection dropped"))
	}
	return err
}

// remoteShell is the command line that runs script with /bin/sh whatever
// the user's login shell.
func remoteShell(script string) string {
	return "exec /bin/sh -c " + proc.ShellQuote(script)
}
