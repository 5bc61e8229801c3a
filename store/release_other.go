//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import "os"

// release closes a file that bbolt opened before it panicked.
func release(f *os.File) { _ = f.Close() }
