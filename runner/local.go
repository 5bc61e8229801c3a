package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/internal/lockfile"
	"github.com/perfbot/perfbot/record"
)

// DefaultOutputCap bounds the output a Local host keeps of one command,
// in memory, while the command writes it; the rest is never stored.
const DefaultOutputCap = 1 << 20

// groupExitWait bounds how long Exec waits for a killed process group to
// disappear. SIGKILLed processes go in milliseconds unless they sleep in
// the kernel (a GPU driver call); waiting lets the next run start with the
// GPU memory freed.
const groupExitWait = 10 * time.Second

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
// Should perfbot itself die (SIGKILL, OOM), the kernel kills the shell
// (a parent-death signal, on Linux), and the rest of its group is killed
// by the next perfbot process that locks the tree: the group is recorded
// in the tree's scratch directory while the command runs, with a mark in
// its processes' environment (PERFBOT_RUN) so that a group that reused the
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
	if err := os.MkdirAll(scratch, 0o755); err != nil {
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
	if err := checkDir(cmd.Dir); err != nil {
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
	c, mark := l.shell(withEnvDump(cmd.Script, cmd.EnvFile), cmd, pw)

	started := time.Now()
	if err := c.Start(); err != nil {
		return Result{}, l.infra("start shell", err)
	}
	pw.Close() // the shell holds its own copy
	out := newCapture(l.outputCap())
	drained := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, pr)
		close(drained)
	}()
	forget, err := recordGroup(cmd.Scratch, groupsFile, c.Process.Pid, mark)
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
	case <-time.After(outputDrainWait):
		pr.Close()
		<-drained
	}
	res.Output, res.Truncated = out.bytes()
	if cmd.EnvFile != "" {
		res.Env = readEnvFile(cmd.EnvFile)
	}
	if waitErr != nil {
		return res, fmt.Errorf("run %q: %w", firstLine(cmd.Script), waitErr)
	}
	return res, nil
}

// checkDir returns why dir cannot be a command's working directory, or
// nil; an empty dir is the process's own.
func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	return err
}

// shell is the process that runs script for cmd on this machine: sh -c in
// cmd.Dir, with this machine's environment less the withheld variables and
// plus cmd.Env, stdout and stderr to out, in a process group of its own,
// its environment marked (the mark is returned) so that the group can be
// told apart later from another that reuses its id.
func (l *Local) shell(script string, cmd Command, out *os.File) (*exec.Cmd, string) {
	c := exec.Command("/bin/sh", "-c", script)
	c.Dir = cmd.Dir
	mark := envRunMark + "=" + newMark()
	c.Env = append(mergeEnv(withhold(os.Environ(), l.Withheld), cmd.Env), mark)
	c.Stdout, c.Stderr = out, out
	c.SysProcAttr = sysProcAttr()
	return c, mark
}

// envRunMark marks the environment of every process a command starts, so
// that a later perfbot can tell the command's process group from another
// that took its number.
const envRunMark = "PERFBOT_RUN"

// groupsFile, in a tree's scratch directory, names the process group of
// the command running there and its mark: what the next process to lock
// the tree kills when perfbot died before the command ended.
const groupsFile = "running"

func newMark() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// serverGroupsFile, beside groupsFile, names the process group of the
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
	for _, name := range []string{groupsFile, serverGroupsFile} {
		data, err := os.ReadFile(filepath.Join(scratch, name))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) == 2 {
			if pgid, err := strconv.Atoi(f[0]); err == nil && reapGroup(pgid, f[1]) {
				l.logger().Warn("killed the processes of a command whose perfbot died", "host", l.Name(), "pgid", pgid, "record", name)
			}
		}
	}
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	return os.MkdirAll(scratch, 0o755)
}

