package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

func TestSGLangOneBatch(t *testing.T) {
	parts := sampleParts(t, "sglang_bench_one_batch.txt")
	tests := []struct {
		name   string
		input  string
		want   []selected
		count  int // samples
		absent []string
	}{
		{name: "sweep over two batch sizes, warm-up skipped", input: parts[0], count: 12,
			want: []selected{
				{"bs=1/prefill_latency", "s", 0.03121}, {"bs=1/prefill_throughput", "tok/s", 32810},
				{"bs=1/median_decode_latency", "s", 0.00549}, {"bs=1/median_decode_throughput", "tok/s", 182.08},
				{"bs=8/median_decode_latency", "s", 0.00700}, {"bs=8/overall_throughput", "tok/s", 5293.49},
				{"bs=8/total_latency", "s", 1.934},
			}},
		{name: "2024 bench_latency: the median of the step lines", input: parts[1], count: 6,
			want: []selected{
				{"prefill_latency", "s", 0.05320}, {"median_decode_latency", "s", (0.00742 + 0.00745) / 2},
				{"median_decode_throughput", "tok/s", (134.77 + 134.23) / 2}, {"total_latency", "s", 0.084},
			}},
		{name: "result file", count: 4,
			input:  `{"run_name": "before", "batch_size": 8, "input_len": 1024, "output_len": 256, "prefill_latency": 0.1486, "prefill_throughput": 55120.4, "median_decode_latency": 0.0070, "median_decode_throughput": 1143.4}` + "\n",
			want:   []selected{{"bs=8/median_decode_throughput", "tok/s", 1143.4}, {"bs=8/prefill_latency", "s", 0.1486}},
			absent: []string{"bs=8/input_len", "bs=8/batch_size"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples := parseText(t, "sglang-one-batch", tc.input, nil)
			require.Len(t, samples, tc.count)
			requireSelected(t, samples, tc.want)
			for _, s := range samples {
				require.NotContains(t, tc.absent, s.Name)
				if s.Unit == "s" {
					require.Equal(t, record.Lower, s.Better, s.Name)
				} else {
					require.Equal(t, record.Higher, s.Better, s.Name)
				}
			}
		})
	}
	runErrorCases(t, []errorCase{
		{name: "out of memory", format: "sglang-one-batch",
			input: "Warmup ...\nTraceback (most recent call last):\n  File \"bench_one_batch.py\", line 1\ntorch.OutOfMemoryError: CUDA out of memory\n",
			is:    ErrBenchmarkFailed, mention: []string{"<input>:4:", "torch.OutOfMemoryError"}},
		{name: "only the warm-up", format: "sglang-one-batch", input: "Warmup ...\nPrefill. latency: 0.41527 s, throughput:   2465.87 token/s\n",
			is: ErrNoResults, mention: []string{"Warmup"}},
		{name: "bad latency", format: "sglang-one-batch", input: "Benchmark ...\nPrefill. latency: 0.4.1 s, throughput:   2465.87 token/s\n",
			is: ErrSyntax, mention: []string{"<input>:2:", "0.4.1"}},
		{name: "median of nothing", format: "sglang-one-batch",
			input: "Prefill. latency: 0.03121 s, throughput:  32810.00 token/s\nDecode.  median latency:     nan s, median throughput:       nan token/s\n",
			is:    ErrBenchmarkFailed, mention: []string{"<input>:2:", "median latency:     nan"}},
		{name: "a result line cut short", format: "sglang-one-batch",
			input: "Prefill. latency: 0.03121 s, throughput:  32810.00 token/s\nTotal. latency:  1.435 s, throughp\n",
			is:    ErrSyntax, mention: []string{"<input>:2:", "Total. latency:  1.435 s, throughp"}},
		{name: "decode before prefill", format: "sglang-one-batch", input: "Decode.  median latency: 0.00549 s, median throughput:    182.08 token/s\n",
			is: ErrSyntax, mention: []string{"before any prefill"}},
		{name: "result file without results", format: "sglang-one-batch", input: `{"run_name": "x", "batch_size": 1}`,
			is: ErrNoResults},
		{name: "result file with NaN", format: "sglang-one-batch", input: `{"batch_size": 1, "median_decode_latency": NaN}`,
			is: ErrBenchmarkFailed, mention: []string{"<input>:1:", "median_decode_latency", "NaN"}},
	})
}

func TestVLLMThroughput(t *testing.T) {
	parts := sampleParts(t, "vllm_bench_throughput.txt")
	tests := []struct {
		name  string
		input string
		want  []selected
		count int
	}{
		{name: "current print with token totals", input: parts[0], count: 5,
			want: []selected{{"requests_per_second", "req/s", 5.35}, {"tokens_per_second", "tok/s", 2735.50},
				{"output_tokens_per_second", "tok/s", 1369.41}, {"total_num_prompt_tokens", "value", 255378},
				{"total_num_output_tokens", "value", 256000}}},
		{name: "older print without the output rate", input: parts[1], count: 2,
			want: []selected{{"tokens_per_second", "tok/s", 6164.48}}},
		{name: "output JSON", input: parts[2], count: 5,
			want: []selected{{"tokens_per_second", "tok/s", 2735.8692}, {"elapsed_time", "s", 186.9158}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples := parseText(t, "vllm-throughput", tc.input, nil)
			require.Len(t, samples, tc.count)
			requireSelected(t, samples, tc.want)
		})
	}
	runErrorCases(t, []errorCase{
		{name: "engine failed", format: "vllm-throughput",
			input: "INFO starting\nTraceback (most recent call last):\n  File \"throughput.py\"\nValueError: max_model_len too small\n",
			is:    ErrBenchmarkFailed, mention: []string{"ValueError"}},
		{name: "garbled rate", format: "vllm-throughput", input: "Throughput: 5.35 requests/s, lots of total tokens/s\n",
			is: ErrSyntax, mention: []string{"<input>:1:", "Throughput: 5.35 requests/s, lots of"}},
		{name: "not a number", format: "vllm-throughput", input: "Throughput: 5.3.5 requests/s, 2735.50 total tokens/s, 1369.41 output tokens/s\n",
			is: ErrSyntax, mention: []string{"5.3.5"}},
		{name: "NaN rate", format: "vllm-throughput", input: "Throughput: nan requests/s, nan total tokens/s, nan output tokens/s\n",
			is: ErrBenchmarkFailed, mention: []string{"Throughput: nan"}},
		{name: "token totals alone", format: "vllm-throughput", input: "Total num prompt tokens:  255378\n", is: ErrNoResults},
	})
}
