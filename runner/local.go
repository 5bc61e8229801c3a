package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/internal/lockfile"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner/internal/proc"
)

// DefaultOutputCap bounds the output a Local host keeps of one command,
// in memory, while the command writes it; the rest is never stored.
const DefaultOutputCap = 1 << 20

// Local is this machine as a host. Its trees are worktrees of the clone
// Repo, numbered FirstTree, FirstTree+1, … (slot by slot); the scratch
// directory of tree N is Workdir/scratch/N. Local hosts that share a
// clone must take disjoint tree numbers. A zero Local runs commands but
// cannot materialize.
//
// A lease locks its tree's worktree (gitops.Repo.LockSlot): another
// perfbot process on the same workdir, whatever its configuration, waits
// for the tree up to LockWait and then fails naming the holder. Every run
// verifies that its tree still is its target (Verify).
//
// Commands inherit perfbot's environment less its own credentials
// (DefaultWithheld and Withheld), plus their Command.Env.
//
// Each command runs in its own process group. When the script ends,
// times out or is cancelled, the whole group is killed: a benchmark's
// background server must not outlive its step and skew the next
// measurement. A process that leaves the group (setsid, a daemon that
// double-forks into a new session) escapes this.
//
// Should perfbot itself die (SIGKILL, OOM), every process the command
// started dies at once, its grandchildren and the processes that left its
// group included: on Linux the shell runs under a supervisor, a
// re-executed perfbot that is a child subreaper and kills them all when
// perfbot goes (proc.Supervise). What is left all the same (on other
// systems, or a supervisor killed with perfbot) is killed by the next
// perfbot process that locks the tree: the group is recorded in the
// tree's scratch directory while the command runs, with a mark in its
// processes' environment (PERFBOT_RUN) so that a group that reused the
// number is left alone. Locking a tree also empties its scratch directory.
type Local struct {
	// HostName is the configured name; "local" when empty.
	HostName string
	// Repo is the clone trees are checked out from.
	Repo *gitops.Repo
	// Workdir is perfbot's directory on this machine; scratch files go
	// under it.
	Workdir string
	// Slots is the number of targets measured at once; 1 when zero. More
	// than one makes benchmarks share the machine.
	Slots int
	// Trees is the number of trees each slot keeps; DefaultTrees when
	// zero.
	Trees int
	// FirstTree is the number of the host's first worktree in Repo.
	FirstTree int
	// OutputCap bounds the output kept of one command; DefaultOutputCap
	// when zero.
	OutputCap int
	// LockWait is how long a lease waits for a tree that another process
	// holds; DefaultLockWait when zero, no wait when negative.
	LockWait time.Duration
	// Logger is told when a lease waits for another process; nil
	// discards it.
	Logger *slog.Logger
	// Withheld lists names or path.Match globs of variables of perfbot's
	// own environment that no command receives, besides DefaultWithheld:
	// perfbot's credentials (the variable github.token_env names). A
	// command's own Env is given whatever its names.
	Withheld []string

	mu    sync.Mutex
	facts *record.Fingerprint
}

var _ Host = (*Local)(nil)

// DefaultWithheld are the variables of perfbot's environment that no
// build, benchmark or server process receives: perfbot's own GitHub token
// and its own settings and credentials (PERFBOT_*). A benchmark that
// prints its environment must not put them in a log or an issue; the
// variables a benchmark needs (HF_TOKEN, NCCL_*) are passed on.
var DefaultWithheld = []string{"GITHUB_TOKEN", "GH_TOKEN", "PERFBOT_*"}

// DefaultLockWait is how long a Local lease waits for a tree that another
// perfbot process measures in: a build and a few benchmark runs.
const DefaultLockWait = 10 * time.Minute

// Name returns the configured host name.
func (l *Local) Name() string {
	if l.HostName == "" {
		return "local"
	}
	return l.HostName
}

// Layout returns the configured slots and trees, defaulted.
func (l *Local) Layout() Layout {
	lay := Layout{Slots: l.Slots, Trees: l.Trees}
	if lay.Slots <= 0 {
		lay.Slots = 1
	}
	if lay.Trees <= 0 {
		lay.Trees = DefaultTrees
	}
	return lay
}

