package record

import (
	"math"
	"strings"
)

// SpecEstimate is a median over runs with its confidence interval.
type SpecEstimate struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// SpecBreakdown is the speculative-decoding breakdown of one commit's runs
// (computed by package specdecode): the terms, the expected speed-up of
// speculation over plain decoding and the break-even acceptance length.
type SpecBreakdown struct {
	N         int          `json:"n"`
	VerifyMs  SpecEstimate `json:"verify_ms"`
	DraftMs   SpecEstimate `json:"draft_ms"`
	DecodeMs  SpecEstimate `json:"decode_ms"`
	Accept    SpecEstimate `json:"accept_len"`
	SpeedUp   SpecEstimate `json:"speed_up"`
	BreakEven SpecEstimate `json:"break_even"`
	// Confidence is the coverage asked of the intervals; with fewer than
	// 6 runs they are the runs' range, which covers less.
	Confidence float64 `json:"confidence"`
}

// Slower reports whether speculation is slower than plain decoding with
// the breakdown's confidence: the whole interval of the speed-up lies
// below 1.
func (b SpecBreakdown) Slower() bool { return b.N > 0 && b.SpeedUp.Hi < 1 }

// CostPct is how much slower speculation is than plain decoding, in
// percent of plain decoding's throughput (27 for a speed-up of 0.73); it
// is negative when speculation pays.
func (b SpecBreakdown) CostPct() float64 { return (1 - b.SpeedUp.Median) * 100 }

// The terms a change of the speculative throughput is attributed to.
const (
	SpecTermVerify = "verify"
	SpecTermDraft  = "draft"
	SpecTermAccept = "acceptance"
)

// SpecTerm is one term's part in a change between two commits.
type SpecTerm struct {
	Name string `json:"name"`
	// Good and Bad are the term's medians at the two commits (ms, or
	// tokens per cycle for acceptance).
	Good float64 `json:"good"`
	Bad  float64 `json:"bad"`
	// ChangePct is the term's measured change; LoPct and HiPct bound it
	// when Bounded (too few runs, or a term that did not vary, leave
	// them 0).
	ChangePct float64 `json:"change_pct"`
	LoPct     float64 `json:"lo_pct"`
	HiPct     float64 `json:"hi_pct"`
	Bounded   bool    `json:"bounded"`
	// EffectPct is what the change of this term alone does to the
	// speculative throughput; EffectLoPct and EffectHiPct are that effect
	// at the ends of the term's interval, the other terms held.
	EffectPct   float64 `json:"effect_pct"`
	EffectLoPct float64 `json:"effect_lo_pct"`
	EffectHiPct float64 `json:"effect_hi_pct"`
}

// SpecAttribution is the breakdown at the two ends of a change and, when
// the change is in the speculative throughput, its split into terms.
type SpecAttribution struct {
	// Metric is the speculative throughput the terms explain.
	Metric string `json:"metric,omitempty"`
	// Tokens is the most a cycle can keep (draft tokens + 1), 0 when the
	// configuration does not say.
	Tokens int `json:"tokens,omitempty"`
	// Terms are verify, draft and acceptance, the largest effect first;
	// empty when the finding is about another metric.
	Terms []SpecTerm `json:"terms,omitempty"`
	// ExpectedPct is the change of the speculative throughput the terms
	// imply together; it is what the throughput itself should show, up to
	// what the terms do not cover (scheduling, prefill).
	ExpectedPct float64 `json:"expected_pct"`
	// Good and Bad are the two commits' breakdowns.
	Good SpecBreakdown `json:"good"`
	Bad  SpecBreakdown `json:"bad"`
	// TimeUnit is the unit of the verify, draft and decode times, the
	// configured metrics' ("decode-steps" for times counted in plain
	// decode steps); empty means ms.
	TimeUnit string `json:"time_unit,omitempty"`
}

// SpecTimeUnit is the TimeUnit of a breakdown whose decode time metric
// has unit: "" for milliseconds ("ms", "ms/token"), the unit otherwise.
func SpecTimeUnit(unit string) string {
	if unit == "" || unit == "ms" || strings.HasPrefix(unit, "ms/") {
		return ""
	}
	return unit
}

// Unit is the unit of the breakdown's times: TimeUnit, or ms.
func (a SpecAttribution) Unit() string {
	if a.TimeUnit == "" {
		return "ms"
	}
	return a.TimeUnit
}

// Lead is the term whose effect is the largest in the direction of the
// expected change: the one a reader should look at first. It is the zero
// SpecTerm when there are no terms.
func (a SpecAttribution) Lead() SpecTerm {
	for _, t := range a.Terms {
		if math.Signbit(t.EffectPct) == math.Signbit(a.ExpectedPct) {
			return t
		}
	}
	if len(a.Terms) == 0 {
		return SpecTerm{}
	}
	return a.Terms[0]
}
