package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImpossibleValues: a rate or a time at or below zero is a benchmark
// that measured nothing, so the revision is bench_failed, and the error
// quotes the line that printed it.
func TestImpossibleValues(t *testing.T) {
	const servingSummary = "============ Serving Benchmark Result ============\n" +
		"Successful requests:                     10\n" +
		"Output token throughput (tok/s):         %s\n" +
		"==================================================\n"
	for _, c := range []struct {
		name, format, input string
		opts                Options
		quote               string
	}{
		{"gobench zero tok/s", "gobench", "BenchmarkVerifyStep-2   \t     100\t  12.5 ms/verify\t 0 tok/s\nPASS\n", nil, "0 tok/s"},
		{"gobench negative tok/s", "gobench", "BenchmarkVerifyStep-2   \t     100\t  12.5 ms/verify\t -88.7 tok/s\nPASS\n", nil, "-88.7 tok/s"},
		{"gobench negative time", "gobench", "BenchmarkVerifyStep-2   \t     100\t  -12.5 ms/verify\t 88.7 tok/s\nPASS\n", nil, "-12.5 ms/verify"},
		{"gobench zero ns/op", "gobench", "BenchmarkParse-2   \t     100\t  0 ns/op\nPASS\n", nil, "0 ns/op"},
		{"serving summary zero", "sglang-serving", strings.Replace(servingSummary, "%s", "0.00", 1), nil, "Output token throughput (tok/s):         0.00"},
		{"vllm JSON negative ttft", "vllm-serve", `{"completed": 10, "failed": 0, "output_throughput": 95.1, "mean_ttft_ms": -3.5}` + "\n", nil, `"mean_ttft_ms": -3.5`},
		{"regex zero", "regex", "tok/s: 0\n", Options{"pattern": `(?m)^tok/s: (?P<value>\S+)$`, "unit": "tok/s"}, "tok/s: 0"},
		{"nccl-tests negative bandwidth", "nccl-tests", ncclHeader +
			"        1024           256     float     sum      -1    45.33    -0.02    0.04       0    37.98    0.03    0.05       0\n" +
			"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.05\n", nil, "45.33    -0.02"},
	} {
		t.Run(c.name, func(t *testing.T) {
			samples, err := Parse(c.format, strings.NewReader(c.input), c.opts)
			require.Error(t, err, "samples: %v", samples)
			require.Nil(t, samples)
			require.ErrorIs(t, err, ErrBenchmarkFailed)
			var oe *OutputError
			require.True(t, errors.As(err, &oe), "%T is not an *OutputError", err)
			require.Positive(t, oe.Line, "the error names the line")
			require.Contains(t, oe.Text, c.quote)
			require.Contains(t, err.Error(), "must be above zero")
		})
	}
}

// TestZeroThatCanBe: zero stays a value where the output rounds to it or
// where it is true: nccl-tests bandwidth of a small message, a spread, a
// Prometheus sum before the first request, and a count.
func TestZeroThatCanBe(t *testing.T) {
	for _, c := range []struct {
		name, format, input string
		want                []selected
	}{
		{"nccl-tests small message", "nccl-tests", ncclHeader +
			"           8             2     float     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00      0\n" +
			"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.05\n",
			[]selected{{"size=8/out-of-place", "algbw-GB/s", 0}}},
		{"vllm spread", "vllm-serve", `{"completed": 10, "failed": 0, "output_throughput": 95.1, "std_ttft_ms": 0}` + "\n",
			[]selected{{"std_ttft_ms", "ms", 0}}},
		{"prometheus sum", "prometheus", "vllm:e2e_request_latency_seconds_sum 0\nvllm:e2e_request_latency_seconds_count 0\n",
			[]selected{{"vllm:e2e_request_latency_seconds_sum", "s", 0}}},
		{"gobench allocs", "gobench", "BenchmarkParse-2   \t     100\t  12 ns/op\t 0 B/op\t 0 allocs/op\nPASS\n",
			[]selected{{"Parse-2", "allocs/op", 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			requireSelected(t, parseText(t, c.format, c.input, nil), c.want)
		})
	}
}

// TestGoBenchLongLines: a line of 64 KiB or more (a progress bar redrawn
// with \r, a dump) is not a result and leaves the results readable; a
// result line that long is a syntax error that says so.
func TestGoBenchLongLines(t *testing.T) {
	const result = "BenchmarkVerifyStep-2   \t     100\t  12.5 ms/verify\t 88.7 tok/s\n"
	for _, n := range []int{maxGoBenchLine, 64 << 10, 1 << 20} {
		bar := strings.Repeat("\r[=====>    ] 50%", n/16+1)
		samples := parseText(t, "gobench", "goos: linux\n"+bar+"\n"+result+bar+"\nPASS\n", nil)
		requireSelected(t, samples, []selected{{"VerifyStep-2", "tok/s", 88.7}})
	}

	long := "BenchmarkVerifyStep-2 " + strings.Repeat("x", 64<<10) + "\n" + result + "PASS\n"
	_, err := Parse("gobench", strings.NewReader(long), nil)
	require.ErrorIs(t, err, ErrSyntax)
	require.Contains(t, err.Error(), "too long to be a result")
	require.Less(t, len(err.Error()), 1024, "the quote is cut")
}