// Materialize checks src out into the host's worktree for (slot, tree):
// the commit, forced and cleaned, with the hunks applied. A hunk that
// does not apply is a *gitops.ApplyError; every other failure is the
// host's.
func (l *Local) Materialize(ctx context.Context, slot, tree int, src Source) (Workspace, error) {
	t := src.Target
	lay := l.Layout()
	if slot < 0 || slot >= lay.Slots || tree < 0 || tree >= lay.Trees {
		return Workspace{}, fmt.Errorf("materialize %s: no tree %d in slot %d of host %s", t.Short(), tree, slot, l.Name())
	}
	if l.Repo == nil || l.Workdir == "" {
		return Workspace{}, fmt.Errorf("materialize %s: host %s has no repository or workdir", t.Short(), l.Name())
	}
	op := "check out " + t.Short()
	n := l.treeNumber(slot, tree)
	scratch := l.scratch(n)
	if err := privateScratch(scratch); err != nil {
		return Workspace{}, l.infra("create scratch directory", err)
	}
	var dir string
	var err error
	switch {
	case len(t.Hunks) == 0:
		dir, err = l.Repo.Checkout(ctx, n, t.Commit)
	case src.Patch == nil:
		return Workspace{}, fmt.Errorf("materialize %s: the hunks of patch %s are not given", t.Short(), t.Patch)
	default:
		dir, err = l.Repo.CheckoutPatch(ctx, n, src.Patch, t.Hunks)
	}
	var ae *gitops.ApplyError
	switch {
	case errors.As(err, &ae):
		return Workspace{}, err
	case err != nil:
		return Workspace{}, l.infra(op, err)
	}
	stamp, err := l.Repo.CheckoutID(n)
	if err != nil {
		return Workspace{}, l.infra(op, err)
	}
	return Workspace{Dir: dir, Scratch: scratch, Stamp: stamp}, nil
}

// treeNumber is the worktree of the clone that holds tree of slot.
func (l *Local) treeNumber(slot, tree int) int {
	return l.FirstTree + slot*l.Layout().Trees + tree
}

func (l *Local) scratch(n int) string {
	return filepath.Join(l.Workdir, "scratch", strconv.Itoa(n))
}

// Lock takes the worktree of (slot, tree) with gitops.Repo.LockSlot, then
// kills what a perfbot that died while it held the tree left running there
// and empties the tree's scratch directory. A Local without a clone has no
// trees to lock.
func (l *Local) Lock(ctx context.Context, slot, tree int) (func(), error) {
	if l.Repo == nil {
		return func() {}, nil
	}
	n := l.treeNumber(slot, tree)
	wait := l.LockWait
	if wait == 0 {
		wait = DefaultLockWait
	}
	onWait := func(h lockfile.Holder) {
		l.logger().Info("waiting for a tree another process measures in", "host", l.Name(), "slot", slot, "tree", n, "holder", h.String())
	}
	lock, err := l.Repo.LockSlot(ctx, n, wait, onWait)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, l.infra(fmt.Sprintf("lock tree %d", n), err)
	}
	if err := l.reapScratch(l.scratch(n)); err != nil {
		lock.Release()
		return nil, l.infra("clean scratch directory", err)
	}
	return lock.Release, nil
}

// Verify checks the worktree with gitops.Repo.VerifySlot.
func (l *Local) Verify(ctx context.Context, slot, tree int, ws Workspace, src Source) error {
	t := src.Target
	if l.Repo == nil {
		return fmt.Errorf("verify %s: host %s has no repository", t.Short(), l.Name())
	}
	err := l.Repo.VerifySlot(ctx, l.treeNumber(slot, tree), ws.Stamp, t.Commit, src.Patch, t.Hunks)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, gitops.ErrSlotChanged):
		err = fmt.Errorf("%w: %w", ErrTreeChanged, err)
	}
	return l.infra("verify tree of "+t.Short(), err)
}

func (l *Local) logger() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}

// Exec runs cmd.Script with sh -c. Every slot of a local host is this
// machine.
func (l *Local) Exec(ctx context.Context, slot int, cmd Command) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := proc.CheckDir(cmd.Dir); err != nil {
		return Result{}, l.infra("open working directory", err)
	}
	// Output goes through a pipe into a capture that keeps its head and
	// tail as it is written: a benchmark printing without end costs
	// neither disk nor more than the cap of memory.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, l.infra("create output pipe", err)
	}
	defer pr.Close()
	defer pw.Close()

	// A dump left by an earlier command must not pass for this one's; a
	// relative path would follow the script's cd.
	if cmd.EnvFile != "" {
		abs, err := filepath.Abs(cmd.EnvFile)
		if err != nil {
			return Result{}, l.infra("locate environment dump", err)
		}
		cmd.EnvFile = abs
		if err := os.Remove(cmd.EnvFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return Result{}, l.infra("remove old environment dump", err)
		}
	}
	c, mark, err := l.shell(proc.WithEnvDump(cmd.Script, cmd.EnvFile), cmd, pw)
	if err != nil {
		return Result{}, l.infra("start shell", err)
	}

	started := time.Now()
	if err := c.Start(); err != nil {
		return Result{}, l.infra("start shell", err)
	}
	pw.Close() // the shell holds its own copy
	out := proc.NewCapture(l.outputCap())
	drained := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, pr)
		close(drained)
	}()
	forget, err := recordGroup(cmd.Scratch, proc.GroupFile, c.Process.Pid, mark)
	if err != nil {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
		return Result{}, l.infra("record process group", err)
	}
	res, waitErr := l.wait(ctx, c, cmd.Timeout)
	forget()
	res.Duration = time.Since(started)

	// The group is dead; only a process that left it can still hold the
	// pipe, and its output is not the command's.
	select {
	case <-drained:
	case <-time.After(proc.OutputDrainWait):
		pr.Close()
		<-drained
	}
	res.Output, res.Truncated = out.Bytes()
	if cmd.EnvFile != "" {
		res.Env = proc.TakeEnvFile(cmd.EnvFile)
	}
	if waitErr != nil {
		return res, fmt.Errorf("run %q: %w", proc.FirstLine(cmd.Script), waitErr)
	}
	return res, nil
}

