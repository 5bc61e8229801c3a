package bench

import (
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/testbed/engine/communicator"
)

func TestMain(m *testing.M) {
	// The ranks are goroutines standing in for devices; on one P they hand
	// over to each other without waking OS threads.
	runtime.GOMAXPROCS(1)
	os.Exit(m.Run())
}

// shared is the workload of BenchmarkVerifyStep and BenchmarkDecode, built
// once: the testing package runs each benchmark function twice, and a
// prefill costs more than the steps measured.
var shared struct {
	once sync.Once
	w    *Workload
	err  error
}

func workload(b *testing.B) *Workload {
	shared.once.Do(func() {
		cfg, err := Config()
		if err != nil {
			shared.err = err
			return
		}
		shared.w, shared.err = NewWorkload(cfg)
	})
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	return shared.w
}

// cycles runs f over b.N steps in cycles of at most CycleSteps and returns
// the median CPU time per step of the full cycles (or of all steps when
// there is no full cycle).
func cycles(b *testing.B, f func(steps int) error) time.Duration {
	step, _ := pairedCycles(b, f, nil)
	return step
}

// pairedCycles is cycles with a reference: after each cycle of f it runs
// ref over as many steps and times it too, and it also returns the median
// over the full cycles of f's time per step in ref's steps. Both halves of
// a pair run within milliseconds of each other in one process, so a
// machine whose speed flips between runs, or between the benchmarks of one
// run, moves both alike and the ratio stays put. With a nil ref the ratio
// is 0.
func pairedCycles(b *testing.B, f, ref func(steps int) error) (time.Duration, float64) {
	var per []time.Duration
	var rel []float64
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(CycleSteps, b.N-done)
		start := cpuTime()
		if err := f(n); err != nil {
			b.Fatal(err)
		}
		took := cpuTime() - start
		if n == CycleSteps || len(per) == 0 {
			per = append(per, took/time.Duration(n))
		}
		if ref != nil {
			b.StopTimer()
			start := cpuTime()
			if err := ref(n); err != nil {
				b.Fatal(err)
			}
			if r := cpuTime() - start; r > 0 && (n == CycleSteps || len(rel) == 0) {
				rel = append(rel, float64(took)/float64(r))
			}
			b.StartTimer()
		}
		done += n
	}
	b.StopTimer()
	slices.Sort(per)
	if len(rel) == 0 {
		return per[len(per)/2], 0
	}
	slices.Sort(rel)
	return per[len(per)/2], rel[len(rel)/2]
}

// BenchmarkVerifyStep reports, beside the speculative step's own rate and
// times, its cost in plain decode steps of the target (decode-steps/verify):
// each cycle of verify steps is followed by as many decode steps, timed
// apart from the benchmark's clock.
func BenchmarkVerifyStep(b *testing.B) {
	w := workload(b)
	tokens := 0
	step, rel := pairedCycles(b, func(n int) error {
		emitted, err := w.VerifyCycle(n)
		if n == CycleSteps {
			tokens = emitted
		}
		return err
	}, w.DecodeCycle)
	if tokens == 0 {
		// No full cycle: report the one partial cycle.
		tokens = len(w.out) * CycleSteps / max(b.N, 1)
	}
	// Every full cycle emits the same tokens, so the median step time
	// gives the median rate.
	perStep := float64(tokens) / CycleSteps
	b.ReportMetric(perStep/step.Seconds(), "tok/s")
	b.ReportMetric(float64(step)/1e6, "ms/verify")
	b.ReportMetric(perStep, "tok/verify")
	b.ReportMetric(rel, "decode-steps/verify")
	b.ReportMetric(float64(draftTime(b, w))/1e6, "ms/draft")
}

// draftTime replays the draft's part of the last verify cycle as many
// times as the verify cycles ran and returns its median CPU time per step:
// the share of ms/verify the draft takes.
func draftTime(b *testing.B, w *Workload) time.Duration {
	steps := len(w.emitted)
	if steps == 0 {
		return 0
	}
	per := make([]time.Duration, max(b.N/CycleSteps, 1))
	for i := range per {
		start := cpuTime()
		if err := w.DraftCycle(); err != nil {
			b.Fatal(err)
		}
		per[i] = (cpuTime() - start) / time.Duration(steps)
	}
	slices.Sort(per)
	return per[len(per)/2]
}

func BenchmarkDecode(b *testing.B) {
	w := workload(b)
	step := cycles(b, w.DecodeCycle)
	b.ReportMetric(1/step.Seconds(), "tok/s")
	b.ReportMetric(float64(step)/1e6, "ms/token")
}

// BenchmarkAllReduce times, per iteration, the allreduces of one forward
// pass (two per layer) of AllReduceFloats each, with the backend the
// fallback chain picks for that size.
func BenchmarkAllReduce(b *testing.B) {
	cfg, err := Config()
	if err != nil {
		b.Fatal(err)
	}
	opts := cfg.Comm
	opts.Segment = cfg.Hidden / cfg.Ranks
	g, err := communicator.NewGroup(cfg.Ranks, opts)
	if err != nil {
		b.Fatal(err)
	}
	bufs := make([][]float32, cfg.Ranks)
	for r := range bufs {
		bufs[r] = make([]float32, AllReduceFloats)
	}
	perPass := 2 * cfg.Layers
	pass := cycles(b, func(n int) error {
		var wg sync.WaitGroup
		for r := range bufs {
			wg.Go(func() {
				for range n * perPass {
					// Fresh partial sums, so values stay bounded.
					for i := range bufs[r] {
						bufs[r][i] = float32(r + i%7)
					}
					g.AllReduce(r, bufs[r])
				}
			})
		}
		wg.Wait()
		return nil
	})
	op := pass / time.Duration(perPass)
	// Bus bandwidth as nccl-tests defines it: algorithm bandwidth times
	// 2(R-1)/R, the share of the data every rank sends and receives.
	bytes := float64(4 * AllReduceFloats)
	busBW := bytes / op.Seconds() * 2 * float64(cfg.Ranks-1) / float64(cfg.Ranks)
	b.ReportMetric(busBW/1e9, "GB/s")
	b.ReportMetric(float64(op)/1e3, "us/op")
}
