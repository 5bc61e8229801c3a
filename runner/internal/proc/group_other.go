//go:build unix && !linux

package proc

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// ReapGroup cannot tell perfbot's process groups from others without
// /proc, so it kills nothing.
func ReapGroup(pgid int, mark string) bool { return false }

// AwaitShell returns a channel closed when the shell started by c has
// exited and been reaped, and the function that returns the result.
// Without waitid(WNOWAIT) the shell is reaped before its group is killed;
// pids are allocated cyclically, so the group id is not reused in that
// moment in practice, but Linux avoids even that.
func AwaitShell(c *exec.Cmd) (<-chan struct{}, func() error) {
	exited := make(chan struct{})
	var err error
	go func() {
		err = c.Wait()
		close(exited)
	}()
	return exited, func() error {
		<-exited
		return err
	}
}

// WaitGroupGone waits, at most max, until process group pgid is empty.
func WaitGroupGone(pgid int, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
