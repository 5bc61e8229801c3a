package bench

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/record"
	"github.com/stretchr/testify/require"
)

const promText = `# HELP sglang:gen_throughput The generation throughput (token/s).
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{model_name="meta-llama/Llama-3.1-8B Instruct"} 812.5
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{model_name="a",engine_type="unified"} 2.75 1700000000000
sglang:time_to_first_token_seconds_bucket{le="0.1",model_name="a"} 12
sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="a"} 20
sglang:time_to_first_token_seconds_sum{model_name="a"} 1.5
sglang:time_to_first_token_seconds_count{model_name="a"} 20
go_gc_duration_seconds{quantile="0.5"} NaN
process_resident_memory_bytes 1.2e+09
`

func TestPrometheus(t *testing.T) {
	samples := parseText(t, "prometheus", promText, nil)
	require.Len(t, samples, 7)
	requireSelected(t, samples, []selected{
		{"sglang:gen_throughput", "value", 812.5},
		{`sglang:spec_accept_length{model_name="a",engine_type="unified"}`, "value", 2.75},
		{"sglang:time_to_first_token_seconds_sum", "s", 1.5},
		{`sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="a"}`, "count", 20},
		{"process_resident_memory_bytes", "B", 1.2e9},
	})
	_, err := Select(samples, "sglang:time_to_first_token_seconds_bucket", "count")
	require.ErrorContains(t, err, "ambiguous")

	runErrorCases(t, []errorCase{
		{name: "value missing", format: "prometheus", input: "up\n", is: ErrSyntax, mention: []string{"<input>:1:", "expected float as value"}},
		{name: "unterminated labels", format: "prometheus", input: `up{job="x 1` + "\n", is: ErrSyntax, mention: []string{"<input>:1:", "unescaped new-line"}},
		{name: "not a number", format: "prometheus", input: "up yes\n", is: ErrSyntax, mention: []string{`"yes"`}},
		{name: "HTML error page", format: "prometheus", input: "<html>\n", is: ErrSyntax},
		{name: "only comments", format: "prometheus", input: "# HELP x y\n", is: ErrNoResults},
		{name: "NaN gauge", format: "prometheus", input: promText + "vllm:gpu_cache_usage_perc NaN\n", is: ErrBenchmarkFailed,
			mention: []string{"<input>:12:", "vllm:gpu_cache_usage_perc NaN"}},
	})
}

func TestJSON(t *testing.T) {
	doc := `{"avg_bus_bandwidth": {"bandwidth": 137.2, "okay": "unchecked"},
 "results": [{"size": 8, "out_of_place": {"time": 36.5, "bus_bw": 0}}, {"size": 16, "out_of_place": {"time": 35.5, "bus_bw": Infinity}}]}`
	t.Run("fields", func(t *testing.T) {
		samples := parseText(t, "json", doc, Options{"fields": "busbw=avg_bus_bandwidth.bandwidth, t16=results.1.out_of_place.time", "unit": "GB/s", "better": "higher"})
		require.Equal(t, []record.Sample{{Name: "busbw", Unit: "GB/s", Value: 137.2, Better: record.Higher}, {Name: "t16", Unit: "GB/s", Value: 35.5, Better: record.Higher}}, samples)
	})
	t.Run("every number without fields", func(t *testing.T) {
		finite := strings.Replace(doc, "Infinity", "12.5", 1)
		samples := parseText(t, "json", finite, nil)
		require.Len(t, samples, 7)
		requireSelected(t, samples, []selected{{"results.0.out_of_place.time", "value", 36.5}})
	})
	t.Run("JSON lines repeat", func(t *testing.T) {
		samples := parseText(t, "json", "{\"x\": 1}\n{\"x\": 3}\n{\"x\": 2}\n", Options{"fields": "x=x"})
		requireSelected(t, samples, []selected{{"x", "value", 2}})
	})
	runErrorCases(t, []errorCase{
		{name: "missing key", format: "json", input: doc, opts: Options{"fields": "bw=avg_bus_bandwidth.bw"},
			is: ErrSyntax, mention: []string{`no key "bw"`, "bandwidth, okay"}},
		{name: "not a number", format: "json", input: doc, opts: Options{"fields": "ok=avg_bus_bandwidth.okay"}, mention: []string{"string, not a number"}},
		{name: "every number holds an infinity", format: "json", input: doc, is: ErrBenchmarkFailed,
			mention: []string{"<input>:2:", "results.1.out_of_place.bus_bw is +Inf", `bus_bw\": Infinity`}},
		{name: "index out of range", format: "json", input: doc, opts: Options{"fields": "x=results.5.size"}, mention: []string{`"5" is not an index`}},
		{name: "bad field spec", format: "json", input: doc, opts: Options{"fields": "results.0.size"}, mention: []string{"not name=path"}},
		{name: "bad better", format: "json", input: doc, opts: Options{"better": "up"}, mention: []string{`got "up"`}},
		{name: "invalid JSON", format: "json", input: "{\"a\": 1,\n\"b\": }\n", is: ErrSyntax, mention: []string{"<input>:2:"}},
		{name: "no numbers", format: "json", input: `{"a": "b"}`, is: ErrNoResults},
	})
}

func TestRegex(t *testing.T) {
	out := "Throughput: 5.35 requests/s, 2735.50 total tokens/s, 1369.41 output tokens/s\nAvg latency: 5.25 seconds\n"
	t.Run("value only", func(t *testing.T) {
		samples := parseText(t, "regex", out, Options{"pattern": `(?P<value>[0-9.]+) output tokens/s`, "unit": "tok/s", "name": "output", "better": "higher"})
		require.Equal(t, []record.Sample{{Name: "output", Unit: "tok/s", Value: 1369.41, Better: record.Higher}}, samples)
	})
	t.Run("name group", func(t *testing.T) {
		samples := parseText(t, "regex", out, Options{"pattern": `(?P<value>[0-9.]+) (?P<name>total|output) tokens/s`, "unit": "tok/s"})
		requireSelected(t, samples, []selected{{"total", "tok/s", 2735.5}, {"output", "tok/s", 1369.41}})
	})
	runErrorCases(t, []errorCase{
		{name: "no value group", format: "regex", input: out, opts: Options{"pattern": `([0-9.]+) s`, "unit": "s"}, mention: []string{"(?P<value>"}},
		{name: "no unit", format: "regex", input: out, opts: Options{"pattern": `(?P<value>[0-9.]+) seconds`}, mention: []string{"unit must be set"}},
		{name: "bad pattern", format: "regex", input: out, opts: Options{"pattern": `(?P<value>[`, "unit": "s"}, mention: []string{"regex pattern"}},
		{name: "value not a number", format: "regex", input: out, opts: Options{"pattern": `Avg (?P<value>\w+)`, "unit": "s"},
			is: ErrSyntax, mention: []string{"<input>:2:", `"latency"`}},
		{name: "no match", format: "regex", input: out, opts: Options{"pattern": `P99: (?P<value>[0-9.]+)`, "unit": "s"},
			is: ErrNoResults, mention: []string{"Throughput: 5.35"}},
	})
}
