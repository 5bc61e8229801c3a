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
// parent, and reverted alone from the culprit. Either is nil when it was
// not measured (its configuration did not apply or build, or the search's
// run budget ran out first): never an effect of zero.
type HunkEffect struct {
	Applied  *Effect
	Reverted *Effect
}

// hunkEffectJSON is how a finding has always stored a HunkEffect: six flat
// numbers, the three of an effect left out when it was not measured.
type hunkEffectJSON struct {
	AppliedPct    *float64 `json:"applied_pct,omitempty"`
	AppliedLoPct  *float64 `json:"applied_lo_pct,omitempty"`
	AppliedHiPct  *float64 `json:"applied_hi_pct,omitempty"`
	RevertedPct   *float64 `json:"reverted_pct,omitempty"`
	RevertedLoPct *float64 `json:"reverted_lo_pct,omitempty"`
	RevertedHiPct *float64 `json:"reverted_hi_pct,omitempty"`
}

// MarshalJSON writes e under the names stored findings and the API have
// always used (applied_pct, applied_lo_pct, …); an effect that was not
// measured has none of its three.
func (e HunkEffect) MarshalJSON() ([]byte, error) {
	var j hunkEffectJSON
	if a := e.Applied; a != nil {
		j.AppliedPct, j.AppliedLoPct, j.AppliedHiPct = &a.Pct, &a.Lo, &a.Hi
	}
	if r := e.Reverted; r != nil {
		j.RevertedPct, j.RevertedLoPct, j.RevertedHiPct = &r.Pct, &r.Lo, &r.Hi
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes. An older perfbot wrote an
// effect it had not measured as three zeros: they read as not measured,
// as no measured interval is [0, 0].
func (e *HunkEffect) UnmarshalJSON(data []byte) error {
	var j hunkEffectJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	e.Applied = storedEffect(j.AppliedPct, j.AppliedLoPct, j.AppliedHiPct)
	e.Reverted = storedEffect(j.RevertedPct, j.RevertedLoPct, j.RevertedHiPct)
	return nil
}

// storedEffect is the effect of three stored numbers, nil when they are
// absent or all zero.
func storedEffect(pct, lo, hi *float64) *Effect {
	val := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	e := Effect{Pct: val(pct), Interval: Interval{Lo: val(lo), Hi: val(hi)}}
	if e == (Effect{}) {
		return nil
	}
	return &e
}
