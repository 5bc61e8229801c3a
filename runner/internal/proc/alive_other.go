//go:build unix && !linux

package proc

import "syscall"

// Alive reports whether pid still exists (zombies included: without /proc
// they cannot be told apart).
func Alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}
