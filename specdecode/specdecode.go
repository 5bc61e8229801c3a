// Package specdecode breaks a speculative-decoding throughput into its
// terms.
//
// A speculative cycle drafts tokens (draft time D), verifies them with
// one pass of the target (verify time V) and keeps A tokens on average,
// the bonus token included. Plain decoding takes T per token. So, per
// token, speculation costs (D + V)/A and plain decoding T:
//
//	speed-up   S = A·T / (D + V)     (above 1: speculation pays)
//	break-even B = (D + V) / T       (the acceptance at which S = 1)
//
// and S = A/B. The speculative throughput is proportional to A/(D + V),
// so a change of it splits exactly, in log space, into an acceptance term
// ln(A'/A) and a cycle-time term −ln((D'+V')/(D+V)); the cycle-time term
// is shared between verify and draft by their Shapley values (the mean of
// each one's effect taken first and taken second), so that the three
// effects multiply to the expected change.
//
// Every figure comes from runs: each run gives one value of every term,
// the speed-up and break-even are computed run by run (the terms of one
// run were measured together), and what is shown is the median with its
// order-statistic interval (stats.Summarize), or, for a change between
// two commits, the Hodges–Lehmann shift with its interval (stats.Delta).
// The package knows nothing of metrics, stores or configuration.
package specdecode

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// Cycle is one run's measurement of the terms.
type Cycle struct {
	// VerifyMs is the target's verify pass of one cycle, DraftMs the
	// drafting of one cycle, in milliseconds.
	VerifyMs float64 `json:"verify_ms"`
	DraftMs  float64 `json:"draft_ms"`
	// DecodeMs is one plain decode step (one token) of the target alone.
	DecodeMs float64 `json:"decode_ms"`
	// Accept is the mean number of tokens a cycle keeps, the bonus token
	// included (1 means no draft token was accepted).
	Accept float64 `json:"accept_len"`
}

// Check returns an error naming the first term that is not a positive
// finite number (the draft time may be zero: a draft that costs nothing
// measurable, or an n-gram proposer).
func (c Cycle) Check() error {
	for _, t := range []struct {
		name string
		v    float64
		zero bool
	}{{"verify time", c.VerifyMs, false}, {"draft time", c.DraftMs, true}, {"decode time", c.DecodeMs, false}, {"acceptance length", c.Accept, false}} {
		if math.IsNaN(t.v) || math.IsInf(t.v, 0) || t.v < 0 || (t.v == 0 && !t.zero) {
			return fmt.Errorf("%s %v is not a positive number", t.name, t.v)
		}
	}
	return nil
}

// CycleMs is the time of one cycle, draft and verify.
func (c Cycle) CycleMs() float64 { return c.DraftMs + c.VerifyMs }

// SpeedUp is the expected speed-up of speculation over plain decoding,
// A·T/(D + V).
func (c Cycle) SpeedUp() float64 { return c.Accept * c.DecodeMs / c.CycleMs() }

// BreakEven is the acceptance length at which speculation and plain
// decoding are as fast, (D + V)/T.
func (c Cycle) BreakEven() float64 { return c.CycleMs() / c.DecodeMs }

// The results are the shared records, so that a finding carries them.
type (
	Estimate    = record.SpecEstimate
	Breakdown   = record.SpecBreakdown
	Term        = record.SpecTerm
	Attribution = record.SpecAttribution
)

// The terms a change is attributed to.
const (
	TermVerify = record.SpecTermVerify
	TermDraft  = record.SpecTermDraft
	TermAccept = record.SpecTermAccept
)

// Median is the median of values with its interval; zero for no values.
func Median(values []float64, confidence float64) Estimate {
	if len(values) == 0 {
		return Estimate{}
	}
	return estimate(values, confidence)
}

func estimate(values []float64, confidence float64) Estimate {
	s := stats.Summarize(values, confidence)
	return Estimate{Median: s.Median, Lo: s.Lo, Hi: s.Hi}
}

// ErrNoRuns means no run measured every term.
var ErrNoRuns = errors.New("no run measured every term of the breakdown")

// Summarize returns the breakdown of runs. A run with a term that is not
// a positive number is an error naming it.
func Summarize(runs []Cycle, confidence float64) (Breakdown, error) {
	if len(runs) == 0 {
		return Breakdown{}, ErrNoRuns
	}
	cols := columns(runs)
	speed, even := make([]float64, len(runs)), make([]float64, len(runs))
	for i, r := range runs {
		if err := r.Check(); err != nil {
			return Breakdown{}, fmt.Errorf("run %d: %w", i+1, err)
		}
		speed[i], even[i] = r.SpeedUp(), r.BreakEven()
	}
	return Breakdown{
		N:          len(runs),
		VerifyMs:   estimate(cols.verify, confidence),
		DraftMs:    estimate(cols.draft, confidence),
		DecodeMs:   estimate(cols.decode, confidence),
		Accept:     estimate(cols.accept, confidence),
		SpeedUp:    estimate(speed, confidence),
		BreakEven:  estimate(even, confidence),
		Confidence: confidence,
	}, nil
}

