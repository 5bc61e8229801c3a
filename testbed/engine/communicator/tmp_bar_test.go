package communicator

import (
	"syscall"
	"runtime"
	"sync"
	"testing"
)

func BenchmarkBarrierRound(b *testing.B) {
	runtime.GOMAXPROCS(1)
	bar := newBarrier(8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range b.N {
				bar.wait()
			}
		})
	}
	wg.Wait()
}

func BenchmarkAR(b *testing.B) {
	runtime.GOMAXPROCS(1)
	for _, be := range []string{Ring, Tree, Naive} {
		for _, n := range []int{128, 512, 4096} {
			b.Run(be+"/"+itoa(n), func(b *testing.B) {
				g, _ := NewGroup(8, Options{Backend: be, Segment: 16})
				var wg sync.WaitGroup
				c0 := cpu()
				defer func() { b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op") }()
				for r := range 8 {
					buf := make([]float32, n)
					wg.Go(func() {
						for range b.N {
							g.AllReduce(r, buf)
						}
					})
				}
				wg.Wait()
			})
		}
	}
}

func itoa(n int) string { return string(rune('0'+n/1000)) + string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10)) }

func cpu() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(0, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
