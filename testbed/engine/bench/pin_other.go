//go:build !linux

package bench

// pinFastestCPU is a no-op where CPU affinity is not available.
func pinFastestCPU() {}