type cols struct{ verify, draft, decode, accept []float64 }

func columns(runs []Cycle) cols {
	var c cols
	for _, r := range runs {
		c.verify = append(c.verify, r.VerifyMs)
		c.draft = append(c.draft, r.DraftMs)
		c.decode = append(c.decode, r.DecodeMs)
		c.accept = append(c.accept, r.Accept)
	}
	return c
}

// Attribute compares the runs of a good and a bad commit. Changes and
// their intervals come from stats.Delta, which needs 4 runs a side for a
// bound at 0.95; with two or three a side, a term's interval is Student's
// t on the noise of the two sides' own runs (stats.DeltaNoise, with their
// pooled degrees of freedom), which a bisection that confirmed its
// culprit on few runs leaves. One run a side bounds nothing.
func Attribute(good, bad []Cycle, confidence float64) (Attribution, error) {
	g, err := Summarize(good, confidence)
	if err != nil {
		return Attribution{}, fmt.Errorf("good end: %w", err)
	}
	b, err := Summarize(bad, confidence)
	if err != nil {
		return Attribution{}, fmt.Errorf("bad end: %w", err)
	}
	gc, bc := columns(good), columns(bad)
	vg, vb := g.VerifyMs.Median, b.VerifyMs.Median
	dg, db := g.DraftMs.Median, b.DraftMs.Median
	ag, ab := g.Accept.Median, b.Accept.Median

	// Each term's log effect on A/(D+V), for a bad value x of it.
	verify := func(x float64) float64 { return -0.5 * (math.Log((x+dg)/(vg+dg)) + math.Log((x+db)/(vg+db))) }
	draft := func(x float64) float64 { return -0.5 * (math.Log((vg+x)/(vg+dg)) + math.Log((vb+x)/(vb+dg))) }
	accept := func(x float64) float64 { return math.Log(x / ag) }

	terms := []Term{
		term(TermVerify, gc.verify, bc.verify, vg, vb, verify, confidence),
		term(TermDraft, gc.draft, bc.draft, dg, db, draft, confidence),
		term(TermAccept, gc.accept, bc.accept, ag, ab, accept, confidence),
	}
	total := verify(vb) + draft(db) + accept(ab)
	slices.SortStableFunc(terms, func(x, y Term) int {
		return -cmpFloat(math.Abs(x.EffectPct), math.Abs(y.EffectPct))
	})
	return Attribution{Terms: terms, ExpectedPct: pctOf(total), Good: g, Bad: b}, nil
}

// term measures one term's change and its effect. A draft time that is
// zero at both ends has no relative change: it is reported as 0.
func term(name string, good, bad []float64, g, b float64, effect func(float64) float64, confidence float64) Term {
	t := Term{Name: name, Good: g, Bad: b, EffectPct: pctOf(effect(b))}
	if g == 0 && b == 0 {
		return t
	}
	d := stats.Delta(good, bad, confidence)
	if !isFinite(d.Hi) || d.Lo <= -100 {
		d = deltaOwnNoise(good, bad, confidence, d)
	}
	pct, lo, hi := d.Pct, d.Lo, d.Hi
	if isFinite(pct) {
		t.ChangePct = pct
	}
	if !isFinite(lo) || !isFinite(hi) || lo <= -100 {
		return t
	}
	t.LoPct, t.HiPct, t.Bounded = lo, hi, true
	// The effect at each end of the interval, the others held: a lower
	// term value is better for times, worse for acceptance, so the ends
	// are ordered after the mapping.
	elo, ehi := pctOf(effect(g*(1+lo/100))), pctOf(effect(g*(1+hi/100)))
	t.EffectLoPct, t.EffectHiPct = math.Min(elo, ehi), math.Max(elo, ehi)
	return t
}

// deltaOwnNoise is the change of bad against good with the t interval
// on the pooled noise of their log values, or d when either side has a
// single run, a value is not positive, or the runs did not vary.
func deltaOwnNoise(good, bad []float64, confidence float64, d record.Effect) record.Effect {
	if len(good) < 2 || len(bad) < 2 {
		return d
	}
	// A value that is not positive makes DeltaNoise give NaN: d stands.
	sigma, df := stats.Pooled(stats.Logs(good), stats.Logs(bad))
	if e := stats.DeltaNoise(good, bad, sigma, df, confidence); isFinite(e.Lo) && isFinite(e.Hi) {
		return e
	}
	return d
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// pctOf turns a log ratio into a percent change.
func pctOf(logRatio float64) float64 { return (math.Exp(logRatio) - 1) * 100 }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
