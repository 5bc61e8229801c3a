package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// BenchmarkMeasureOverhead measures perfbot's own cost per run on the
// local host with commands that cost next to nothing: the shell start,
// the environment dump, output capture, parsing, the process-group
// cleanup and the bookkeeping. overhead-ns/run is the part of each run's
// duration spent outside the commands themselves.
func BenchmarkMeasureOverhead(b *testing.B) {
	b.Run("no GPU", func(b *testing.B) { measureOverhead(b) })
	// With the stand-in nvidia-smi on PATH, each benchmark step is
	// sampled: the prologue (counted in the step's own time, run-ns/run)
	// and the read-back command (overhead).
	b.Run("sampled GPU", func(b *testing.B) {
		runnertest.UseFakeGPU(b, "samples_busy.csv")
		measureOverhead(b)
	})
}

func measureOverhead(b *testing.B) {
	spec := record.Spec{
		Build: []record.Step{{Name: "build", Run: "true", Timeout: time.Minute}},
		Benchmarks: []record.BenchStep{{
			Step:   record.Step{Name: "engine", Run: `printf 'BenchmarkVerifyStep-2 1 123.5 tok/s\n'`, Timeout: time.Minute},
			Format: "gobench",
		}},
		Metrics: []record.Metric{{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher, Primary: true}},
	}
	host, commit := localHost(b, "local", map[string]string{"README": "engine\n"})
	pool, err := runner.NewPool(host)
	if err != nil {
		b.Fatal(err)
	}
	r := &runner.Runner{Spec: spec}
	ctx := context.Background()
	src := runner.Source{Target: record.Target{Commit: commit}}
	lease, err := pool.Acquire(ctx, src.Target)
	if err != nil {
		b.Fatal(err)
	}
	defer lease.Release()
	// The checkout, the build and the host's facts happen once per
	// target and host, not per run.
	if _, err := r.Measure(ctx, lease, src, 1, func(record.Run) error { return nil }); err != nil {
		b.Fatal(err)
	}
	var overhead, total time.Duration
	runs := 0
	b.ResetTimer()
	_, err = r.Measure(ctx, lease, src, b.N, func(run record.Run) error {
		if run.Status != record.StatusOK {
			b.Fatalf("run %s: %s", run.Status, run.Error)
		}
		overhead += run.Overhead
		total += run.Duration
		runs++
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(overhead.Nanoseconds())/float64(runs), "overhead-ns/run")
	b.ReportMetric(float64(total.Nanoseconds())/float64(runs), "run-ns/run")
}
