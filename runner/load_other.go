//go:build !linux

package runner

// localLoad says nothing where the system has no /proc/loadavg and no
// sched_getaffinity.
func localLoad() (load, affinity string) { return "", "" }
