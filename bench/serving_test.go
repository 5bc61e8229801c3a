package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServingSamples(t *testing.T) {
	sgText := sampleParts(t, "sglang_bench_serving_summary.txt")[0]
	sgJSONL := sampleParts(t, "sglang_bench_serving.jsonl")[0]
	vText := sampleParts(t, "vllm_bench_serve.txt")
	vJSON := sampleParts(t, "vllm_benchmark_serving.json")[0]
	tests := []struct {
		name    string
		format  string
		input   string
		records int // how many samples named "completed"
		want    []selected
		units   map[string]string // name → unit
		absent  []string
	}{
		{name: "sglang summary with accept length", format: "sglang-serving", input: sgText, records: 1,
			want: []selected{
				{"output_throughput", "tok/s", 95.62}, {"accept_length", "value", 2.46},
				{"median_ttft_ms", "ms", 191.31}, {"p90_e2e_latency_ms", "ms", 4200.62},
				{"max_output_tokens_per_s", "tok/s", 157}, {"request_throughput", "req/s", 0.34},
				{"max_concurrency", "value", 1}, {"duration", "s", 29.11}, {"max_itl_ms", "ms", 31.45},
			},
			absent: []string{"request_rate", "backend"}},
		{name: "sglang JSONL with Infinity", format: "sglang-serving", input: sgJSONL, records: 8,
			want: []selected{
				{"output_throughput", "tok/s", (1471.0864833760852 + 2047.9108281108272) / 2},
				{"median_itl_ms", "ms", (17.667690059170127 + 19.419891061261296) / 2},
			}},
		{name: "vllm summary with speculative decoding", format: "vllm-serve", input: vText[0], records: 1,
			want: []selected{
				{"output_throughput", "tok/s", 526.57}, {"mean_ttft_ms", "ms", 13395.44},
				{"spec_decode_acceptance_length", "value", 1.64}, {"spec_decode_acceptance_rate", "%", 21.33},
				{"spec_decode_per_position_acceptance_rates/position_2", "%", 7.00},
				{"request_rate", "req/s", 10}, {"failed", "value", 0}, {"total_token_throughput", "tok/s", 4640.43},
			}},
		{name: "vllm summary, older label spelling", format: "vllm-serve", input: vText[1], records: 1,
			want: []selected{{"total_token_throughput", "tok/s", 2375.18}, {"p99_itl_ms", "ms", 2032.37}}},
		{name: "vllm --append-result JSON lines", format: "vllm-serve", input: vJSON, records: 9,
			want:   []selected{{"p99_tpot_ms", "ms", 35.31807143475544}, {"burstiness", "value", 1}},
			absent: []string{"request_goodput", "date", "model_id"}},
		{name: "pretty-printed single JSON object", format: "vllm-serve", records: 1,
			input: "{\n  \"completed\": 10,\n  \"failed\": 0,\n  \"output_throughput\": 123.5,\n  \"ttfts\": [1, 2]\n}\n",
			want:  []selected{{"output_throughput", "tok/s", 123.5}}, absent: []string{"ttfts"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples := parseText(t, tc.format, tc.input, nil)
			requireSelected(t, samples, tc.want)
			completed := 0
			for _, s := range samples {
				if s.Name == "completed" {
					completed++
				}
				require.NotContains(t, tc.absent, s.Name)
			}
			require.Equal(t, tc.records, completed)
		})
	}
}

func TestServingErrors(t *testing.T) {
	sgText := sampleParts(t, "sglang_bench_serving_summary.txt")[0]
	block := sgText[strings.Index(sgText, "============ Serving"):]
	runErrorCases(t, []errorCase{
		{name: "traceback instead of a summary", format: "sglang-serving",
			input: "Namespace(backend='sglang')\nTraceback (most recent call last):\n  File \"bench_serving.py\", line 1\nConnectionRefusedError: [Errno 111] Connection refused\n",
			is:    ErrBenchmarkFailed, mention: []string{"<input>:4:", "ConnectionRefusedError"}},
		{name: "no successful requests", format: "sglang-serving", input: strings.Replace(block, "requests:                     10", "requests:                     0", 1),
			is: ErrBenchmarkFailed, mention: []string{"completed = 0"}},
		{name: "failed requests", format: "vllm-serve", input: `{"completed": 90, "failed": 10, "output_throughput": 5.0}`,
			is: ErrBenchmarkFailed, mention: []string{"failed = 10"}},
		{name: "summary with no numbers", format: "sglang-serving", input: "============ Serving Benchmark Result ============\nBackend: sglang\n",
			is: ErrNoResults, mention: []string{"Serving Benchmark Result"}},
		{name: "broken JSON line", format: "sglang-serving", input: "{\"completed\": 3, \"output_throughput\": 1.5}\n{\"completed\": 3, \"output_thr",
			is: ErrSyntax, mention: []string{"<input>:2:", "invalid JSON"}},
		{name: "JSON that is not an object", format: "vllm-serve", input: "[1, 2]", is: ErrSyntax, mention: []string{"expected a JSON object"}},
		{name: "plain log", format: "vllm-serve", input: "INFO: Started server\n", is: ErrNoResults, mention: []string{"INFO: Started server"}},
	})
}

func TestPythonJSONConstants(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": Infinity, "b": -Infinity, "c": NaN}`, `{"a": "Infinity", "b": "-Infinity", "c": "NaN"}`},
		{`{"s": "Infinity and NaN \"Infinity\"", "x": 1}`, `{"s": "Infinity and NaN \"Infinity\"", "x": 1}`},
		{`{"x": 1}`, `{"x": 1}`},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, pythonJSONConstants(tc.in))
	}
}