// wait waits for the shell started by c to exit, for the timeout or for
// ctx, then kills what is left of its process group and reaps the shell.
// Its error is ctx's when ctx ended the command.
func (l *Local) wait(ctx context.Context, c *exec.Cmd, timeout time.Duration) (Result, error) {
	pgid := c.Process.Pid
	exited, reap := awaitShell(c)
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
	// On Linux the shell is not reaped yet (awaitShell leaves it a
	// zombie), so its pid still names the group and cannot have been
	// reused.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-exited
	err := reap()
	waitGroupGone(pgid, groupExitWait)

	switch {
	case res.TimedOut || ctxErr != nil:
		res.ExitCode = -1
	case err == nil:
	default:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return res, l.infra("wait for shell", err)
		}
		res.ExitCode = exitCode(exit.ProcessState)
	}
	return res, ctxErr
}

func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
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

// withEnvDump makes script write its exported environment to envFile
// when it exits (an EXIT trap), so that what the script exported itself
// (export NCCL_ALGO=Tree; ./bench) is recorded as what its benchmark saw.
// The environment is also written before the script runs, for a script
// that replaces its shell (exec ./bench, whose environment is then the
// shell's at the start unless the script exported more) or its trap, or
// that is killed. env -0 is tried first; /proc/self/environ of cat covers
// an env without -0.
func withEnvDump(script, envFile string) string {
	if envFile == "" {
		return script
	}
	q := shellQuote(envFile)
	dump := "{ env -0 > " + q + " || cat /proc/self/environ > " + q + "; } 2> /dev/null"
	return "trap " + shellQuote(dump) + " EXIT\n" + dump + "\n" + script
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readEnvFile parses a NUL-separated environment dump.
func readEnvFile(path string) map[string]string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parseEnvDump(data)
}

// parseEnvDump parses what env -0 writes; nil when data is empty.
func parseEnvDump(data []byte) map[string]string {
	if len(data) == 0 {
		return nil
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok && k != "" {
			env[k] = v
		}
	}
	return env
}

// withhold returns environ (KEY=VALUE entries) without the variables
// DefaultWithheld and extra name.
func withhold(environ, extra []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !matchesAny(k, DefaultWithheld) && !matchesAny(k, extra) {
			out = append(out, kv)
		}
	}
	return out
}

func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// mergeEnv returns base (KEY=VALUE entries) with over applied, in a
// stable order.
func mergeEnv(base []string, over map[string]string) []string {
	if len(over) == 0 {
		return base
	}
	env := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := over[k]; !ok {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+over[k])
	}
	return env
}

// outputDrainWait bounds how long Exec reads a command's output after
// its process group is gone, for a process that escaped the group and
// holds the pipe.
const outputDrainWait = time.Second

// capture keeps the head and tail of what is written to it, within limit
// bytes: the head says what ran, the tail how it ended and, for most
// benchmarks, the results.
type capture struct {
	head  []byte // the first half of the limit
	tail  []byte // a ring of the rest
	next  int    // where the ring is written next
	full  bool   // the ring has wrapped
	total int64
}

func newCapture(limit int) *capture {
	half := limit / 2
	return &capture{head: make([]byte, 0, half), tail: make([]byte, limit-half)}
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := cap(c.head) - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(c.tail) == 0 {
		return n, nil
	}
	if len(p) >= len(c.tail) {
		copy(c.tail, p[len(p)-len(c.tail):])
		c.next, c.full = 0, true
		return n, nil
	}
	k := copy(c.tail[c.next:], p)
	if k < len(p) {
		copy(c.tail, p[k:])
		c.full = true
	}
	c.next = (c.next + len(p)) % len(c.tail)
	if c.next == 0 && len(p) > 0 {
		c.full = true
	}
	return n, nil
}

// bytes returns what was kept, with a line that says how much of the
// middle was omitted, and whether anything was.
func (c *capture) bytes() ([]byte, bool) {
	var tail []byte
	if c.full {
		tail = append(append(tail, c.tail[c.next:]...), c.tail[:c.next]...)
	} else {
		tail = c.tail[:c.next]
	}
	omitted := c.total - int64(len(c.head)) - int64(len(tail))
	out := append([]byte(nil), c.head...)
	if omitted > 0 {
		out = append(out, fmt.Sprintf("\n[perfbot: %d bytes of output omitted]\n", omitted)...)
	}
	return append(out, tail...), omitted > 0
}

// firstLine names a script in error messages.
func firstLine(script string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(script), "\n")
	return clip(line, 60)
}

// clip shortens s to about n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
