package bench

import (
	"slices"
	"testing"

	"github.com/perfbot/perfbot/testbed/engine/communicator"
)

// TestCyclesRepeat checks that the verify benchmark measures the same
// tokens in every cycle and with every allreduce backend, so that a change
// of backend moves tok/s only through time.
func TestCyclesRepeat(t *testing.T) {
	var want []int
	for _, backend := range []string{communicator.Ring, communicator.Tree, communicator.Naive} {
		cfg, err := Config()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Comm.Backend = backend
		s, err := NewSpeculative(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for cycle := range 2 {
			if _, err := s.Cycle(CycleSteps); err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = slices.Clone(s.out)
				if len(want) < 2*CycleSteps {
					t.Errorf("%d tokens in %d steps: the draft hardly helps", len(want), CycleSteps)
				}
				continue
			}
			if !slices.Equal(s.out, want) {
				t.Errorf("%s, cycle %d: emitted %v, want %v", backend, cycle, s.out, want)
			}
		}
	}
}

func TestDecodeCycle(t *testing.T) {
	cfg, err := Config()
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDecode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Cycle(CycleSteps); err != nil {
		t.Fatal(err)
	}
	if got := d.target.Len(); got != PromptLen+CycleSteps {
		t.Errorf("after a cycle the target holds %d positions, want %d", got, PromptLen+CycleSteps)
	}
}
