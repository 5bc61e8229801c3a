package runner

import (
	"syscall"
	"testing"
)

// alive reports whether pid is a running process. A zombie is not: it
// holds nothing, and whether init reaps it promptly depends on the
// container.
func alive(t *testing.T, pid int) bool {
	t.Helper()
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	state, _, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}
