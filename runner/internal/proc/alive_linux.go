package proc

import "syscall"

// Alive reports whether pid is a running process. A zombie is not: it
// holds nothing, and whether init reaps it promptly depends on the
// container.
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	st, ok := stat(pid)
	return ok && st.live()
}
