// Package bench holds the engine's benchmarks and the workload they run.
//
// BenchmarkVerifyStep times speculative decoding steps (draft k tokens,
// verify k+1 in one extend pass, accept) and reports accepted tokens per
// second and milliseconds per verify step. BenchmarkDecode times plain
// decode steps of the target. BenchmarkAllReduce times the allreduce of a
// fixed-size buffer over the model's ranks and reports bus bandwidth.
//
// The simulated ranks share one core (TestMain sets GOMAXPROCS to 1), so a
// benchmark measures the work the engine does, not how the host schedules
// eight busy threads on two cores. Every benchmark replays the same short
// sequence in cycles from one prefilled prompt and reports the median
// cycle, which keeps run-to-run noise low.
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
	PromptLen = 192
	// DraftTokens is k, the number of draft tokens per verify step.
	DraftTokens = 3
	// CycleSteps is the number of steps replayed before rewinding to the
	// prompt.
	CycleSteps = 8
	// AllReduceFloats is the size of BenchmarkAllReduce's buffer: the
	// output of one layer for a verify step's k+1 tokens.
	AllReduceFloats = 4 * 128 * 8
)

// Config returns the model configuration the benchmarks run, with the
// allreduce options that the environment sets (see communicator).
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

// Speculative is a prefilled speculative decoder that replays cycles of
// CycleSteps steps from its prompt.
type Speculative struct {
	dec   *speculative.Decoder
	start speculative.Checkpoint
	out   []int
}

// NewSpeculative builds the target and its draft and prefills the prompt.
func NewSpeculative(cfg model.Config) (*Speculative, error) {
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
	if _, err := dec.Prefill(Prompt(PromptLen, cfg.Vocab, cfg.Seed)); err != nil {
		return nil, err
	}
	return &Speculative{dec: dec, start: dec.Mark()}, nil
}

// Cycle rewinds to the prompt, runs steps verify steps and returns the
// number of tokens they emitted.
func (s *Speculative) Cycle(steps int) (int, error) {
	s.dec.Rewind(s.start)
	s.out = s.out[:0]
	for range steps {
		var err error
		if s.out, err = s.dec.Step(s.out); err != nil {
			return 0, fmt.Errorf("verify step: %w", err)
		}
	}
	return len(s.out), nil
}

// Decode is a prefilled target that replays cycles of decode steps.
type Decode struct {
	target *model.Model
	first  int
}

// NewDecode builds the target and prefills the prompt.
func NewDecode(cfg model.Config) (*Decode, error) {
	target, err := model.New(cfg)
	if err != nil {
		return nil, err
	}
	out, err := target.Forward(Prompt(PromptLen, cfg.Vocab, cfg.Seed), 1)
	if err != nil {
		return nil, err
	}
	return &Decode{target: target, first: argmax(out.Logits)}, nil
}

// Cycle rewinds to the prompt and runs steps greedy decode steps.
func (d *Decode) Cycle(steps int) error {
	d.target.Truncate(PromptLen)
	tok := d.first
	for range steps {
		out, err := d.target.Forward([]int{tok}, 1)
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
