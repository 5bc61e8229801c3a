package bench

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNonFiniteValues: a NaN or an infinity where a measurement belongs is
// the benchmark's failure, found when the output is parsed and quoted from
// its line, so that the revision is bench_failed. (Returned as a sample, the
// store refuses it and the run becomes an infrastructure error.)
func TestNonFiniteValues(t *testing.T) {
	const promOK = "sglang:gen_throughput 812.5\n"
	const servingSummary = "============ Serving Benchmark Result ============\n" +
		"Successful requests:                     10\n" +
		"Benchmark duration (s):                  29.11\n" +
		"Output token throughput (tok/s):         %s\n" +
		"==================================================\n"
	gobench := func(v string) string {
		return "BenchmarkVerifyStep-2   \t     100\t  12.5 ms/verify\t " + v + " tok/s\nPASS\n"
	}
	nccl := func(v string) string {
		return ncclHeader +
			"        1024           256     float     sum      -1    45.33    " + v + "    0.04       0    37.98    0.03    0.05       0\n" +
			"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.05\n"
	}
	sglangLog := func(v string) string {
		return "[2026-03-02 14:44:13 TP0] Decode batch, #running-req: 1, gen throughput (token/s): 77.90, #queue-req: 0\n" +
			"[2026-03-02 14:44:14 TP0] Decode batch, #running-req: 1, gen throughput (token/s): " + v + ", #queue-req: 0\n"
	}
	regexOpts := Options{"pattern": `(?m)^tok/s: (?P<value>\S+)$`, "unit": "tok/s"}
	jsonFields := Options{"fields": "bw=results.0.bus_bw"}

	type tc struct {
		name, format, input string
		opts                Options
		quote               string // the text the error must quote
	}
	var cases []tc
	for _, v := range []string{"NaN", "nan", "+Inf", "-Inf", "inf", "1e400"} {
		cases = append(cases,
			tc{"gobench " + v, "gobench", gobench(v), nil, v + " tok/s"},
			tc{"nccl-tests row " + v, "nccl-tests", nccl(v), nil, "45.33    " + v},
			tc{"sglang-log " + v, "sglang-log", sglangLog(v), nil, "gen throughput (token/s): " + v},
			tc{"regex " + v, "regex", "tok/s: " + v + "\n", regexOpts, "tok/s: " + v},
			tc{"prometheus " + v, "prometheus", promOK + "sglang:spec_accept_length " + v + "\n", nil, "sglang:spec_accept_length " + v},
			tc{"sglang summary " + v, "sglang-serving", strings.Replace(servingSummary, "%s", v, 1), nil, "Output token throughput (tok/s):         " + v},
			tc{"vllm summary " + v, "vllm-serve", strings.Replace(servingSummary, "%s", v, 1), nil, "Output token throughput (tok/s):         " + v},
		)
	}
	cases = append(cases,
		tc{"nccl-tests average", "nccl-tests", strings.Replace(nccl("0.02"), "bandwidth    : 0.05", "bandwidth    : nan", 1), nil, "# Avg bus bandwidth    : nan"},
		tc{"sglang JSONL NaN", "sglang-serving", `{"completed": 10, "output_throughput": NaN, "request_rate": Infinity}` + "\n", nil, `"output_throughput": NaN`},
		tc{"vllm JSON -Infinity", "vllm-serve", `{"completed": 10, "failed": 0, "mean_ttft_ms": -Infinity}` + "\n", nil, `"mean_ttft_ms": -Infinity`},
		tc{"vllm JSON overflow", "vllm-serve", `{"completed": 10, "failed": 0, "mean_ttft_ms": 1e999}` + "\n", nil, `"mean_ttft_ms": 1e999`},
		tc{"serving JSON string nan", "vllm-serve", `{"completed": 10, "failed": 0, "mean_ttft_ms": "nan"}` + "\n", nil, `"mean_ttft_ms": "nan"`},
		tc{"pretty JSON quotes the key's line", "vllm-serve", "{\n  \"completed\": 10,\n  \"p99_itl_ms\": NaN\n}\n", nil, `"p99_itl_ms": NaN`},
		tc{"json every number", "json", `{"results": [{"size": 8, "bus_bw": Infinity}]}`, nil, `"bus_bw": Infinity`},
		tc{"json field", "json", `{"results": [{"size": 8, "bus_bw": NaN}]}`, jsonFields, `"bus_bw": NaN`},
		tc{"json field as nccl-tests -J writes NaN", "json", `{"results": [{"size": 8, "bus_bw": "nan"}]}`, jsonFields, `"bus_bw": "nan"`},
		tc{"json field overflow", "json", `{"results": [{"size": 8, "bus_bw": -1e400}]}`, jsonFields, `"bus_bw": -1e400`},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			samples, err := Parse(c.format, strings.NewReader(c.input), c.opts)
			require.Error(t, err, "samples: %v", samples)
			require.Nil(t, samples)
			require.ErrorIs(t, err, ErrBenchmarkFailed)
			var oe *OutputError
			require.True(t, errors.As(err, &oe), "%T is not an *OutputError", err)
			require.Positive(t, oe.Line, "the error names the line")
			require.Contains(t, oe.Text, c.quote)
			require.Contains(t, err.Error(), "not a finite number")
		})
	}
}

// TestNonFiniteSettingsAndNoData: what stays readable. A serving
// benchmark's request rate is a setting whose default is infinite, not a
// result; a Prometheus summary quantile is NaN until the summary has an
// observation; a JSON field that is not selected is not read.
func TestNonFiniteSettingsAndNoData(t *testing.T) {
	for _, c := range []struct {
		name, format, input string
		opts                Options
		want                []selected
	}{
		{name: "sglang summary request rate inf", format: "sglang-serving",
			input: "============ Serving Benchmark Result ============\nTraffic request rate:                    inf\n" +
				"Successful requests:                     10\nOutput token throughput (tok/s):         95.62\n" +
				"==================================================\n",
			want: []selected{{"output_throughput", "tok/s", 95.62}}},
		{name: "sglang JSONL request rate Infinity", format: "sglang-serving",
			input: `{"completed": 10, "output_throughput": 95.62, "request_rate": Infinity}` + "\n",
			want:  []selected{{"output_throughput", "tok/s", 95.62}}},
		{name: "vllm JSON request rate as the string inf", format: "vllm-serve",
			input: `{"completed": 10, "failed": 0, "output_throughput": 95.62, "request_rate": "inf"}` + "\n",
			want:  []selected{{"output_throughput", "tok/s", 95.62}}},
		{name: "prometheus quantile without observations", format: "prometheus",
			input: "go_gc_duration_seconds{quantile=\"0.5\"} NaN\ngo_gc_duration_seconds_count 0\nup 1\n",
			want:  []selected{{"up", "value", 1}}},
		{name: "json field beside a NaN", format: "json", opts: Options{"fields": "size=results.0.size"},
			input: `{"results": [{"size": 8, "bus_bw": NaN}]}`,
			want:  []selected{{"size", "value", 8}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			samples := parseText(t, c.format, c.input, c.opts)
			requireSelected(t, samples, c.want)
			for _, s := range samples {
				require.False(t, math.IsNaN(s.Value) || math.IsInf(s.Value, 0), "sample %s is %v", s.Name, s.Value)
			}
		})
	}
}
