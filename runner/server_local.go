package runner

import (
	"context"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/perfbot/perfbot/runner/internal/proc"
)

var _ ServerHost = (*Local)(nil)

// StartServer starts cmd.Script with sh -c in a process group of its own,
// as Exec does (the same environment, the supervisor that kills it when
// perfbot dies, the group recorded in cmd.Scratch for the next perfbot to
// reap), and returns while it runs, keeping the head and tail of its
// output within logCap bytes (the host's output cap when zero).
// cmd.Timeout and cmd.EnvFile are not used: the server runs until Stop.
func (l *Local) StartServer(ctx context.Context, slot int, cmd Command, logCap int) (Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := proc.CheckDir(cmd.Dir); err != nil {
		return nil, l.infra("open the server's working directory", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, l.infra("create server output pipe", err)
	}
	c, mark, err := l.shell(cmd.Script, cmd, pw)
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, l.infra("start server", err)
	}
	started := time.Now()
	if err := c.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, l.infra("start server", err)
	}
	pw.Close()
	limit := logCap
	if limit <= 0 {
		limit = l.outputCap()
	}
	s := &localServer{cmd: c, pgid: c.Process.Pid, started: started, pipe: pr, out: proc.NewCapture(limit), drained: make(chan struct{})}
	go func() {
		_, _ = io.Copy(lockedWriter{&s.mu, s.out}, pr)
		close(s.drained)
	}()
	s.exited, s.reap = proc.AwaitShell(c)
	s.forget, err = recordGroup(cmd.Scratch, serverGroupsFile, s.pgid, mark)
	if err != nil {
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
		<-s.exited
		_ = s.reap()
		pr.Close()
		return nil, l.infra("record server process group", err)
	}
	return s, nil
}

// localServer is a server Local started.
type localServer struct {
	cmd     *exec.Cmd
	pgid    int
	started time.Time
	pipe    *os.File
	exited  <-chan struct{}
	reap    func() error
	forget  func()
	drained chan struct{}

	mu  sync.Mutex
	out *proc.Capture

	once sync.Once
	res  Result
}

// lockedWriter serializes writes to a capture read while it is written.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (s *localServer) Exited() <-chan struct{} { return s.exited }

func (s *localServer) Output() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, _ := s.out.Bytes()
	return out
}

// Stop sends SIGTERM to the server's group, and SIGKILL to what is left
// of it after grace; it returns when no live process is left in the group
// (or proc.GroupExitWait passed), with the server's output and exit status.
func (s *localServer) Stop(grace time.Duration) Result {
	s.once.Do(func() {
		// The shell is not reaped before the kill, so its pid still names
		// the group (see proc.AwaitShell).
		_ = syscall.Kill(-s.pgid, syscall.SIGTERM)
		proc.WaitGroupGone(s.pgid, grace)
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
		<-s.exited
		err := s.reap()
		proc.WaitGroupGone(s.pgid, proc.GroupExitWait)
		s.forget()
		select {
		case <-s.drained:
		case <-time.After(proc.OutputDrainWait):
			s.pipe.Close()
			<-s.drained
		}
		s.pipe.Close()
		s.res.Duration = time.Since(s.started)
		s.mu.Lock()
		s.res.Output, s.res.Truncated = s.out.Bytes()
		s.mu.Unlock()
		if err == nil {
			s.res.ExitCode = 0
		} else if exit, ok := err.(*exec.ExitError); ok {
			s.res.ExitCode = proc.ExitCode(exit.ProcessState)
		} else {
			s.res.ExitCode = -1
		}
	})
	return s.res
}
