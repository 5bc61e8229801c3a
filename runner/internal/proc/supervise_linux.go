package proc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A step's shell (or the srun that runs it on a cluster) does not run as
// perfbot's child but under a supervisor: perfbot itself, started again
// with superviseArg, which runs the command and relays its exit status.
// It exists for the moment perfbot dies, however it dies (SIGKILL, the
// OOM killer): the kernel's parent-death signal reaches only a direct
// child, and a process group outlives its leader, so a benchmark's
// grandchild (`sleep 987; python3 bench.py` → its sleep) would run on,
// reparented to init, holding a GPU until the next perfbot reaped it.
//
// The supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER): every
// process the command starts and orphans, in its process group or out of
// it (setsid, a daemon that double-forks), is reparented to it rather than
// to init. It learns that perfbot is gone when its end of the lifeline, a
// pipe whose only writer is perfbot, reads end of file, which the kernel
// makes happen as perfbot's files close at its death; a parent-death
// signal (SIGTERM, checked against its parent's pid, since perfbot itself
// sends SIGTERM to a server's group) is the second way to hear it. It then
// runs the command's drop command (scancel, for a Slurm job), kills every
// descendant it has with SIGKILL until none is left, and exits.
//
// While perfbot lives the supervisor changes nothing a step sees: it
// shares the command's process group (perfbot kills the group as before,
// the supervisor with it), passes on the command's environment, working
// directory and standard files, and exits with the command's status (128+n
// for a command that signal n ended).

// superviseArg is the first argument of a supervisor, and superviseEnv
// the variable that is set in its environment: both say that this process
// is a supervisor, not perfbot; the command does not see the variable.
const (
	superviseArg = "-perfbot-supervise"
	superviseEnv = "PERFBOT_SUPERVISOR"
)

// dropWait bounds the drop command, and killWait the killing of the
// descendants, once perfbot is gone.
const (
	dropWait = 30 * time.Second
	killWait = 10 * time.Second
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == superviseArg && os.Getenv(superviseEnv) == "1" {
		os.Exit(supervise(os.Args[2:]))
	}
}

// lifeline is the pipe whose end tells supervisors that perfbot is gone:
// perfbot holds the writing end until it exits and never writes.
var lifeline struct {
	once sync.Once
	// r is passed to every supervisor; w stays open, and referenced (a
	// collected *os.File closes its descriptor), for perfbot's life.
	r, w *os.File
	err  error
}

// Supervise makes c run under a supervisor, started from this program's
// executable (/proc/self/exe, which works even when the file was replaced
// or removed since perfbot started), in a process group of its own. When
// perfbot dies, the supervisor runs onDrop (a command and its arguments;
// none when empty) and kills every process that c started. c must not be
// started yet; its Path, Args, Env, Dir and standard files are kept, its
// SysProcAttr and ExtraFiles replaced.
func Supervise(c *exec.Cmd, onDrop ...string) error {
	lifeline.once.Do(func() { lifeline.r, lifeline.w, lifeline.err = os.Pipe() })
	if lifeline.err != nil {
		return fmt.Errorf("create the supervisors' lifeline: %w", lifeline.err)
	}
	if c.Err != nil {
		return c.Err
	}
	args := []string{"perfbot-supervisor", superviseArg, strconv.Itoa(len(onDrop))}
	args = append(append(append(args, onDrop...), c.Path), c.Args...)
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	c.Path, c.Args = "/proc/self/exe", args
	c.Env = append(env[:len(env):len(env)], superviseEnv+"=1")
	c.ExtraFiles = []*os.File{lifeline.r}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return nil
}

// supervise runs the command that args name (the drop command's length,
// the drop command, the command's path and its arguments) and returns
// the status to exit with.
func supervise(args []string) int {
	drop, path, argv, err := parseSupervised(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfbot supervisor:", err)
		return 127
	}
	os.Unsetenv(superviseEnv)
	parent := os.Getppid()
	syscall.CloseOnExec(3)
	line := os.NewFile(3, "lifeline")
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "perfbot supervisor: become a subreaper:", err)
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)

	cmd, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		// Should the supervisor itself be killed (SIGKILL to the group),
		// the command goes too.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfbot supervisor:", err)
		return 127
	}
	exited := make(chan int, 1)
	go reapAll(cmd.Pid, exited)
	dropped := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, line)
		close(dropped)
	}()
	for {
		select {
		case code := <-exited:
			return code
		case <-dropped:
			return abandon(drop)
		case <-signals:
			// perfbot sends SIGTERM to a server's group, the supervisor's
			// too: only a parent that is gone ends the command here.
			if os.Getppid() != parent {
				return abandon(drop)
			}
		}
	}
}

// parseSupervised splits a supervisor's arguments.
func parseSupervised(args []string) (drop []string, path string, argv []string, err error) {
	if len(args) == 0 {
		return nil, "", nil, fmt.Errorf("no arguments")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 || len(args) < 1+n+2 {
		return nil, "", nil, fmt.Errorf("bad arguments %q", args)
	}
	return args[1 : 1+n], args[1+n], args[2+n:], nil
}

// reapAll reaps every child of the supervisor, the command's orphans
// included, and sends the command's exit status on exited.
func reapAll(pid int, exited chan<- int) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			// No child is left: the command was reaped already.
			time.Sleep(10 * time.Millisecond)
			continue
		case got != pid:
			continue
		case ws.Signaled():
			exited <- 128 + int(ws.Signal())
		default:
			exited <- ws.ExitStatus()
		}
	}
}

// abandon is what a supervisor does when perfbot is gone: it runs the
// drop command, kills every descendant and returns the status to exit
// with.
func abandon(drop []string) int {
	if len(drop) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), dropWait)
		c := exec.CommandContext(ctx, drop[0], drop[1:]...)
		c.Stdout, c.Stderr = io.Discard, io.Discard
		_ = c.Run()
		cancel()
	}
	killDescendants(os.Getpid(), killWait)
	return 128 + int(syscall.SIGKILL)
}

// killDescendants sends SIGKILL to every live descendant of pid until
// none is left or max has passed. A process whose parent is killed is
// reparented to pid, a subreaper, and found at the next round.
func killDescendants(pid int, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		live := descendants(pid)
		if len(live) == 0 {
			return
		}
		for _, p := range live {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// descendants lists the live processes below pid.
func descendants(pid int) []int {
	children := map[int][]int{}
	for _, p := range pids() {
		if st, ok := stat(p); ok && st.live() {
			children[st.ppid] = append(children[st.ppid], p)
		}
	}
	var out []int
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out
}
