package bench

import (
	"slices"
	"testing"

	"github.com/perfbot/perfbot/testbed/engine/communicator"
)

// TestCyclesRepeat checks that the verify benchmark measures the same
// tokens in every cycle and with every allreduce backend, so that a change
// of backend moves tok/s only through time, and that a decode cycle and
// a draft cycle in between leave no trace.
func TestCyclesRepeat(t *testing.T) {
	var want []int
	for _, backend := range []string{communicator.Ring, communicator.Tree, communicator.Naive} {
		cfg, err := Config()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Comm.Backend = backend
		w, err := NewWorkload(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for cycle := range 2 {
			if _, err := w.VerifyCycle(CycleSteps); err != nil {
				t.Fatal(err)
			}
			if err := w.DecodeCycle(CycleSteps); err != nil {
				t.Fatal(err)
			}
			if err := w.DraftCycle(); err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = slices.Clone(w.out)
				if len(want) < 2*CycleSteps {
					t.Errorf("%d tokens in %d steps: the draft hardly helps", len(want), CycleSteps)
				}
				continue
			}
			if !slices.Equal(w.out, want) {
				t.Errorf("%s, cycle %d: emitted %v, want %v", backend, cycle, w.out, want)
			}
		}
	}
}
