//go:build unix && !linux

package runner

import (
	"syscall"
	"testing"
)

// alive reports whether pid still exists (zombies included: without /proc
// they cannot be told apart).
func alive(t *testing.T, pid int) bool {
	t.Helper()
	return syscall.Kill(pid, 0) == nil
}
