package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

const loadgenReport = `{"tool":"perfbot-loadgen","load":"http://127.0.0.1:1/v1/completions: 8 requests","metrics":{"completed":8,"failed":0,"output_throughput":412.5,"median_ttft_ms":3.25,"p99_itl_ms":1.5,"request_throughput":12.9,"request_goodput":11,"spec_decode_acceptance_length":2.4,"duration":0.62}}`

func TestParseOpenAI(t *testing.T) {
	tests := []struct {
		name  string
		input string
		opts  Options
		want  map[string]record.Sample // some of the samples
		count int
		err   error
		quote string
	}{
		{
			name:  "the report among other lines",
			input: "load: http://127.0.0.1:1/v1/completions\noutput_throughput  412.5\n" + loadgenReport + "\n",
			want: map[string]record.Sample{
				"output_throughput":             {Name: "output_throughput", Unit: "tok/s", Better: record.Higher, Value: 412.5},
				"median_ttft_ms":                {Name: "median_ttft_ms", Unit: "ms", Better: record.Lower, Value: 3.25},
				"request_goodput":               {Name: "request_goodput", Unit: "req/s", Better: record.Higher, Value: 11},
				"spec_decode_acceptance_length": {Name: "spec_decode_acceptance_length", Unit: "value", Better: record.Higher, Value: 2.4},
				"duration":                      {Name: "duration", Unit: "s", Better: record.Lower, Value: 0.62},
			},
			count: 9,
		},
		{
			name:  "a server ratio counted in plain decode steps",
			input: `{"tool":"perfbot-loadgen","metrics":{"completed":3,"failed":0,"verify_decode_steps":3.9,"draft_ms":1.5}}`,
			want: map[string]record.Sample{
				"verify_decode_steps": {Name: "verify_decode_steps", Unit: "decode-steps", Better: record.Lower, Value: 3.9},
				"draft_ms":            {Name: "draft_ms", Unit: "ms", Better: record.Lower, Value: 1.5},
			},
			count: 4,
		},
		{
			name:  "the last report counts",
			input: strings.Replace(loadgenReport, "412.5", "1", 1) + "\n" + loadgenReport + "\n",
			want:  map[string]record.Sample{"output_throughput": {Name: "output_throughput", Unit: "tok/s", Better: record.Higher, Value: 412.5}},
			count: 9,
		},
		{
			name:  "failed requests fail the benchmark, quoting the errors",
			input: `{"tool":"perfbot-loadgen","metrics":{"completed":6,"failed":2,"output_throughput":3},"errors":{"HTTP 500: overloaded":2}}`,
			err:   ErrBenchmarkFailed, quote: "2× HTTP 500: overloaded",
		},
		{
			name:  "failed requests within allow_failed",
			input: `{"tool":"perfbot-loadgen","metrics":{"completed":6,"failed":2,"output_throughput":3},"errors":{"HTTP 500: overloaded":2}}`,
			opts:  Options{"allow_failed": "2"}, count: 3,
		},
		{
			name:  "no request completed",
			input: `{"tool":"perfbot-loadgen","metrics":{"completed":0,"failed":0,"duration":1}}`,
			opts:  Options{"allow_failed": "5"}, err: ErrBenchmarkFailed,
		},
		{name: "no report", input: "Traceback (most recent call last):\nConnectionRefusedError\n", err: ErrNoResults, quote: "Traceback"},
		{name: "a report without metrics", input: `{"tool":"perfbot-loadgen","metrics":{}}`, err: ErrNoResults},
		{name: "a cut report", input: `{"tool":"perfbot-loadgen","metrics":{"completed":`, err: ErrSyntax},
		{name: "a metric that is not a number", input: `{"tool":"perfbot-loadgen","metrics":{"completed":"8"}}`, err: ErrSyntax, quote: `"completed"`},
		{name: "an overflowing metric", input: `{"tool":"perfbot-loadgen","metrics":{"completed":8,"mean_ttft_ms":1e999}}`, err: ErrBenchmarkFailed},
		{name: "another tool", input: `{"tool":"other","x":"perfbot-loadgen"}`, err: ErrSyntax},
		{name: "a bad allow_failed", input: loadgenReport, opts: Options{"allow_failed": "some"}, err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, err := Parse("openai", strings.NewReader(tt.input), tt.opts)
			if tt.err != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, tt.err), "%v is not %v", err, tt.err)
				assert.Contains(t, err.Error(), tt.quote)
				return
			}
			require.NoError(t, err)
			assert.Len(t, samples, tt.count)
			for _, s := range samples {
				if want, ok := tt.want[s.Name]; ok {
					assert.Equal(t, want, s)
				}
			}
		})
	}
}

// TestParseOpenAISample reads a report perfbot loadgen printed against
// the testbed server, stderr summary included.
func TestParseOpenAISample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "perfbot_loadgen.txt"))
	require.NoError(t, err)
	samples, err := Parse("openai", strings.NewReader(string(data)), nil)
	require.NoError(t, err)
	for _, name := range []string{"output_throughput", "request_throughput", "mean_ttft_ms", "p99_tpot_ms", "median_itl_ms", "p90_e2el_ms", "spec_decode_acceptance_length", "request_goodput"} {
		v, err := Select(samples, name, "")
		if assert.NoError(t, err, name) {
			assert.Positive(t, v, name)
		}
	}
}
