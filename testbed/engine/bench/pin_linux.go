package bench

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// cpuMask is a Linux CPU affinity mask of up to 1024 CPUs.
type cpuMask [16]uint64

func (m *cpuMask) has(cpu int) bool { return m[cpu/64]&(1<<(cpu%64)) != 0 }

func only(cpu int) cpuMask {
	var m cpuMask
	m[cpu/64] |= 1 << (cpu % 64)
	return m
}

func setAffinity(tid int, m *cpuMask) error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	if errno != 0 {
		return errno
	}
	return nil
}

// pinFastestCPU moves the process to the allowed CPU that runs a short
// fixed loop fastest. On a shared machine one core can run the same code
// far slower than another for minutes at a time (its sibling is busy, the
// hypervisor shares it), and a benchmark process that lands on it at
// random measures the machine rather than the engine. TESTBED_NO_PIN=1
// leaves the scheduler alone.
func pinFastestCPU() {
	if os.Getenv("TESTBED_NO_PIN") != "" {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var allowed cpuMask
	if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(allowed), uintptr(unsafe.Pointer(&allowed))); errno != 0 {
		return
	}
	best, bestTime := -1, time.Duration(1<<62)
	for cpu := 0; cpu < 64*len(allowed); cpu++ {
		if !allowed.has(cpu) {
			continue
		}
		m := only(cpu)
		if setAffinity(0, &m) != nil {
			continue
		}
		if d := spin(); d < bestTime {
			best, bestTime = cpu, d
		}
	}
	if best < 0 {
		_ = setAffinity(0, &allowed)
		return
	}
	// Every thread of the process, and those it starts later, which
	// inherit the mask of the thread that starts them.
	m := only(best)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		_ = setAffinity(0, &m)
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = setAffinity(tid, &m)
		}
	}
}

// spinSink keeps the compiler from dropping spin's loop.
var spinSink uint64

// spin returns the shortest of five timings of a fixed integer loop of
// about a millisecond.
func spin() time.Duration {
	best := time.Duration(1 << 62)
	for range 5 {
		start := time.Now()
		x := uint64(88172645463325252)
		for range 1 << 18 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		spinSink += x
		best = min(best, time.Since(start))
	}
	return best
}
