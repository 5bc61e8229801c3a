package report

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/specdecode"
)

// specRuns are eight runs around c, the terms jittered apart (a quiet
// host, ±1.5%).
func specRuns(c specdecode.Cycle) []specdecode.Cycle {
	jitter := []float64{1.000, 1.012, 0.991, 1.006, 0.985, 1.015, 0.996, 1.003}
	out := make([]specdecode.Cycle, len(jitter))
	for i, j := range jitter {
		out[i] = specdecode.Cycle{VerifyMs: c.VerifyMs * j, DraftMs: c.DraftMs * jitter[(i+3)%8],
			DecodeMs: c.DecodeMs * jitter[(i+5)%8], Accept: c.Accept * jitter[(i+1)%8]}
	}
	return out
}

// verifySlowed is the seed sessions' story: the verify pass of 3 draft
// tokens went from 12 to 30 ms (extend mode without CUDA graphs) while a
// plain decode stayed at 12 ms, and speculation went from paying to
// costing.
func verifySlowed() *record.Finding {
	f := culpritWithoutHunks()
	f.Good.Median, f.Good.Lo, f.Good.Hi = 169.9, 168.2, 171.5
	f.Bad.Median, f.Bad.Lo, f.Bad.Hi = 75.66, 74.93, 76.30
	a, err := specdecode.Attribute(
		specRuns(specdecode.Cycle{VerifyMs: 12.1, DraftMs: 2.9, DecodeMs: 12.2, Accept: 2.55}),
		specRuns(specdecode.Cycle{VerifyMs: 30.4, DraftMs: 3.0, DecodeMs: 12.2, Accept: 2.52}), 0.95)
	if err != nil {
		panic(err)
	}
	a.Metric, a.Tokens = "verify_tok_s", 4
	f.Speculative = &a
	f.Culprits[0].Effect = record.Effect{Pct: -55.5, Interval: record.Interval{Lo: -56.3, Hi: -54.6}}
	f.History, f.Probes = nil, nil
	return f
}

// speculationSlower is a nightly finding: on three tips in a row,
// speculation costs more than it saves.
func speculationSlower() *record.Finding {
	bd := func(c specdecode.Cycle) record.SpecBreakdown {
		b, err := specdecode.Summarize(specRuns(c), 0.95)
		if err != nil {
			panic(err)
		}
		return b
	}
	return &record.Finding{
		Created: day(23, 2), Repo: "https://github.com/example/infer", CommitURL: "https://github.com/example/infer/commit/%s",
		Outcome: record.OutcomeSpeculationSlower, Metric: "verify_tok_s", Unit: "tok/s", Direction: record.Regression,
		Confidence: 0.95, State: record.StateKept,
		Good:       record.End{Commit: goodCommit},
		Bad:        record.End{Commit: badCommit, N: 8, Median: 61.4, Interval: record.Interval{Lo: 60.8, Hi: 62.0}},
		Candidates: []record.Commit{goodCommit, probeB, badCommit},
		Speculative: &record.SpecAttribution{Metric: "verify_tok_s", Tokens: 4,
			Good: bd(specdecode.Cycle{VerifyMs: 28.4, DraftMs: 5.7, DecodeMs: 12.2, Accept: 2.2}),
			Bad:  bd(specdecode.Cycle{VerifyMs: 28.6, DraftMs: 5.8, DecodeMs: 12.2, Accept: 2.1})},
		Reproduce: []string{"perfbot measure 9e8d7c6b5a --repeats 10", "perfbot history --speculative"},
	}
}

func TestRenderSpeculative(t *testing.T) {
	for _, tc := range []struct {
		name    string
		finding *record.Finding
		title   string
		mention []string
	}{
		{name: "culprit_speculative", finding: verifySlowed(), title: "verify_tok_s −55.5% at 3f2a9c1e00",
			mention: []string{"the largest is the **verify time**", "| verify time | 12.12 ms | 30.45 ms | +151.2% [+148.3%, +154.2%] | −54.9% [−55.4%, −54.4%] |"}},
		{name: "speculation_slower", finding: speculationSlower(),
			title:   "verify_tok_s: speculation costs 26% at 9e8d7c6b5a: break-even acceptance 2.816 of 4 tokens, measured 2.103",
			mention: []string{"3 nightly tips since", "| tonight [`9e8d7c6b5a`]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, body, err := Render(tc.finding)
			require.NoError(t, err)
			golden(t, filepath.Join("render", tc.name+".md"), "# "+title+"\n\n"+body)
			assert.Contains(t, title, tc.title)
			for _, m := range tc.mention {
				assert.Contains(t, body, m)
			}
		})
	}
	f := speculationSlower()
	f.Speculative = nil
	_, _, err := Render(f)
	require.ErrorContains(t, err, "without the breakdown")
}
