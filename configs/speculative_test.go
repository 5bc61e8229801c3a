package configs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
)

// eagle3Record is what the sglang-eagle3 example's speculative step
// prints: bench_serving's JSON record (keys as its --output-file writes
// them) with the cycle time it adds from /get_server_info.
const eagle3Record = `{"backend": "sglang", "request_rate": Infinity, "max_concurrency": 1, "completed": 32, "duration": 170.2, ` +
	`"output_throughput": 96.3, "median_ttft_ms": 191.3, "median_tpot_ms": 10.4, "median_itl_ms": 25.6, "accept_length": 2.46, ` +
	`"server_info": {"speculative_algorithm": "EAGLE3"}, "spec_cycle_ms": 25.8}`

// TestSpeculativeExamples loads the speculative-decoding examples: each
// reaches its host over SSH, names the breakdown's metrics, finds every
// metric in an output of its step, and maps the source files that matter
// for speculative decoding to their components.
func TestSpeculativeExamples(t *testing.T) {
	sample := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "bench", "testdata", name))
		require.NoError(t, err)
		return string(data)
	}
	tests := []struct {
		file       string
		outputs    map[string]string // benchmark → an output of it
		components map[string]string // path → component
	}{
		{file: "sglang-eagle3.yaml",
			outputs: map[string]string{
				"baseline":  sample("sglang_bench_serving_summary.txt"),
				"eagle3":    eagle3Record,
				"allreduce": sample("nccl_tests_all_reduce_perf.txt"),
			},
			components: map[string]string{
				"python/sglang/srt/layers/communicator.py":                                "comm.communicator",
				"python/sglang/srt/distributed/device_communicators/pynccl.py":            "comm.allreduce",
				"python/sglang/srt/layers/attention/flashinfer_mla_backend.py":            "attn.flashinfer_mla",
				"python/sglang/srt/layers/attention/flashattention_backend.py":            "attn.fa3",
				"python/sglang/srt/layers/moe/topk.py":                                    "moe.topk",
				"python/sglang/srt/layers/moe/fused_moe_triton/fused_moe.py":              "moe.fused_triton",
				"python/sglang/srt/speculative/eagle_worker.py":                           "spec.eagle",
				"sgl-kernel/csrc/speculative/speculative_sampling.cu":                     "spec.kernels",
				"python/sglang/srt/model_executor/cuda_graph_runner.py":                   "exec.cuda_graph",
				"docs/advanced_features/speculative_decoding.md":                          "non_runtime",
				"python/sglang/srt/distributed/device_communicators/custom_all_reduce.py": "comm.allreduce",
			}},
		{file: "vllm-spec.yaml",
			outputs: map[string]string{
				"baseline":  strings.SplitN(sample("vllm_bench_serve.txt"), "# source:", 3)[2],
				"eagle3":    strings.SplitN(sample("vllm_bench_serve.txt"), "# source:", 3)[1],
				"allreduce": sample("nccl_tests_all_reduce_perf.txt"),
			},
			components: map[string]string{
				"vllm/distributed/device_communicators/custom_all_reduce.py": "comm.allreduce",
				"vllm/distributed/parallel_state.py":                         "comm.parallel_state",
				"vllm/v1/attention/backends/flash_attn.py":                   "attn.flash_attn",
				"vllm/v1/attention/backends/mla/flashinfer_mla.py":           "attn.flashinfer_mla",
				"vllm/v1/attention/backends/tree_attn.py":                    "attn.tree",
				"vllm/model_executor/layers/fused_moe/fused_moe.py":          "moe",
				"vllm/v1/spec_decode/eagle.py":                               "spec.eagle",
				"vllm/v1/sample/rejection_sampler.py":                        "spec.verify",
				"vllm/v1/worker/gpu_model_runner.py":                         "exec.runner",
				"tests/v1/spec_decode/test_eagle.py":                         "non_runtime",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			c, err := config.Parse(mustRead(t, tc.file), tc.file)
			require.NoError(t, err)
			require.Len(t, c.Hosts, 1)
			h := c.Hosts[0]
			assert.Equal(t, config.HostSSH, h.Kind)
			for _, v := range []string{h.Address, h.User, h.KeyFile, h.KnownHosts, h.Workdir} {
				assert.NotEmpty(t, v)
			}
			require.NotNil(t, c.Speculative)
			assert.Equal(t, c.Primary().Name, c.Speculative.TokS, "the speculative tok/s is what the nights follow")
			assert.Len(t, c.Speculative.Metrics(), 4)

			formats := map[string]string{}
			for _, b := range c.Benchmarks {
				formats[b.Name] = b.Format
			}
			assert.Contains(t, formats, "allreduce")
			for _, m := range c.Metrics {
				out, ok := tc.outputs[m.Benchmark]
				require.True(t, ok, "metric %s: no output of %s", m.Name, m.Benchmark)
				samples, err := bench.Parse(formats[m.Benchmark], strings.NewReader(out), nil)
				require.NoError(t, err, "benchmark %s", m.Benchmark)
				v, err := bench.Select(samples, m.Select, m.Unit)
				if assert.NoError(t, err, "metric %s", m.Name) {
					assert.Positive(t, v, "metric %s", m.Name)
				}
				if strings.HasSuffix(m.Name, "_ms") {
					assert.Equal(t, record.Lower, m.Better, m.Name)
				}
			}
			for path, want := range tc.components {
				assert.Equal(t, want, c.Components.Match(path), path)
			}
		})
	}
}
