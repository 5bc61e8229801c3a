package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sampleFormats names the format of every recorded output under testdata/
// (copies of the project's shared samples, plus outputs written from the
// tools' sources where none was recorded). Files that no format reads
// (nvidia-smi's, NCCL_DEBUG logs, benchstat's own output) are listed with
// "" so that a new sample cannot go unchecked. A file of several outputs
// (parts introduced by "# source:") may name a format per part.
var sampleFormats = map[string]string{
	"go_bench.txt":                     "gobench",
	"go_bench_reportmetric.txt":        "gobench,", // then benchstat's output
	"nccl_tests_all_reduce_perf.txt":   "nccl-tests",
	"sglang_bench_serving.jsonl":       "sglang-serving",
	"sglang_bench_serving_summary.txt": "sglang-serving",
	"sglang_server_decode_log.txt":     "sglang-log",
	"sglang_bench_one_batch.txt":       "sglang-one-batch",
	"vllm_bench_serve.txt":             "vllm-serve",
	"vllm_benchmark_serving.json":      "vllm-serve",
	"vllm_bench_throughput.txt":        "vllm-throughput",
	"nccl_debug_info_h200_1gpu.txt":    "nccl-debug",
	"perfbot_loadgen.txt":              "openai",
	// Read by other parts of perfbot, or by no parser.
	"benchstat_output.txt":     "",
	"nvidia_smi.txt":           "",
	"nvidia_smi_query_gpu.csv": "",
	"nvidia_smi_topo_m.txt":    "",
}

// TestEverySample parses every sample meant for a parser, each part of a
// file of several outputs alone, with its format.
func TestEverySample(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.*"))
	require.NoError(t, err)
	checked := 0
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasSuffix(name, ".golden") {
			continue
		}
		format, ok := sampleFormats[name]
		require.True(t, ok, "testdata/%s: name its format in sampleFormats", name)
		if format == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			perPart := strings.Split(format, ",")
			for i, part := range sampleParts(t, name) {
				f := perPart[min(i, len(perPart)-1)]
				if strings.TrimSpace(part) == "" || f == "" {
					continue
				}
				samples, err := Parse(f, strings.NewReader(part), nil)
				require.NoError(t, err, "part %d", i+1)
				require.NotEmpty(t, samples)
				checked++
			}
		})
	}
	require.GreaterOrEqual(t, checked, 15)
}

// TestSamplesAreCopies checks that the samples shared by the project and
// the copies under testdata/ agree, and that every shared sample has a
// format here; it is skipped where the shared folder is absent (CI).
func TestSamplesAreCopies(t *testing.T) {
	const shared = "/work/shared/samples"
	entries, err := os.ReadDir(shared)
	if err != nil {
		t.Skipf("no shared samples: %v", err)
	}
	for _, e := range entries {
		name := e.Name()
		_, ok := sampleFormats[name]
		require.True(t, ok, "%s/%s: name its format in sampleFormats", shared, name)
		if f := sampleFormats[name]; f == "" || !slices.Contains(Formats(), strings.TrimSuffix(f, ",")) {
			continue
		}
		want, err := os.ReadFile(filepath.Join(shared, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err, "copy %s into testdata/", name)
		require.True(t, bytes.Equal(want, got), "testdata/%s differs from %s/%s", name, shared, name)
	}
}
