package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// TestMeasureSamplesRealGPU samples the machine's own GPUs during a
// benchmark step of a few seconds (a matmul loop when torch is installed,
// else an idle wait) and prints the fingerprint. It runs where a real
// nvidia-smi is on PATH, and is skipped elsewhere: the stand-in of
// TestMeasureSamplesGPUState covers the rest.
func TestMeasureSamplesRealGPU(t *testing.T) {
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		t.Skip("no nvidia-smi on PATH")
	}
	box, commit := localHost(t, "gpu", map[string]string{"README": "engine\n"})
	pool, err := runner.NewPool(box)
	require.NoError(t, err)
	const load = `import time, torch
x = torch.randn(8192, 8192, device="cuda")
end = time.time() + 6
while time.time() < end:
    y = x @ x
torch.cuda.synchronize()
`
	script := "if python3 -c 'import torch' 2> /dev/null; then python3 -c " + proc.ShellQuote(load) + "; else sleep 6; fi\n" +
		"printf 'BenchmarkVerifyStep-2 1 1 tok/s\\n'"
	r := &runner.Runner{Spec: runnertest.GPUSpec(script, nil)}
	started := time.Now()
	runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: commit}}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, record.StatusOK, runs[0].Status, runs[0].Error)
	fp := runs[0].Fingerprint
	out, err := json.MarshalIndent(fp, "", "  ")
	require.NoError(t, err)
	t.Logf("run of %s; fingerprint:\n%s", time.Since(started).Round(time.Millisecond), out)
	if dir := os.Getenv("OUT"); dir != "" {
		require.NoError(t, os.WriteFile(dir+"/fingerprint_real_gpu.json", out, 0o644))
	}
	require.NotEmpty(t, fp.GPUState, "samples were read back")
	for _, st := range fp.GPUState {
		assert.GreaterOrEqual(t, st.Samples, 3, "about one a second during the step")
		assert.NotEmpty(t, st.Name)
		assert.Positive(t, st.SMClockMHz.Median)
		assert.NotEmpty(t, st.ThrottleReasons)
	}
	assert.NotEmpty(t, fp.GPUTopology)
}
