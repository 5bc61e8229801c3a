//go:build !unix

package server

// openFileLimit is a limit of handles no Windows process meets first.
func openFileLimit() int { return 1 << 20 }
