package specdecode_test

import (
	"fmt"

	"github.com/perfbot/perfbot/specdecode"
)

// The seed sessions' question: speculation runs at 60 tok/s against 82
// for plain decoding; is it the verify pass, the draft or the acceptance?
func ExampleAttribute() {
	runs := func(verify, draft, accept float64) []specdecode.Cycle {
		var out []specdecode.Cycle
		for _, j := range []float64{1.00, 1.01, 0.99, 1.02, 0.98, 1.00} {
			out = append(out, specdecode.Cycle{VerifyMs: verify * j, DraftMs: draft, DecodeMs: 12.2, Accept: accept})
		}
		return out
	}
	a, err := specdecode.Attribute(runs(12.3, 5.6, 2.2), runs(28.5, 5.7, 2.1), 0.95)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("before: speed-up %.2f, break-even %.2f\n", a.Good.SpeedUp.Median, a.Good.BreakEven.Median)
	fmt.Printf("after:  speed-up %.2f, break-even %.2f\n", a.Bad.SpeedUp.Median, a.Bad.BreakEven.Median)
	for _, t := range a.Terms {
		fmt.Printf("%-10s %+6.1f%% → %+6.1f%% tok/s\n", t.Name, t.ChangePct, t.EffectPct)
	}
	fmt.Printf("expected   %+6.1f%% tok/s, mostly the %s\n", a.ExpectedPct, a.Lead().Name)
	// Output:
	// before: speed-up 1.50, break-even 1.47
	// after:  speed-up 0.75, break-even 2.80
	// verify     +131.7% →  -47.4% tok/s
	// acceptance   -4.5% →   -4.5% tok/s
	// draft        +1.8% →   -0.4% tok/s
	// expected    -50.0% tok/s, mostly the verify
}
