package runner

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// localLoad returns this machine's load averages as /proc/loadavg's first
// three fields ("0.52 0.40 0.33") and the CPUs perfbot may run on, which
// the build and benchmark processes it starts inherit ("0-3,8"); "" each
// where the system does not tell. A benchmark measured on a loaded host,
// or pinned to fewer CPUs than the host has, reads slower for it: the
// fingerprint of every local run keeps both.
func localLoad() (load, affinity string) {
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		affinity = cpuList(&set)
	}
	return load, affinity
}

// cpuList writes a CPU set as the kernel's lists do: ranges of adjacent
// CPUs, comma separated ("0-3,8,10-11").
func cpuList(set *unix.CPUSet) string {
	var parts []string
	most := int(unsafe.Sizeof(*set)) * 8
	for i := 0; i < most; i++ {
		if !set.IsSet(i) {
			continue
		}
		j := i
		for j+1 < most && set.IsSet(j+1) {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(i))
		} else {
			parts = append(parts, strconv.Itoa(i)+"-"+strconv.Itoa(j))
		}
		i = j
	}
	return strings.Join(parts, ",")
}
