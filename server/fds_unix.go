//go:build unix

package server

import "syscall"

// openFileLimit is the process's limit of open descriptors.
func openFileLimit() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > 1<<20 {
		return 1 << 20
	}
	return int(lim.Cur)
}
