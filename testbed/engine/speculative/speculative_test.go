package speculative

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/perfbot/perfbot/testbed/engine/attention"
	"github.com/perfbot/perfbot/testbed/engine/communicator"
	"github.com/perfbot/perfbot/testbed/engine/model"
)

func config(attn, comm string) model.Config {
	cfg := model.DefaultConfig()
	cfg.Layers, cfg.MaxSeq = 2, 160
	cfg.Attention, cfg.Comm.Backend = attn, comm
	return cfg
}

func prompt(n, vocab int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = (i*53 + 7) % vocab
	}
	return p
}

// TestSpeculativeMatchesGreedy checks the defining property of greedy
// speculative decoding: it emits exactly the tokens that the target alone
// emits, whatever the draft proposes.
func TestSpeculativeMatchesGreedy(t *testing.T) {
	ctx := context.Background()
	const n = 40
	for _, tc := range []struct{ attn, comm string }{
		{attention.Tiled, communicator.Ring},
		{attention.Tiled, communicator.Tree},
		{attention.Naive, communicator.Naive},
	} {
		t.Run(tc.attn+"/"+tc.comm, func(t *testing.T) {
			cfg := config(tc.attn, tc.comm)
			p := prompt(64, cfg.Vocab)
			target, err := model.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Greedy(ctx, target, p, n)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{1, 3, 5} {
				target, err := model.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				draft, err := NewDraft(target)
				if err != nil {
					t.Fatal(err)
				}
				dec, err := NewDecoder(target, draft, k)
				if err != nil {
					t.Fatal(err)
				}
				got, steps, err := dec.Generate(ctx, p, n)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("k=%d: speculative emitted %v, greedy %v", k, got, want)
				}
				// The draft must earn its keep: more than one token per
				// step on average.
				if steps >= n-1 {
					t.Errorf("k=%d: %d steps for %d tokens: the draft never got a token right", k, steps, n)
				}
			}
		})
	}
}

// TestRewind checks that a decoder returns to a checkpoint exactly, which
// the benchmarks rely on to replay the same steps.
func TestRewind(t *testing.T) {
	cfg := config(attention.Tiled, communicator.Ring)
	target, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	draft, err := NewDraft(target)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewDecoder(target, draft, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.Prefill(prompt(50, cfg.Vocab)); err != nil {
		t.Fatal(err)
	}
	mark := dec.Mark()
	var first, second []int
	for range 5 {
		if first, err = dec.Step(first); err != nil {
			t.Fatal(err)
		}
	}
	dec.Rewind(mark)
	for range 5 {
		if second, err = dec.Step(second); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(first, second) {
		t.Errorf("after Rewind the steps emitted %v, before %v", second, first)
	}
}

func TestDecoderRejects(t *testing.T) {
	target, err := model.New(config(attention.Tiled, ""))
	if err != nil {
		t.Fatal(err)
	}
	draft, err := NewDraft(target)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewDecoder(target, draft, 0); err == nil {
		t.Error("NewDecoder with k=0 succeeded")
	}
	dec, err := NewDecoder(target, draft, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.Prefill(nil); err == nil {
		t.Error("Prefill of an empty prompt succeeded")
	}
}

// TestStepClock checks that a step reads its clock at the phase
// boundaries (before the proposals, after them, after the acceptance,
// after the draft extend) and that timing changes nothing it emits.
func TestStepClock(t *testing.T) {
	cfg := config(attention.Tiled, communicator.Ring)
	steps := func(clock func() time.Duration) ([]int, []StepTimes) {
		target, err := model.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		draft, err := NewDraft(target)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := NewDecoder(target, draft, 3)
		if err != nil {
			t.Fatal(err)
		}
		dec.SetClock(clock)
		if _, err := dec.Prefill(prompt(50, cfg.Vocab)); err != nil {
			t.Fatal(err)
		}
		var out []int
		var times []StepTimes
		for range 4 {
			if out, err = dec.Step(out); err != nil {
				t.Fatal(err)
			}
			times = append(times, dec.LastStep())
		}
		return out, times
	}
	// Each reading is one tick later than the one before.
	var ticks time.Duration
	timed, times := steps(func() time.Duration { ticks++; return ticks })
	plain, none := steps(nil)
	if !slices.Equal(timed, plain) {
		t.Errorf("timed steps emitted %v, untimed %v", timed, plain)
	}
	for i, st := range times {
		if st != (StepTimes{Draft: 2, Verify: 1}) {
			t.Errorf("step %d: %+v, want the draft's two phases and the verify's one", i, st)
		}
		if none[i] != (StepTimes{}) {
			t.Errorf("step %d without a clock: %+v, want zero", i, none[i])
		}
	}
	if ticks != 16 {
		t.Errorf("%d clock readings for 4 steps, want 16", ticks)
	}
}
