package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/views"
)

// specConfig is a testbed-like configuration with the breakdown: the
// benchmark times the whole cycle (ms/verify) and the draft's part of it.
const specConfig = `repo: {url: ./repo}
benchmarks: [{name: engine, run: ./bench.test, format: gobench}]
metrics:
  - {name: verify_tok_s, benchmark: engine, select: BenchmarkVerifyStep, unit: tok/s, primary: true}
  - {name: verify_step_ms, benchmark: engine, select: BenchmarkVerifyStep, unit: ms/verify}
  - {name: draft_ms, benchmark: engine, select: BenchmarkVerifyStep, unit: ms/draft}
  - {name: decode_ms, benchmark: engine, select: BenchmarkDecode, unit: ms/token}
  - {name: accept_len, benchmark: engine, select: BenchmarkVerifyStep, unit: tok/verify, better: higher}
speculative: {tok_s: verify_tok_s, cycle_ms: verify_step_ms, draft_ms: draft_ms, decode_ms: decode_ms, accept_len: accept_len, tokens: 4}
`

// specHistoryRows are six runs of each of three commits, newest first:
// the newest slowed the verify pass until speculation costs more than it
// saves, the one before it lowered the acceptance a little.
func specHistoryRows() []views.HistoryRow {
	jitter := []float64{1.000, 1.012, 0.991, 1.006, 0.985, 1.015}
	commits := []struct {
		hash, subject                string
		cycle, draft, decode, accept float64
	}{
		{hBad, "attention: recompute the verify mask per layer", 6.4, 1.9, 1.27, 3.625},
		{hCulprit, "speculative: draft from the last layer only", 3.4, 1.4, 1.27, 3.375},
		{hGood, "communicator: comment the ring", 3.4, 1.4, 1.27, 3.625},
	}
	start := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	var rows []views.HistoryRow
	id := uint64(100)
	for ci, c := range commits {
		for i, j := range jitter {
			id--
			at := start.Add(-time.Duration(ci)*24*time.Hour - time.Duration(i)*time.Minute)
			cycle, draft, accept := c.cycle*j, c.draft*jitter[(i+2)%6], c.accept
			for _, m := range []struct {
				name, unit string
				v          float64
			}{{"verify_tok_s", "tok/s", accept / cycle * 1000}, {"verify_step_ms", "ms/verify", cycle}, {"draft_ms", "ms/draft", draft},
				{"decode_ms", "ms/token", c.decode * jitter[(i+4)%6]}, {"accept_len", "tok/verify", accept}} {
				rows = append(rows, views.HistoryRow{Metric: m.name, Unit: m.unit, Value: m.v, Commit: c.hash, Subject: c.subject,
					Time: at, Host: "local", Status: "ok", RunID: id})
			}
		}
	}
	return rows
}

func TestPrintSpecHistory(t *testing.T) {
	cfg, err := config.Parse([]byte(specConfig), "perfbot.yaml")
	require.NoError(t, err)
	rows, err := views.SpeculativeHistory(cfg, specHistoryRows(), 0)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	require.True(t, rows[0].Slower, "the newest commit's speculation is slower than plain decoding")
	require.False(t, rows[2].Slower)

	var text, js bytes.Buffer
	require.NoError(t, printSpecHistory(&text, rows, cfg.Speculative.Tokens, "ms", time.UTC))
	golden(t, "history-speculative.golden", text.Bytes())
	require.NoError(t, writeJSON(&js, rows))
	golden(t, "history-speculative.json.golden", js.Bytes())

	limited, err := views.SpeculativeHistory(cfg, specHistoryRows(), 1)
	require.NoError(t, err)
	require.Equal(t, rows[:1], limited)

	cfg.Speculative = nil
	_, err = views.SpeculativeHistory(cfg, specHistoryRows(), 0)
	require.ErrorContains(t, err, "no speculative block")
}

func TestHistorySpeculativeUsage(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := perfbot(t, dir, "history", "--speculative", "--metric", "verify_tok_s")
	require.Equal(t, exitInput, code)
	require.Contains(t, errOut, "group [speculative metric] are set none of the others can be")
}
