//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, user and system.
// One sequence runs at a time and the requests that wait for it sleep, so
// the CPU time of a step is the work the step did, whether or not other
// processes took the cores in between.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
