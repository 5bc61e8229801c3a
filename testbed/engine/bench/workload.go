// Package bench holds the engine's benchmarks and the workload they run.
//
// BenchmarkVerifyStep times speculative decoding steps (draft k tokens,
// verify k+1 in one extend pass, accept) and reports emitted tokens per
// second, milliseconds per verify step, emitted tokens per step and the
// milliseconds of a step the draft takes. BenchmarkDecode times plain
// decode steps of the target. BenchmarkAllReduce times the allreduces of
// one forward pass over a fixed-size buffer and reports bus bandwidth.
//
// The simulated ranks share one core (TestMain sets GOMAXPROCS to 1) and
// times are the process's CPU time, so a benchmark measures the work the
// engine does rather than how a busy host schedules it. Every benchmark
// replays cycles of the same steps from one prefilled prompt and reports
// the median cycle, which keeps run-to-run noise low; run them with a fixed
// iteration count that is a multiple of CycleSteps.
package bench

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/perfbot/perfbot/testbed/engine/communicator"
	"github.com/perfbot/perfbot/testbed/engine/model"
	"github.com/perfbot/perfbot/testbed/engine/speculative"
)

// Workload sizes.
const (
	// PromptLen is the prompt length: the context every step attends over.
	PromptLen = 256
	// DraftTokens is k, the number of draft tokens per verify step.
	DraftTokens = 3
	// CycleSteps is the number of steps replayed before rewinding to the
	// prompt.
	CycleSteps = 8
	// AllReduceFloats is the size of BenchmarkAllReduce's buffer: the
	// output of one layer for 32 tokens.
	AllReduceFloats = 32 * 128
)

// Config returns the model configuration the benchmarks run, with the
// allreduce options that the environment sets (see communicator) and the
// attention backend that TESTBED_ATTENTION names.
func Config() (model.Config, error) {
	cfg := model.DefaultConfig()
	comm, err := communicator.OptionsFromEnv(cfg.Comm, os.Getenv)
	if err != nil {
		return cfg, err
	}
	cfg.Comm = comm
	if v := os.Getenv("TESTBED_ATTENTION"); v != "" {
		cfg.Attention = v
	}
	return cfg, nil
}

// Prompt returns n deterministic pseudo-random tokens.
func Prompt(n, vocab int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := make([]int, n)
	for i := range p {
		p[i] = rng.IntN(vocab)
	}
	return p
}

// Workload is a target and its draft with the prompt prefilled, from which
// the benchmarks replay cycles of steps.
type Workload struct {
	target *model.Model
	draft  *speculative.Draft
	dec    *speculative.Decoder
	start  speculative.Checkpoint
	first  int
	out    []int
	// emitted is how many tokens each step of the last VerifyCycle
	// emitted, which DraftCycle replays.
	emitted  []int
	features []float32
}

// NewWorkload builds the target and its draft and prefills the prompt.
func NewWorkload(cfg model.Config) (*Workload, error) {
	target, err := model.New(cfg)
	if err != nil {
		return nil, err
	}
	draft, err := speculative.NewDraft(target)
	if err != nil {
		return nil, err
	}
	dec, err := speculative.NewDecoder(target, draft, DraftTokens)
	if err != nil {
		return nil, err
	}
	first, err := dec.Prefill(Prompt(PromptLen, cfg.Vocab, cfg.Seed))
	if err != nil {
		return nil, err
	}
	return &Workload{target: target, draft: draft, dec: dec, start: dec.Mark(), first: first,
		features: make([]float32, (DraftTokens+1)*cfg.Hidden)}, nil
}

// VerifyCycle rewinds to the prompt, runs steps speculative steps and
// returns the number of tokens they emitted.
func (w *Workload) VerifyCycle(steps int) (int, error) {
	w.dec.Rewind(w.start)
	w.out, w.emitted = w.out[:0], w.emitted[:0]
	for range steps {
		before := len(w.out)
		var err error
		if w.out, err = w.dec.Step(w.out); err != nil {
			return 0, fmt.Errorf("verify step: %w", err)
		}
		w.emitted = append(w.emitted, len(w.out)-before)
	}
	return len(w.out), nil
}

// DraftCycle rewinds to the prompt and runs the draft's part of the steps
// of the last VerifyCycle alone: each step's k-1 draft decode steps, then
// its draft extend over the tokens that step emitted. The target does not
// run, so the time it takes is the draft's share of a speculative step.
func (w *Workload) DraftCycle() error {
	w.dec.Rewind(w.start)
	d := w.target.Config().Hidden
	pos := 0
	for _, n := range w.emitted {
		mark := w.draft.Len()
		tok := w.first
		for range DraftTokens - 1 {
			if _, _, err := w.draft.Forward([]int{tok}, w.draft.State()); err != nil {
				return fmt.Errorf("draft decode: %w", err)
			}
		}
		w.draft.Truncate(mark)
		if _, _, err := w.draft.Forward(w.out[pos:pos+n], w.features[:n*d]); err != nil {
			return fmt.Errorf("draft extend: %w", err)
		}
		pos += n
	}
	return nil
}

// DecodeCycle rewinds to the prompt and runs steps greedy decode steps of
// the target alone.
func (w *Workload) DecodeCycle(steps int) error {
	w.dec.Rewind(w.start)
	tok := w.first
	for range steps {
		out, err := w.target.Forward([]int{tok}, 1)
		if err != nil {
			return fmt.Errorf("decode step: %w", err)
		}
		tok = argmax(out.Logits)
	}
	return nil
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
