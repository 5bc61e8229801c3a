package record

import (
	"encoding/json"
	"fmt"
)

// Interval bounds an estimate: its confidence interval [Lo, Hi], in the
// estimate's own unit (a median's, or percent for an Effect).
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Contains reports whether x lies within [Lo, Hi].
func (i Interval) Contains(x float64) bool { return i.Lo <= x && x <= i.Hi }

// Effect is a relative change in percent of a reference (−10 means 10%
// lower) with its confidence interval, in percent too: stats.Delta's
// estimate, wherever a change is shown.
type Effect struct {
	Pct float64 `json:"pct"`
	Interval
}

// String formats the effect as the command line and the issues print it:
// "-14.8% [-15.6%, -14.0%]".
func (e Effect) String() string {
	return fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%]", e.Pct, e.Lo, e.Hi)
}

// Inverse is the effect of undoing this one: the reference measured
// against the changed value, (1+p)⁻¹−1, its interval turned around.
func (e Effect) Inverse() Effect {
	inv := func(pct float64) float64 { return 100 * (1/(1+pct/100) - 1) }
	return Effect{Pct: inv(e.Pct), Interval: Interval{Lo: inv(e.Hi), Hi: inv(e.Lo)}}
}

// HunkEffect is the measured effect of a set of hunks applied alone on the
// parent, and reverted alone from the culprit.
type HunkEffect struct {
	Applied  Effect
	Reverted Effect
}

// hunkEffectJSON is how a finding has always stored a HunkEffect: six flat
// numbers.
type hunkEffectJSON struct {
	AppliedPct    float64 `json:"applied_pct"`
	AppliedLoPct  float64 `json:"applied_lo_pct"`
	AppliedHiPct  float64 `json:"applied_hi_pct"`
	RevertedPct   float64 `json:"reverted_pct"`
	RevertedLoPct float64 `json:"reverted_lo_pct"`
	RevertedHiPct float64 `json:"reverted_hi_pct"`
}

// MarshalJSON writes e under the names stored findings and the API have
// always used (applied_pct, applied_lo_pct, …).
func (e HunkEffect) MarshalJSON() ([]byte, error) {
	return json.Marshal(hunkEffectJSON{
		AppliedPct: e.Applied.Pct, AppliedLoPct: e.Applied.Lo, AppliedHiPct: e.Applied.Hi,
		RevertedPct: e.Reverted.Pct, RevertedLoPct: e.Reverted.Lo, RevertedHiPct: e.Reverted.Hi,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *HunkEffect) UnmarshalJSON(data []byte) error {
	var j hunkEffectJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	e.Applied = Effect{Pct: j.AppliedPct, Interval: Interval{Lo: j.AppliedLoPct, Hi: j.AppliedHiPct}}
	e.Reverted = Effect{Pct: j.RevertedPct, Interval: Interval{Lo: j.RevertedLoPct, Hi: j.RevertedHiPct}}
	return nil
}
