package runner

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

func TestCapLog(t *testing.T) {
	out, truncated := capLog([]byte("short"), 100)
	assert.Equal(t, "short", out)
	assert.False(t, truncated)

	long := strings.Repeat("a", 50) + strings.Repeat("é", 100) + strings.Repeat("z", 50)
	out, truncated = capLog([]byte(long), 101)
	assert.True(t, truncated)
	assert.True(t, strings.HasPrefix(out, strings.Repeat("a", 50)))
	assert.True(t, strings.HasSuffix(out, strings.Repeat("z", 50)))
	assert.Contains(t, out, "[perfbot: 200 bytes of log omitted]")
}

func TestServerFacts(t *testing.T) {
	log := `[2026-01-01 TP0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>
node1:123:123 [0] NCCL INFO NCCL version 2.27.3+cuda12.9
node1:123:456 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0
node1:123:456 [0] NCCL INFO Using network IB
node1:123:456 [0] NCCL INFO comm 0x55d5 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init COMPLETE
INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.11.0
Uvicorn running on http://127.0.0.1:30000
`
	assert.Equal(t, map[string]string{
		"server.nccl_version": "2.27.3+cuda12.9", "server.nccl_net": "IB", "NCCL_IB_HCA": "mlx5_0", "server.nccl_nranks": "8",
		"server.vllm_version": "0.11.0",
	}, serverFacts([]byte(log)))
	assert.Empty(t, serverFacts([]byte("no collective library here\n")))
}

func TestLogTail(t *testing.T) {
	assert.Equal(t, "c | d", logTail([]byte("a\nb\n\nc\n  d  \n\n"), 2))
	assert.Equal(t, "", logTail(nil, 3))
}

func TestParseGPUSamples(t *testing.T) {
	samples, dropped := parseGPUSamples("0, NVIDIA H200, 580.159.04, 1980, 3201, 44, [N/A], 100, [Not Supported]\n" +
		"[N/A], NVIDIA H200, 580.159.04, 1980, 3201, 44, 600, 100, 0x0\n" +
		"0, NVIDIA H200, 580.159.04, 1410, 3201, 86, 452.18, 100, 0x0000000000000008\n" +
		"0, NVIDIA H2\n")
	assert.Equal(t, 2, dropped, "a row without index and a row cut short")
	require.Len(t, samples, 2)
	_, states := summarizeGPUSamples("engine", samples)
	require.Len(t, states, 1)
	st := states[0]
	assert.Equal(t, record.Spread{Min: 1410, Median: 1695, Max: 1980}, st.SMClockMHz)
	assert.Equal(t, 452.18, st.MeanPowerW, "a power nvidia-smi did not report is left out")
	assert.Equal(t, "0x0000000000000008", st.ThrottleReasons, "reasons it did not report are left out")
	assert.Equal(t, map[string]int{"HW slowdown": 1}, st.Slowdowns)
}

func TestParseReadback(t *testing.T) {
	rb := parseReadback([]byte("--- perfbot samples\n0, a\n1, b\n--- perfbot errors\n--- perfbot topology\n\n\x1b[4mGPU0\x1b[0m\nGPU0\t X\n\n" +
		"--- perfbot nccl.conf\n==> /etc/nccl.conf <==\nNCCL_DEBUG=WARN\n\n==> /root/.nccl.conf <==\n\n"))
	assert.Equal(t, "0, a\n1, b\n", rb.samples)
	assert.Equal(t, "GPU0\nGPU0\t X", rb.topology)
	assert.Equal(t, map[string]string{"/etc/nccl.conf": "NCCL_DEBUG=WARN", "/root/.nccl.conf": ""}, rb.conf)
	assert.Equal(t, gpuReadback{}, parseReadback(nil))
}

// TestSummarizeRecordedH200 reads what perfbot's sampling recorded on an
// H200 around a bf16 matmul loop: the GPU held by its 700 W power cap.
func TestSummarizeRecordedH200(t *testing.T) {
	data, err := os.ReadFile("runnertest/testdata/fakegpu/samples_h200_matmul.csv")
	require.NoError(t, err)
	samples, dropped := parseGPUSamples(string(data))
	assert.Zero(t, dropped)
	first, states := summarizeGPUSamples("engine", samples)
	require.Len(t, first, 1)
	assert.Equal(t, record.GPU{Index: 0, Name: "NVIDIA H200", Driver: "580.159.04", SMClockMHz: 345, MemClockMHz: 3201,
		TemperatureC: 38, PowerW: 80.79, ThrottleReasons: "0x0000000000000001"}, first[0], "idle while torch loads")
	require.Len(t, states, 1)
	st := states[0]
	assert.Equal(t, 19, st.Samples)
	assert.Equal(t, 11, st.Busy, "the samples while a kernel ran")
	assert.Equal(t, record.Spread{Min: 1425, Median: 1455, Max: 1530}, st.SMClockMHz, "not the idle 345 MHz of the import")
	assert.Equal(t, 60.0, st.MaxTemperatureC)
	assert.Equal(t, 693.55, st.MaxPowerW)
	assert.Equal(t, "0x0000000000000005", st.ThrottleReasons)
	assert.Equal(t, map[string]int{"SW power cap": 11}, st.Slowdowns)
}
