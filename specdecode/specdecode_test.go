package specdecode

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jitter are run-to-run factors of a quiet host (±1.5%), fixed so that the
// tests are repeatable.
var jitter = []float64{1.000, 1.012, 0.991, 1.006, 0.985, 1.015, 0.996, 1.003}

// runs returns len(jitter) runs around c, each term jittered with the
// factors in a different order so that the terms do not move together.
func runs(c Cycle) []Cycle {
	out := make([]Cycle, len(jitter))
	n := len(jitter)
	for i := range out {
		out[i] = Cycle{VerifyMs: c.VerifyMs * jitter[i], DraftMs: c.DraftMs * jitter[(i+3)%n],
			DecodeMs: c.DecodeMs * jitter[(i+5)%n], Accept: c.Accept * jitter[(i+1)%n]}
	}
	return out
}

func TestCycle(t *testing.T) {
	tests := []struct {
		name             string
		c                Cycle
		speedUp, breakEv float64
		err              string
	}{
		{name: "the seed session: verify 28.5 ms, plain decode 12.2 ms, 2.1 accepted",
			c: Cycle{VerifyMs: 28.5, DraftMs: 5.7, DecodeMs: 12.2, Accept: 2.1}, speedUp: 2.1 * 12.2 / 34.2, breakEv: 34.2 / 12.2},
		{name: "speculation pays", c: Cycle{VerifyMs: 14, DraftMs: 2, DecodeMs: 12, Accept: 3}, speedUp: 2.25, breakEv: 16.0 / 12},
		{name: "a draft that costs nothing (n-gram)", c: Cycle{VerifyMs: 13, DecodeMs: 12, Accept: 1.3}, speedUp: 1.2, breakEv: 13.0 / 12},
		{name: "no decode time", c: Cycle{VerifyMs: 13, DraftMs: 1, Accept: 2}, err: "decode time 0"},
		{name: "negative draft", c: Cycle{VerifyMs: 13, DraftMs: -1, DecodeMs: 12, Accept: 2}, err: "draft time -1"},
		{name: "NaN acceptance", c: Cycle{VerifyMs: 13, DraftMs: 1, DecodeMs: 12, Accept: math.NaN()}, err: "acceptance length NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Check()
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				_, err = Summarize([]Cycle{tc.c}, 0.95)
				require.ErrorContains(t, err, "run 1: "+tc.err)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tc.speedUp, tc.c.SpeedUp(), 1e-12)
			assert.InDelta(t, tc.breakEv, tc.c.BreakEven(), 1e-12)
			// The speed-up is the acceptance over its break-even.
			assert.InDelta(t, tc.c.Accept/tc.c.BreakEven(), tc.c.SpeedUp(), 1e-12)
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name    string
		c       Cycle
		slower  bool
		costPct float64 // approximately
	}{
		{name: "slower than plain decoding", c: Cycle{VerifyMs: 28.5, DraftMs: 5.7, DecodeMs: 12.2, Accept: 2.1}, slower: true, costPct: 25},
		{name: "faster", c: Cycle{VerifyMs: 14, DraftMs: 2, DecodeMs: 12, Accept: 3}, costPct: -125},
		{name: "break-even within the noise is not slower", c: Cycle{VerifyMs: 10, DraftMs: 2, DecodeMs: 12, Accept: 1.0}, costPct: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Summarize(runs(tc.c), 0.95)
			require.NoError(t, err)
			assert.Equal(t, len(jitter), b.N)
			assert.Equal(t, tc.slower, b.Slower())
			assert.InDelta(t, tc.costPct, b.CostPct(), 2.5)
			for _, e := range []Estimate{b.VerifyMs, b.DraftMs, b.DecodeMs, b.Accept, b.SpeedUp, b.BreakEven} {
				assert.LessOrEqual(t, e.Lo, e.Median)
				assert.GreaterOrEqual(t, e.Hi, e.Median)
			}
			assert.InDelta(t, tc.c.SpeedUp(), b.SpeedUp.Median, 0.03*tc.c.SpeedUp())
			assert.InDelta(t, tc.c.BreakEven(), b.BreakEven.Median, 0.03*tc.c.BreakEven())
		})
	}
	_, err := Summarize(nil, 0.95)
	require.ErrorIs(t, err, ErrNoRuns)
}