// shell is the process that runs script for cmd on this machine: sh -c in
// cmd.Dir, with this machine's environment less the withheld variables and
// plus cmd.Env, stdout and stderr to out, in a process group of its own
// under a supervisor that kills all it started should perfbot die
// (proc.Supervise), its environment marked (the mark is returned) so that
// the group can be told apart later from another that reuses its id.
func (l *Local) shell(script string, cmd Command, out *os.File) (*exec.Cmd, string, error) {
	c := exec.Command("/bin/sh", "-c", script)
	c.Dir = cmd.Dir
	mark := proc.RunMark + "=" + proc.NewMark()
	c.Env = append(proc.MergeEnv(withhold(os.Environ(), l.Withheld), cmd.Env), mark)
	c.Stdout, c.Stderr = out, out
	return c, mark, proc.Supervise(c)
}

// serverGroupsFile, beside proc.GroupFile, names the process group of the
// server a benchmark step runs against.
const serverGroupsFile = "server"

// recordGroup writes pgid and its mark to scratch's file name and returns
// what removes it. Without a scratch directory nothing is recorded.
func recordGroup(scratch, name string, pgid int, mark string) (func(), error) {
	if scratch == "" {
		return func() {}, nil
	}
	path := filepath.Join(scratch, name)
	if err := os.WriteFile(path, []byte(strconv.Itoa(pgid)+" "+mark+"\n"), 0o600); err != nil {
		return nil, err
	}
	return func() { os.Remove(path) }, nil
}

// reapScratch kills the process groups a dead perfbot left recorded in
// scratch (a command's and a server's), then empties scratch: its dumps
// and captured output belong to no one any more. The caller holds the
// tree's lock.
func (l *Local) reapScratch(scratch string) error {
	for _, name := range []string{proc.GroupFile, serverGroupsFile} {
		data, err := os.ReadFile(filepath.Join(scratch, name))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) == 2 {
			if pgid, err := strconv.Atoi(f[0]); err == nil && proc.ReapGroup(pgid, f[1]) {
				l.logger().Warn("killed the processes of a command whose perfbot died", "host", l.Name(), "pgid", pgid, "record", name)
			}
		}
	}
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	return privateScratch(scratch)
}

// privateScratch creates a tree's scratch directory, it and the directory
// of all of them readable by perfbot's user only: they hold environment
// dumps and captured output, tokens included.
func privateScratch(scratch string) error {
	if err := proc.PrivateDir(filepath.Dir(scratch)); err != nil {
		return err
	}
	return proc.PrivateDir(scratch)
}

// wait waits for the shell started by c to exit, for the timeout or for
// ctx, then kills what is left of its process group and reaps the shell.
// Its error is ctx's when ctx ended the command.
func (l *Local) wait(ctx context.Context, c *exec.Cmd, timeout time.Duration) (Result, error) {
	pgid := c.Process.Pid
	exited, reap := proc.AwaitShell(c)
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	var res Result
	var ctxErr error
	select {
	case <-exited:
	case <-expired:
		res.TimedOut = true
	case <-ctx.Done():
		ctxErr = ctx.Err()
	}
	// On Linux the shell is not reaped yet (proc.AwaitShell leaves it a
	// zombie), so its pid still names the group and cannot have been
	// reused.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-exited
	err := reap()
	proc.WaitGroupGone(pgid, proc.GroupExitWait)

	switch {
	case res.TimedOut || ctxErr != nil:
		res.ExitCode = -1
	case err == nil:
	default:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return res, l.infra("wait for shell", err)
		}
		res.ExitCode = proc.ExitCode(exit.ProcessState)
	}
	return res, ctxErr
}

func (l *Local) infra(op string, err error) *record.InfraError {
	return &record.InfraError{Host: l.Name(), Op: op, Err: err}
}

func (l *Local) outputCap() int {
	if l.OutputCap > 0 {
		return l.OutputCap
	}
	return DefaultOutputCap
}

// withhold returns environ (KEY=VALUE entries) without the variables
// DefaultWithheld and extra name.
func withhold(environ, extra []string) []string {
	return proc.Withhold(environ, slices.Concat(DefaultWithheld, extra))
}
