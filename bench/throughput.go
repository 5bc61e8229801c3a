package bench

import (
	"io"
	"regexp"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// vllm bench throughput (vllm/benchmarks/throughput.py, and the older
// benchmarks/benchmark_throughput.py) runs the offline engine over a
// request set and prints:
//
//	Throughput: {:.2f} requests/s, {:.2f} total tokens/s, {:.2f} output tokens/s
//	Total num prompt tokens:  {}
//	Total num output tokens:  {}
//
// Versions before the output rate was added print
// "Throughput: X requests/s, Y tokens/s". --output-json writes
// {elapsed_time, num_requests, total_num_tokens, requests_per_second,
// tokens_per_second}.
var (
	vllmThroughput = regexp.MustCompile(`^Throughput:\s*(\S+)\s+requests/s,\s*(\S+)\s+(?:total\s+)?tokens/s(?:,\s*(\S+)\s+output tokens/s)?\s*$`)
	vllmTotalNum   = regexp.MustCompile(`^Total num (prompt|output) tokens:\s*(\S+)\s*$`)
)

// vllmThroughputKeys are the names and units of the JSON file, which the
// printed lines use too.
var vllmThroughputKeys = []resultKey{
	{"requests_per_second", "req/s", record.Higher},
	{"tokens_per_second", "tok/s", record.Higher},
	{"output_tokens_per_second", "tok/s", record.Higher},
	{"elapsed_time", "s", record.Lower},
	{"num_requests", "value", ""},
	{"total_num_tokens", "value", ""},
}

// parseVLLMThroughput reads vllm bench throughput's printed result, or its
// --output-json file: requests_per_second (req/s), tokens_per_second
// (total tokens, tok/s), output_tokens_per_second (tok/s) and, from the
// lines after it, total_num_prompt_tokens and total_num_output_tokens
// (unit "value"). A "Throughput:" line that does not read is an error that
// quotes it.
func parseVLLMThroughput(r io.Reader, file string, _ Options) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	if looksLikeJSONObject(lines) {
		return vllmThroughputJSON(lines, file)
	}
	var samples []record.Sample
	seen := false
	for i, raw := range lines {
		line, n := strings.TrimSpace(raw), i+1
		if m := vllmTotalNum.FindStringSubmatch(line); m != nil && seen {
			v, err := numberAt(file, n, line, "total num "+m[1]+" tokens", m[2])
			if err != nil {
				return nil, err
			}
			samples = append(samples, record.Sample{Name: "total_num_" + m[1] + "_tokens", Unit: "value", Value: v})
			continue
		}
		if !strings.HasPrefix(line, "Throughput:") {
			continue
		}
		m := vllmThroughput.FindStringSubmatch(line)
		if m == nil {
			return nil, &OutputError{File: file, Line: n, Text: line,
				Msg: `want "Throughput: X requests/s, Y total tokens/s, Z output tokens/s"`, Err: ErrSyntax}
		}
		seen = true
		for j, name := range []string{"requests_per_second", "tokens_per_second", "output_tokens_per_second"} {
			if m[j+1] == "" {
				continue // an older version: no output rate
			}
			v, err := numberAt(file, n, line, name, m[j+1])
			if err != nil {
				return nil, err
			}
			k := vllmThroughputKeys[j]
			samples = append(samples, record.Sample{Name: k.key, Unit: k.unit, Value: v, Better: k.better})
		}
	}
	if len(samples) == 0 {
		return nil, pythonFailure(file, lines, `"Throughput: … requests/s" line`)
	}
	return samples, nil
}

func vllmThroughputJSON(lines []string, file string) ([]record.Sample, error) {
	docs, err := decodeJSONObjects(lines, file)
	if err != nil {
		return nil, err
	}
	var samples []record.Sample
	for _, d := range docs {
		got, err := keySamples(d, vllmThroughputKeys, "", lines, file)
		if err != nil {
			return nil, err
		}
		samples = append(samples, got...)
	}
	if len(samples) == 0 {
		return nil, noResults(file, lines, "vllm bench throughput keys (requests_per_second, tokens_per_second, …)")
	}
	return samples, nil
}
