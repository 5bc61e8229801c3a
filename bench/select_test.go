package bench

import (
	"testing"

	"github.com/perfbot/perfbot/record"
	"github.com/stretchr/testify/require"
)

func TestSelect(t *testing.T) {
	samples := []record.Sample{
		{Name: "VerifyStep-2", Unit: "tok/s", Value: 100},
		{Name: "VerifyStep-2", Unit: "tok/s", Value: 300},
		{Name: "VerifyStep-2", Unit: "tok/s", Value: 200},
		{Name: "VerifyStep-2", Unit: "sec/op", Value: 2e-3},
		{Name: "Decode/bs=1-2", Unit: "tok/s", Value: 10},
		{Name: "Decode/bs=8-2", Unit: "tok/s", Value: 80},
		{Name: "Decode/bs=8-2", Unit: "tok/s", Value: 90},
		{Name: "AllReduce/size=1GiB-8", Unit: "GB/s", Value: 400},
		{Name: "Procs-1", Unit: "us/op", Value: 1},
		{Name: "Procs-4", Unit: "us/op", Value: 4},
		{Name: "ttft", Unit: "ms", Value: 5},
	}
	tests := []struct {
		name    string
		sel     string
		unit    string
		want    float64
		wantErr []string
	}{
		{name: "median of -count runs", sel: "BenchmarkVerifyStep", unit: "tok/s", want: 200},
		{name: "without prefix", sel: "VerifyStep", unit: "tok/s", want: 200},
		{name: "with -N suffix", sel: "VerifyStep-2", unit: "tok/s", want: 200},
		{name: "even count averages the middle", sel: "Decode/bs=8", unit: "tok/s", want: 85},
		{name: "ns/op from sec/op", sel: "VerifyStep", unit: "ns/op", want: 2e6},
		{name: "top level with one sub-benchmark", sel: "AllReduce", unit: "GB/s", want: 400},
		{name: "plain name", sel: "ttft", unit: "ms", want: 5},
		{name: "empty unit picks the only unit", sel: "ttft", want: 5},
		{name: "exact -N picks one of several", sel: "Procs-4", unit: "us/op", want: 4},
		{name: "top level with two sub-benchmarks", sel: "Decode", unit: "tok/s",
			wantErr: []string{"ambiguous", "Decode/bs=1-2", "Decode/bs=8-2"}},
		{name: "two GOMAXPROCS values", sel: "Procs", unit: "us/op", wantErr: []string{"ambiguous", "Procs-1", "Procs-4"}},
		{name: "unknown name lists names", sel: "Prefill", unit: "tok/s",
			wantErr: []string{"no such benchmark", "VerifyStep-2", "ttft"}},
		{name: "unknown unit lists units", sel: "VerifyStep", unit: "GB/s", wantErr: []string{"no values in GB/s", "tok/s, sec/op"}},
		{name: "empty unit with two units", sel: "VerifyStep", wantErr: []string{"no unit given", "tok/s, sec/op"}},
		{name: "sub-benchmark must match fully", sel: "Decode/bs=2", unit: "tok/s", wantErr: []string{"no such benchmark"}},
		{name: "empty selector", sel: "", unit: "tok/s", wantErr: []string{"empty benchmark name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Select(samples, tc.sel, tc.unit)
			if tc.wantErr != nil {
				require.Error(t, err)
				for _, m := range tc.wantErr {
					require.Contains(t, err.Error(), m)
				}
				return
			}
			require.NoError(t, err)
			require.InDelta(t, tc.want, got, 1e-9*tc.want)
		})
	}
}

func TestSelectDoesNotReorder(t *testing.T) {
	samples := []record.Sample{{Name: "a", Unit: "u", Value: 3}, {Name: "a", Unit: "u", Value: 1}, {Name: "a", Unit: "u", Value: 2}}
	_, err := Select(samples, "a", "u")
	require.NoError(t, err)
	require.Equal(t, []float64{3, 1, 2}, []float64{samples[0].Value, samples[1].Value, samples[2].Value})
}

func TestParseUnknownFormat(t *testing.T) {
	_, err := Parse("csv", nil, nil)
	require.Error(t, err)
	for _, f := range Formats() {
		require.Contains(t, err.Error(), f)
	}
	require.Equal(t, []string{"gobench", "nccl-tests", "nccl-debug", "sglang-serving", "sglang-log", "sglang-one-batch", "vllm-throughput", "vllm-serve", "openai", "prometheus", "json", "regex"}, Formats())
}
