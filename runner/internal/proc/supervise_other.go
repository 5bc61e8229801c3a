//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
)

// Supervise starts c in a process group of its own. Without a child
// subreaper and a parent-death signal there is no supervisor: what c
// starts outlives a killed perfbot, and the next perfbot that locks the
// tree reaps what its group left.
func Supervise(c *exec.Cmd, onDrop ...string) error {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return nil
}
