package proc

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ReapGroup kills process group pgid when one of its live members has
// mark (NAME=value) in its environment, and waits for the group to go. The
// mark makes sure the group is the one perfbot started, not a later one
// that reuses the number. It reports whether it killed anything.
func ReapGroup(pgid int, mark string) bool {
	if pgid <= 1 || !groupMarked(pgid, mark) {
		return false
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	WaitGroupGone(pgid, GroupExitWait)
	return true
}

func groupMarked(pgid int, mark string) bool {
	for _, pid := range pids() {
		st, ok := stat(pid)
		if !ok || st.pgrp != pgid || !st.live() {
			continue
		}
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if string(kv) == mark {
				return true
			}
		}
	}
	return false
}

// AwaitShell returns a channel closed when the shell started by c has
// exited, and the function that then reaps it. The shell is not reaped
// before that function is called: as long as the zombie exists its pid
// still names its process group, so killing the group cannot hit an
// unrelated one that reuses the number.
func AwaitShell(c *exec.Cmd) (<-chan struct{}, func() error) {
	exited := make(chan struct{})
	go func() {
		waitExited(c.Process.Pid)
		close(exited)
	}()
	return exited, c.Wait
}

// waitExited blocks until process pid has exited, without reaping it.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}

// WaitGroupGone waits, at most max, until no live process is left in
// process group pgid. Zombies do not count: a killed background process
// is re-parented to init, which may reap it late (or never, in some
// containers), and it holds no memory or GPU any more.
func WaitGroupGone(pgid int, max time.Duration) {
	deadline := time.Now().Add(max)
	for groupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// groupAlive reports whether process group pgid has a member that is not
// a zombie.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	all := pids()
	if all == nil {
		return true // kill says the group exists; trust it
	}
	for _, pid := range all {
		if st, ok := stat(pid); ok && st.pgrp == pgid && st.live() {
			return true
		}
	}
	return false
}

// status is what /proc/PID/stat says of a process.
type status struct {
	state      string // R, S, D, Z (a zombie), X (dead), …
	ppid, pgrp int
}

// live reports a process that is neither a zombie nor dead.
func (s status) live() bool { return s.state != "Z" && s.state != "X" }

// stat reads /proc/pid/stat.
func stat(pid int) (status, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return status{}, false
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// the fields after the last ')' are "state ppid pgrp ...".
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return status{}, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 3 {
		return status{}, false
	}
	ppid, err1 := strconv.Atoi(fields[1])
	pgrp, err2 := strconv.Atoi(fields[2])
	return status{state: fields[0], ppid: ppid, pgrp: pgrp}, err1 == nil && err2 == nil
}

// pids lists the processes /proc shows.
func pids() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
