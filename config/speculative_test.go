package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specMetrics is minimal with the metrics of a speculative breakdown.
const specMetrics = minimal + `  - name: verify_ms
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: ms/verify
  - name: draft_ms
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: ms/draft
  - name: decode_ms
    benchmark: engine
    select: BenchmarkDecode
    unit: ms/token
  - name: accept_len
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/verify
    better: higher
`

func TestSpeculative(t *testing.T) {
	tests := []struct {
		name  string
		block string
		want  *Speculative
		err   string // one of the errors, from its file and line on
	}{
		{name: "absent", block: "", want: nil},
		{name: "verify and draft apart",
			block: "speculative:\n  tok_s: verify_tok_s\n  verify_ms: verify_ms\n  draft_ms: draft_ms\n  decode_ms: decode_ms\n  accept_len: accept_len\n  tokens: 4\n",
			want:  &Speculative{TokS: "verify_tok_s", VerifyMs: "verify_ms", DraftMs: "draft_ms", DecodeMs: "decode_ms", AcceptLen: "accept_len", Tokens: 4}},
		{name: "the whole cycle timed, no draft time",
			block: "speculative: {tok_s: verify_tok_s, cycle_ms: verify_ms, decode_ms: decode_ms, accept_len: accept_len}\n",
			want:  &Speculative{TokS: "verify_tok_s", CycleMs: "verify_ms", DecodeMs: "decode_ms", AcceptLen: "accept_len"}},
		{name: "no finding when slower",
			block: "speculative: {tok_s: verify_tok_s, cycle_ms: verify_ms, decode_ms: decode_ms, accept_len: accept_len, alert: false}\n",
			want:  &Speculative{TokS: "verify_tok_s", CycleMs: "verify_ms", DecodeMs: "decode_ms", AcceptLen: "accept_len", Quiet: true}},
		{name: "unknown metric",
			block: "speculative:\n  tok_s: verify_tok_s\n  verify_ms: verify_ms\n  decode_ms: decode_tok_s\n  accept_len: accept_len\n",
			err:   `perfbot.yaml:32: speculative.decode_ms: unknown metric "decode_tok_s" (want one of verify_tok_s, verify_ms, draft_ms, decode_ms, accept_len)`},
		{name: "no acceptance",
			block: "speculative:\n  tok_s: verify_tok_s\n  verify_ms: verify_ms\n  decode_ms: decode_ms\n",
			err:   "perfbot.yaml:30: speculative.accept_len: missing: the metric that holds it (one of verify_tok_s, verify_ms, draft_ms, decode_ms, accept_len)"},
		{name: "neither verify nor cycle",
			block: "speculative:\n  tok_s: verify_tok_s\n  decode_ms: decode_ms\n  accept_len: accept_len\n",
			err:   "perfbot.yaml:30: speculative: needs verify_ms (the verify pass of a cycle) or cycle_ms (draft and verify together)"},
		{name: "both verify and cycle",
			block: "speculative:\n  tok_s: verify_tok_s\n  verify_ms: verify_ms\n  cycle_ms: verify_ms\n  decode_ms: decode_ms\n  accept_len: accept_len\n",
			err:   "perfbot.yaml:32: speculative.cycle_ms: give verify_ms or cycle_ms, not both"},
		{name: "a misspelt key",
			block: "speculative:\n  tok_s: verify_tok_s\n  verify: verify_ms\n  decode_ms: decode_ms\n  accept_len: accept_len\n",
			err:   "perfbot.yaml:31: speculative.verify: unknown key (want one of tok_s, verify_ms, cycle_ms, draft_ms, decode_ms, accept_len, tokens, alert)"},
		{name: "tokens not a count",
			block: "speculative:\n  tok_s: verify_tok_s\n  verify_ms: verify_ms\n  decode_ms: decode_ms\n  accept_len: accept_len\n  tokens: 0\n",
			err:   "perfbot.yaml:34: speculative.tokens: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(specMetrics+tc.block), "perfbot.yaml")
			if tc.err != "" {
				var es Errors
				require.True(t, errors.As(err, &es), "error %v", err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.Speculative)
		})
	}
}

// TestMetricAlert: alert: false keeps a metric as evidence only; the
// primary metric must alert.
func TestMetricAlert(t *testing.T) {
	c, err := Parse([]byte(strings.Replace(specMetrics, "    unit: ms/draft\n", "    unit: ms/draft\n    alert: false\n", 1)), "perfbot.yaml")
	require.NoError(t, err)
	for _, m := range c.Metrics {
		assert.Equal(t, m.Name == "draft_ms", m.Quiet, m.Name)
	}
	_, err = Parse([]byte(strings.Replace(specMetrics, "    unit: tok/s\n", "    unit: tok/s\n    alert: false\n", 1)), "perfbot.yaml")
	require.ErrorContains(t, err, "perfbot.yaml:8: metrics[0].alert: the primary metric verify_tok_s must alert")
	_, err = Parse([]byte(strings.Replace(specMetrics, "    unit: tok/s\n", "    unit: tok/s\n    alert: sometimes\n", 1)), "perfbot.yaml")
	require.ErrorContains(t, err, "metrics[0].alert")
}
