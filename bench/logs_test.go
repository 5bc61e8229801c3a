package bench

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/record"
	"github.com/stretchr/testify/require"
)

func TestSGLangLog(t *testing.T) {
	log := sampleParts(t, "sglang_server_decode_log.txt")[0]
	blockA := log[:strings.Index(log, "## block B")]
	blockB := log[strings.Index(log, "## block B"):]
	tests := []struct {
		name   string
		input  string
		want   []selected
		absent []string
	}{
		{name: "speculative decoding with accept len", input: blockA,
			want: []selected{{"gen_throughput", "tok/s", 3.12}, {"accept_len", "value", 3.08}, {"accept_rate", "value", 0.41}}},
		{name: "PD decode worker, median hides the idle first line", input: blockB,
			want: []selected{{"gen_throughput", "tok/s", 77.90}}, absent: []string{"accept_len", "accept_rate"}},
		{name: "whole log", input: log, want: []selected{{"gen_throughput", "tok/s", (77.89 + 77.90) / 2}, {"accept_len", "value", 3.08}}},
		{name: "other TP ranks are skipped", input: blockB + "\n[2026-03-02 14:44:13 TP1] Decode batch, #running-req: 1, gen throughput (token/s): 1.00, #queue-req: 0\n",
			want: []selected{{"gen_throughput", "tok/s", 77.90}}},
		{name: "older 'Decode batch.' wording", input: "[2024-05-01 10:00:00 TP0] Decode batch. #running-req: 8, #token: 900, token usage: 0.01, gen throughput (token/s): 812.50, #queue-req: 0\n",
			want: []selected{{"gen_throughput", "tok/s", 812.5}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples := parseText(t, "sglang-log", tc.input, nil)
			requireSelected(t, samples, tc.want)
			for _, s := range samples {
				require.NotContains(t, tc.absent, s.Name)
				require.Equal(t, record.Higher, s.Better)
			}
		})
	}
	runErrorCases(t, []errorCase{
		{name: "only prefill lines", format: "sglang-log", input: strings.Split(blockA, "\n")[1], is: ErrNoResults, mention: []string{"Prefill batch"}},
		{name: "server crashed", format: "sglang-log", input: "[2026-01-01 TP0] Load weight begin\nTraceback (most recent call last):\n  File \"x.py\"\ntorch.OutOfMemoryError: CUDA out of memory\n",
			is: ErrBenchmarkFailed, mention: []string{"torch.OutOfMemoryError"}},
		{name: "bad number", format: "sglang-log", input: "[x TP0] Decode batch, gen throughput (token/s): 1.2.3, #queue-req: 0\n",
			is: ErrSyntax, mention: []string{"<input>:1:", "1.2.3"}},
		{name: "decode lines without throughput", format: "sglang-log", input: "[x TP0] Decode batch, #running-req: 1\n", is: ErrSyntax},
	})
}
