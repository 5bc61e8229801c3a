package record

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEffect(t *testing.T) {
	tests := []struct {
		name    string
		e       Effect
		text    string
		inverse Effect
	}{
		{name: "a drop", e: Effect{Pct: -20, Interval: Interval{Lo: -25, Hi: -10}}, text: "-20.0% [-25.0%, -10.0%]",
			inverse: Effect{Pct: 25, Interval: Interval{Lo: 100.0 / 9, Hi: 100.0 / 3}}},
		{name: "no change", e: Effect{Interval: Interval{Lo: -1, Hi: 1}}, text: "+0.0% [-1.0%, +1.0%]",
			inverse: Effect{Interval: Interval{Lo: -100.0 / 101, Hi: 100.0 / 99}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.text, tt.e.String())
			inv := tt.e.Inverse()
			assert.InDelta(t, tt.inverse.Pct, inv.Pct, 1e-9)
			assert.InDelta(t, tt.inverse.Lo, inv.Lo, 1e-9)
			assert.InDelta(t, tt.inverse.Hi, inv.Hi, 1e-9)
			assert.True(t, tt.e.Contains(tt.e.Pct))
		})
	}
}

// TestFindingJSONKeepsItsNames reads a finding as stores and the API have
// always written it, with its effects under their old flat names, and
// writes it back the same.
func TestFindingJSONKeepsItsNames(t *testing.T) {
	const stored = `{
	  "good": {"commit": {"hash": "a", "subject": "", "author": "", "date": "0001-01-01T00:00:00Z"}, "n": 12, "median": 88.7, "lo": 88.3, "hi": 89.02},
	  "culprits": [{
	    "commit": {"hash": "c", "subject": "", "author": "", "date": "0001-01-01T00:00:00Z"},
	    "confidence": 0.99, "delta_pct": -14.8, "ci_lo_pct": -15.9, "ci_hi_pct": -13.6,
	    "hunk_effect": {"applied_pct": -14.1, "applied_lo_pct": -15.3, "applied_hi_pct": -12.9, "reverted_pct": 15.3, "reverted_lo_pct": 13.9, "reverted_hi_pct": 16.7},
	    "confirmation": {"confirmed": true, "pairs": 12, "fresh": 8, "delta_pct": -14.7, "lo_pct": -15.8, "hi_pct": -13.5, "text": "t"}
	  }]
	}`
	var f Finding
	require.NoError(t, json.Unmarshal([]byte(stored), &f))
	assert.Equal(t, Interval{Lo: 88.3, Hi: 89.02}, f.Good.Interval)
	c := f.Culprits[0]
	assert.Equal(t, Effect{Pct: -14.8, Interval: Interval{Lo: -15.9, Hi: -13.6}}, c.Effect)
	assert.Equal(t, HunkEffect{Applied: &Effect{Pct: -14.1, Interval: Interval{Lo: -15.3, Hi: -12.9}}, Reverted: &Effect{Pct: 15.3, Interval: Interval{Lo: 13.9, Hi: 16.7}}}, *c.HunkEffect)
	assert.Equal(t, Effect{Pct: -14.7, Interval: Interval{Lo: -15.8, Hi: -13.5}}, c.Confirmation.Effect)
	assert.True(t, c.Confirmation.Confirmed)

	out, err := json.Marshal(f)
	require.NoError(t, err)
	var want, got map[string]any
	require.NoError(t, json.Unmarshal([]byte(stored), &want))
	require.NoError(t, json.Unmarshal(out, &got))
	for _, key := range []string{"good", "culprits"} {
		assert.Equal(t, want[key], got[key], key)
	}
}

// TestHunkEffectNotMeasured: an effect of the hunks that was not measured
// is nil, stored without its three numbers; an older perfbot's three
// zeros read as not measured.
func TestHunkEffectNotMeasured(t *testing.T) {
	measured := &Effect{Pct: -14.1, Interval: Interval{Lo: -15.3, Hi: -12.9}}
	for _, tc := range []struct {
		name   string
		stored string
		want   HunkEffect
	}{
		{"both measured", `{"applied_pct":-14.1,"applied_lo_pct":-15.3,"applied_hi_pct":-12.9,"reverted_pct":-14.1,"reverted_lo_pct":-15.3,"reverted_hi_pct":-12.9}`,
			HunkEffect{Applied: measured, Reverted: measured}},
		{"reverted not measured", `{"applied_pct":-14.1,"applied_lo_pct":-15.3,"applied_hi_pct":-12.9}`, HunkEffect{Applied: measured}},
		{"an older perfbot's zeros", `{"applied_pct":-14.1,"applied_lo_pct":-15.3,"applied_hi_pct":-12.9,"reverted_pct":0,"reverted_lo_pct":0,"reverted_hi_pct":0}`,
			HunkEffect{Applied: measured}},
		{"neither", `{}`, HunkEffect{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got HunkEffect
			require.NoError(t, json.Unmarshal([]byte(tc.stored), &got))
			assert.Equal(t, tc.want, got)
			out, err := json.Marshal(got)
			require.NoError(t, err)
			var again HunkEffect
			require.NoError(t, json.Unmarshal(out, &again))
			assert.Equal(t, tc.want, again, "stored as %s", out)
			if tc.want.Reverted == nil {
				assert.NotContains(t, string(out), "reverted")
			}
		})
	}
}
