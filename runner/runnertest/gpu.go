package runnertest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// FakeGPU is the stand-in nvidia-smi of testdata/fakegpu, which answers
// what perfbot asks with what an H200 host printed.
type FakeGPU struct {
	// Dir holds the stand-in and its recorded outputs.
	Dir     string
	log     string // its arguments, one call a line
	sampled string // touched once it wrote the samples
}

// UseFakeGPU puts the stand-in nvidia-smi first on PATH for the rest of
// t (the commands of a local host, and the jobs of a Slurm host started
// from this machine, inherit it), printing the sample rows of the file
// samples of testdata/fakegpu.
func UseFakeGPU(t testing.TB, samples string) FakeGPU {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "where runnertest lies")
	dir := filepath.Join(filepath.Dir(file), "testdata", "fakegpu")
	tmp := t.TempDir()
	f := FakeGPU{Dir: dir, log: filepath.Join(tmp, "calls"), sampled: filepath.Join(tmp, "sampled")}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_GPU_SAMPLES", filepath.Join(dir, samples))
	t.Setenv("FAKE_GPU_SAMPLED", f.sampled)
	t.Setenv("FAKE_NVIDIA_SMI_LOG", f.log)
	return f
}

// Calls returns the stand-in's calls so far, their arguments one call a
// line.
func (f FakeGPU) Calls(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(f.log)
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// AwaitSampled waits, in a benchmark script, until the stand-in wrote its
// samples, so that the step does not end before its sampling began.
const AwaitSampled = `i=0; while [ ! -f "$FAKE_GPU_SAMPLED" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; rm -f "$FAKE_GPU_SAMPLED"
`

// GPUSpec is a spec of one benchmark step, engine, that runs script with
// env and reports verify_tok_s from its Go benchmark line
// BenchmarkVerifyStep.
func GPUSpec(script string, env map[string]string) record.Spec {
	return record.Spec{
		Benchmarks: []record.BenchStep{{
			Step:   record.Step{Name: "engine", Run: script, Timeout: time.Minute, Env: env},
			Format: "gobench",
		}},
		Metrics: []record.Metric{{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher, Primary: true}},
	}
}