func TestAttribute(t *testing.T) {
	base := Cycle{VerifyMs: 12, DraftMs: 2, DecodeMs: 10, Accept: 3}
	tests := []struct {
		name     string
		bad      Cycle
		lead     string
		expected float64 // percent, from the medians of the model
		effects  map[string]float64
	}{
		{name: "the verify step slows down", bad: Cycle{VerifyMs: 30, DraftMs: 2, DecodeMs: 10, Accept: 3}, lead: TermVerify,
			expected: (14.0/32 - 1) * 100, effects: map[string]float64{TermVerify: (14.0/32 - 1) * 100, TermDraft: 0, TermAccept: 0}},
		{name: "acceptance drops", bad: Cycle{VerifyMs: 12, DraftMs: 2, DecodeMs: 10, Accept: 2.1}, lead: TermAccept,
			expected: -30, effects: map[string]float64{TermAccept: -30, TermVerify: 0, TermDraft: 0}},
		{name: "the draft slows down, acceptance improves a little", bad: Cycle{VerifyMs: 12, DraftMs: 6, DecodeMs: 10, Accept: 3.3}, lead: TermDraft,
			expected: (3.3/18/(3.0/14) - 1) * 100, effects: map[string]float64{TermDraft: (14.0/18 - 1) * 100, TermAccept: 10}},
		{name: "verify and draft both slow down: their shares multiply to the cycle's", bad: Cycle{VerifyMs: 18, DraftMs: 4, DecodeMs: 10, Accept: 3},
			lead: TermVerify, expected: (14.0/22 - 1) * 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Attribute(runs(base), runs(tc.bad), 0.95)
			require.NoError(t, err)
			require.Len(t, a.Terms, 3)
			assert.Equal(t, tc.lead, a.Lead().Name)
			assert.InDelta(t, tc.expected, a.ExpectedPct, 2)
			product := 1.0
			for _, term := range a.Terms {
				product *= 1 + term.EffectPct/100
				if want, ok := tc.effects[term.Name]; ok {
					assert.InDelta(t, want, term.EffectPct, 2, term.Name)
				}
				if term.Bounded {
					assert.LessOrEqual(t, term.LoPct, term.ChangePct, term.Name)
					assert.GreaterOrEqual(t, term.HiPct, term.ChangePct, term.Name)
					assert.LessOrEqual(t, term.EffectLoPct, term.EffectHiPct, term.Name)
				}
			}
			// The effects multiply to the expected change exactly.
			assert.InDelta(t, 1+a.ExpectedPct/100, product, 1e-9)
			// The lead term's interval excludes no change.
			lead := a.Lead()
			require.True(t, lead.Bounded)
			assert.False(t, lead.LoPct <= 0 && lead.HiPct >= 0, "%s changed %.1f%% [%.1f, %.1f]", lead.Name, lead.ChangePct, lead.LoPct, lead.HiPct)
		})
	}
}

func TestAttributeFewRuns(t *testing.T) {
	base := Cycle{VerifyMs: 12, DraftMs: 2, DecodeMs: 10, Accept: 3}
	slow := Cycle{VerifyMs: 30, DraftMs: 2, DecodeMs: 10, Accept: 3}
	tests := []struct {
		name    string
		n       int
		bounded bool
	}{
		// Two runs a side: Student's t on their own noise, two degrees
		// of freedom: wide, but the verify step's change is clear of zero.
		{name: "two runs a side bound each term on their own noise", n: 2, bounded: true},
		{name: "three runs a side too", n: 3, bounded: true},
		{name: "one run a side bounds nothing", n: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Attribute(runs(base)[:tc.n], runs(slow)[:tc.n], 0.95)
			require.NoError(t, err)
			lead := a.Lead()
			assert.Equal(t, TermVerify, lead.Name)
			for _, term := range a.Terms {
				assert.Equal(t, tc.bounded, term.Bounded, term.Name)
				if term.Bounded {
					assert.Less(t, term.LoPct, term.ChangePct, term.Name)
					assert.Greater(t, term.HiPct, term.ChangePct, term.Name)
				}
			}
			if tc.bounded {
				assert.Positive(t, lead.LoPct, "the verify step's slowdown is clear of zero")
			}
		})
	}
	_, err := Attribute(nil, runs(base), 0.95)
	require.ErrorContains(t, err, "good end")
}
