package specdecode

import (
	"math"
	"testing"
)

// FuzzAttribute: for any terms, Summarize and Attribute do not panic; a
// term that is not a positive number is an error; otherwise the effects
// multiply to the expected change, and the speed-up is the acceptance
// over its break-even.
func FuzzAttribute(f *testing.F) {
	f.Add(12.0, 2.0, 10.0, 3.0, 30.0, 2.0, 10.0, 3.0, uint8(4))
	f.Add(12.0, 0.0, 10.0, 3.0, 12.0, 0.0, 10.0, 2.1, uint8(1))
	f.Add(1e-300, 1e300, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, uint8(8))
	f.Add(-1.0, math.NaN(), 0.0, math.Inf(1), 1.0, 1.0, 1.0, 1.0, uint8(3))
	f.Fuzz(func(t *testing.T, gv, gd, gt, ga, bv, bd, bt, ba float64, n uint8) {
		runs := func(c Cycle) []Cycle {
			out := make([]Cycle, int(n%12)+1)
			for i := range out {
				j := 1 + 0.01*float64(i%5-2)
				out[i] = Cycle{VerifyMs: c.VerifyMs * j, DraftMs: c.DraftMs, DecodeMs: c.DecodeMs * j, Accept: c.Accept}
			}
			return out
		}
		good, bad := Cycle{gv, gd, gt, ga}, Cycle{bv, bd, bt, ba}
		a, err := Attribute(runs(good), runs(bad), 0.95)
		valid := good.Check() == nil && bad.Check() == nil
		if err != nil {
			if valid && isFinite(good.SpeedUp()) && isFinite(bad.SpeedUp()) {
				// Extreme magnitudes can overflow a jittered copy.
				for _, r := range append(runs(good), runs(bad)...) {
					if r.Check() != nil || !isFinite(r.SpeedUp()) {
						return
					}
				}
				t.Fatalf("valid terms rejected: %v", err)
			}
			return
		}
		if !valid {
			t.Fatalf("invalid terms accepted: good %+v bad %+v", good, bad)
		}
		if len(a.Terms) != 3 {
			t.Fatalf("%d terms", len(a.Terms))
		}
		product := 1.0
		for _, term := range a.Terms {
			product *= 1 + term.EffectPct/100
		}
		want := 1 + a.ExpectedPct/100
		if isFinite(product) && isFinite(want) && want > 1e-12 && math.Abs(product/want-1) > 1e-6 {
			t.Fatalf("effects multiply to %v, expected change %v", product, want)
		}
		for _, b := range []Breakdown{a.Good, a.Bad} {
			if b.SpeedUp.Lo > b.SpeedUp.Median || b.SpeedUp.Median > b.SpeedUp.Hi {
				t.Fatalf("speed-up interval %+v", b.SpeedUp)
			}
		}
	})
}
