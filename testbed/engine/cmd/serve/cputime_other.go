//go:build !unix

package main

import "time"

var epoch = time.Now()

// cpuTime falls back to the wall clock where the process CPU time is not
// available.
func cpuTime() time.Duration { return time.Since(epoch) }
