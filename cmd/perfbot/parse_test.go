package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/record"
)

// TestParseEveryFormat runs perfbot parse on an output of every format
// bench knows; a format added without a case here fails the test.
func TestParseEveryFormat(t *testing.T) {
	testdata, err := filepath.Abs(filepath.Join("..", "..", "bench", "testdata"))
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	cases := []struct {
		format string
		file   string
		opts   []string
		want   string // a sample name the output holds
	}{
		{"gobench", filepath.Join(testdata, "go_bench.txt"), nil, ""},
		{"nccl-tests", filepath.Join(testdata, "nccl_tests_all_reduce_perf.txt"), nil, "avg"},
		{"sglang-serving", filepath.Join(testdata, "sglang_bench_serving.jsonl"), nil, "output_throughput"},
		{"sglang-log", filepath.Join(testdata, "sglang_server_decode_log.txt"), nil, "gen_throughput"},
		{"sglang-one-batch", filepath.Join(testdata, "sglang_bench_one_batch.txt"), nil, "bs=8/median_decode_latency"},
		{"vllm-serve", filepath.Join(testdata, "vllm_benchmark_serving.json"), nil, "output_throughput"},
		{"vllm-throughput", filepath.Join(testdata, "vllm_bench_throughput.txt"), nil, "output_tokens_per_second"},
		{"prometheus", write("metrics.txt", "sglang:spec_accept_length 2.5\n"), nil, "sglang:spec_accept_length"},
		{"json", write("r.json", `{"results": {"busbw": 38.4}}`), []string{"--option", "fields=bw=results.busbw"}, "bw"},
		{"nccl-debug", filepath.Join(testdata, "nccl_debug_info_h200_1gpu.txt"), nil, ""},
		{"openai", filepath.Join(testdata, "perfbot_loadgen.txt"), nil, ""},
		{"regex", write("t.txt", "accept 2.25\n"), []string{"--option", `pattern=accept (?P<value>\S+)`, "--option", "unit=value", "--option", "better=higher"}, "value"},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.format, func(t *testing.T) {
			if !slices.Contains(bench.Formats(), tc.format) {
				t.Skipf("format %s is not built in here", tc.format)
			}
			args := append([]string{"parse", "--format", tc.format, "--json", tc.file}, tc.opts...)
			out, errOut, code := perfbot(t, dir, args...)
			require.Equal(t, 0, code, errOut)
			var samples []record.Sample
			require.NoError(t, json.Unmarshal([]byte(out), &samples))
			require.NotEmpty(t, samples)
			if tc.want != "" {
				names := make([]string, len(samples))
				for i, s := range samples {
					names[i] = s.Name
				}
				assert.Contains(t, names, tc.want)
			}
		})
		covered[tc.format] = true
	}
	for _, f := range bench.Formats() {
		assert.True(t, covered[f], "format %s has no case", f)
	}
}

// TestParseErrors: a bad output names the file and line and quotes it; an
// unknown format lists the valid ones.
func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("INFO ok\nThroughput: x requests/s\n"), 0o644))
	_, errOut, code := perfbot(t, dir, "parse", "--format", "vllm-throughput", bad)
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errOut, bad+":2:")
	assert.Contains(t, errOut, `"Throughput: x requests/s"`)

	_, errOut, code = perfbot(t, dir, "parse", "--format", "csv", bad)
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errOut, "sglang-one-batch")
}
