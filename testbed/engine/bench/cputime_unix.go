//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, user and system. The
// ranks run on one P, so the CPU time of a step is the work it did, whether
// or not other processes took the core in between.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	// Getrusage fails only for a bad who or pointer, neither possible here.
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
