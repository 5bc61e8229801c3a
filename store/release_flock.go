//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"os"
	"syscall"
)

// release closes a file that bbolt opened, locked and mapped before it
// panicked. The mapping keeps the file's open description alive, and with
// it the flock, after the descriptor is closed, so the lock is dropped
// first: otherwise the next Open of this process would find the file
// locked. The mapping itself stays until the process exits.
func release(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	_ = f.Close()
}
