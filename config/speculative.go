package config

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/record"
)

// Speculative names the metrics that break a speculative-decoding
// throughput into its terms (see package specdecode): every measured
// commit gets the expected speed-up of speculation over plain decoding and
// the break-even acceptance length, a finding on TokS attributes its
// change to verify time, draft time and acceptance, and a nightly cycle
// in which speculation is slower than plain decoding raises a finding of
// its own.
type Speculative struct {
	// TokS is the speculative throughput the breakdown explains.
	TokS string
	// VerifyMs is the target's verify pass of one cycle; CycleMs, when a
	// benchmark times the whole cycle instead (SGLang's step time, the
	// testbed's ms/verify), is draft and verify together, and the verify
	// time is CycleMs − DraftMs. Exactly one of the two is set.
	VerifyMs string
	CycleMs  string
	// DraftMs is the drafting of one cycle; empty counts it as zero (a
	// benchmark that cannot time it apart, or an n-gram proposer).
	DraftMs string
	// DecodeMs is one plain decode step of the target, per token.
	DecodeMs string
	// AcceptLen is the mean number of tokens a cycle keeps, bonus token
	// included.
	AcceptLen string
	// Tokens is the most a cycle can keep (draft tokens + 1); zero when not
	// given. Findings say "break-even 2.8 of 4 tokens".
	Tokens int
	// Quiet (alert: false) keeps the nightly cycle from raising a finding
	// when speculation is slower than plain decoding; the nights still say
	// so, and history --speculative shows the speed-up. For an engine whose
	// speculation is known not to pay on the host that measures it.
	Quiet bool
}

// Metrics returns the names of the configured metrics of s, in key order.
func (s *Speculative) Metrics() []string {
	var out []string
	for _, n := range []string{s.TokS, s.VerifyMs, s.CycleMs, s.DraftMs, s.DecodeMs, s.AcceptLen} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// SpecConfidence is the coverage of the speculative breakdown's
// intervals, wherever perfbot shows one: history --speculative, a
// finding's evidence and the nightly's finding that speculation is slower.
const SpecConfidence = 0.95

// Terms reads the breakdown's terms out of one run's metric values, by the
// names the block gives them: the verify time of a cycle (with a
// whole-cycle time, the cycle less the draft), the draft time (zero when
// the block names none), the plain decode time per token and the
// acceptance length. ok is false when the run lacks one of them.
func (s *Speculative) Terms(values map[string]float64) (verifyMs, draftMs, decodeMs, accept float64, ok bool) {
	get := func(name string) (float64, bool) {
		if name == "" {
			return 0, true // an optional term not configured
		}
		v, ok := values[name]
		return v, ok
	}
	verifyMs, okV := get(s.VerifyMs)
	cycle, okC := get(s.CycleMs)
	draftMs, okD := get(s.DraftMs)
	decodeMs, okT := get(s.DecodeMs)
	accept, okA := get(s.AcceptLen)
	if s.CycleMs != "" {
		verifyMs = cycle - draftMs
	}
	return verifyMs, draftMs, decodeMs, accept, okV && okC && okD && okT && okA
}

// speculative decodes the speculative block; every name must be a metric.
func (d *decoder) speculative(n *yaml.Node, metrics []record.Metric) *Speculative {
	if n == nil || isNull(resolve(n)) {
		return nil
	}
	const p = "speculative"
	f := d.mapping(n, p, "tok_s", "verify_ms", "cycle_ms", "draft_ms", "decode_ms", "accept_len", "tokens", "alert")
	var names []string
	for _, m := range metrics {
		names = append(names, m.Name)
	}
	metric := func(key string, required bool) string {
		v := value(f, key)
		name := d.str(v, p+"."+key)
		switch {
		case name == "" && required:
			d.errorf(at(v, n), p+"."+key, "missing: the metric that holds it (one of %s)", strings.Join(names, ", "))
		case name != "" && !slices.Contains(names, name):
			d.errorf(v, p+"."+key, "unknown metric %q (want one of %s)", name, strings.Join(names, ", "))
		}
		return name
	}
	s := &Speculative{
		TokS:      metric("tok_s", true),
		VerifyMs:  metric("verify_ms", false),
		CycleMs:   metric("cycle_ms", false),
		DraftMs:   metric("draft_ms", false),
		DecodeMs:  metric("decode_ms", true),
		AcceptLen: metric("accept_len", true),
	}
	switch {
	case s.VerifyMs == "" && s.CycleMs == "":
		d.errorf(n, p, "needs verify_ms (the verify pass of a cycle) or cycle_ms (draft and verify together)")
	case s.VerifyMs != "" && s.CycleMs != "":
		d.errorf(value(f, "cycle_ms"), p+".cycle_ms", "give verify_ms or cycle_ms, not both")
	}
	if v := value(f, "tokens"); v != nil {
		s.Tokens = d.positive(v, p+".tokens")
	}
	if v := value(f, "alert"); v != nil {
		s.Quiet = !d.boolean(v, p+".alert")
	}
	return s
}
