// Package speculative implements EAGLE-style speculative decoding with
// greedy verification.
//
// A step works like SGLang's EAGLE worker with one draft chain (topk 1):
//
//  1. the draft head proposes k tokens, one decode step each (the first
//     comes from the previous step's draft extend);
//  2. the target verifies the pending token and the k proposals in one
//     extend pass of k+1 tokens;
//  3. the longest prefix of proposals that matches the target's own greedy
//     choices is accepted, plus one bonus token: the target's choice after
//     that prefix;
//  4. rejected positions are dropped from both caches, and the draft runs an
//     extend pass over the accepted tokens with the target's hidden states
//     as features, which also yields the next step's first proposal.
//
// Because verification is greedy and the target computes each token the same
// way in an extend pass as in a decode step, the emitted tokens are exactly
// those greedy decoding with the target alone emits.
package speculative

import (
	"context"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/testbed/engine/model"
	"github.com/perfbot/perfbot/testbed/engine/model/kernels"
)

// Decoder generates one sequence with speculative decoding.
type Decoder struct {
	target *model.Model
	draft  *Draft
	k      int
	state  Checkpoint
	clock  func() time.Duration
	times  StepTimes

	verify []int
	hidden []float32
}

// Checkpoint is the decoder's position in its sequence; Rewind returns to
// it.
type Checkpoint struct {
	targetLen, draftLen int
	// pending is the last emitted token, not yet run through the target.
	pending int
	// proposal is the draft's guess for the token after pending.
	proposal int
}

// NewDecoder returns a decoder that drafts k tokens per step.
func NewDecoder(target *model.Model, draft *Draft, k int) (*Decoder, error) {
	if k < 1 {
		return nil, fmt.Errorf("speculative: %d draft tokens per step, need at least 1", k)
	}
	return &Decoder{target: target, draft: draft, k: k}, nil
}

// Prefill runs the prompt through the target and the draft and returns the
// first generated token.
func (dc *Decoder) Prefill(prompt []int) (int, error) {
	if len(prompt) == 0 {
		return 0, fmt.Errorf("speculative: empty prompt")
	}
	out, err := dc.target.Forward(prompt, 1)
	if err != nil {
		return 0, fmt.Errorf("prefill target: %w", err)
	}
	first := kernels.Argmax(out.Logits)
	// Draft positions 1..P read tokens 1..P (the last being the first
	// generated token) and the target's features of positions 0..P-1.
	tokens := append(append([]int(nil), prompt[1:]...), first)
	_, logits, err := dc.draft.Forward(tokens, out.Hidden)
	if err != nil {
		return 0, fmt.Errorf("prefill draft: %w", err)
	}
	dc.state = Checkpoint{
		targetLen: dc.target.Len(),
		draftLen:  dc.draft.Len(),
		pending:   first,
		proposal:  kernels.Argmax(logits),
	}
	return first, nil
}

// StepTimes is how the time of one step divides, by the clock SetClock
// gave the decoder.
type StepTimes struct {
	// Draft is the draft's part: its proposals and its extend over the
	// tokens the step emitted.
	Draft time.Duration
	// Verify is the target's verify pass and the acceptance of the
	// proposals.
	Verify time.Duration
}

// SetClock makes every step read clock around its phases (a server
// passes the process's CPU time), and LastStep return what it read. A nil
// clock times nothing.
func (dc *Decoder) SetClock(clock func() time.Duration) { dc.clock = clock }

// LastStep returns the phase times of the last step that succeeded; zero
// without a clock.
func (dc *Decoder) LastStep() StepTimes { return dc.times }

func (dc *Decoder) now() time.Duration {
	if dc.clock == nil {
		return 0
	}
	return dc.clock()
}

// Mark returns the current checkpoint.
func (dc *Decoder) Mark() Checkpoint { return dc.state }

// Rewind returns the sequence to cp, which must come from Mark on this
// decoder at or before the current position.
func (dc *Decoder) Rewind(cp Checkpoint) {
	dc.target.Truncate(cp.targetLen)
	dc.draft.Truncate(cp.draftLen)
	dc.state = cp
}

// Step runs one draft-verify-accept step and appends the emitted tokens
// (the accepted proposals and the bonus token) to emitted.
func (dc *Decoder) Step(emitted []int) ([]int, error) {
	d := dc.target.Config().Hidden
	start := dc.now()
	proposals, err := dc.propose()
	if err != nil {
		return emitted, err
	}
	proposed := dc.now()
	dc.verify = append(append(dc.verify[:0], dc.state.pending), proposals...)
	out, err := dc.target.Forward(dc.verify, len(dc.verify))
	if err != nil {
		return emitted, fmt.Errorf("verify: %w", err)
	}
	v := dc.target.Config().Vocab
	accepted := 0
	bonus := kernels.Argmax(out.Logits[:v])
	for accepted < len(proposals) && proposals[accepted] == bonus {
		accepted++
		bonus = kernels.Argmax(out.Logits[accepted*v : (accepted+1)*v])
	}
	emitted = append(append(emitted, proposals[:accepted]...), bonus)
	verified := dc.now()

	// Keep the pending token and the accepted proposals.
	base := dc.state.targetLen
	dc.target.Truncate(base + accepted + 1)
	dc.hidden = append(dc.hidden[:0], out.Hidden[:(accepted+1)*d]...)
	dc.draft.Truncate(dc.state.draftLen)
	tokens := append(proposals[:accepted:accepted], bonus)
	_, logits, err := dc.draft.Forward(tokens, dc.hidden)
	if err != nil {
		return emitted, fmt.Errorf("draft extend: %w", err)
	}
	dc.state = Checkpoint{
		targetLen: dc.target.Len(),
		draftLen:  dc.draft.Len(),
		pending:   bonus,
		proposal:  kernels.Argmax(logits),
	}
	end := dc.now()
	dc.times = StepTimes{Draft: proposed - start + end - verified, Verify: verified - proposed}
	return emitted, nil
}

// propose returns k draft tokens: the one the last draft extend guessed,
// then k-1 more from draft decode steps that feed the draft's own hidden
// state forward as the feature.
func (dc *Decoder) propose() ([]int, error) {
	proposals := []int{dc.state.proposal}
	// The draft's hidden state at its last position stands in for the
	// target's feature, which does not exist yet for guessed tokens.
	for len(proposals) < dc.k {
		_, logits, err := dc.draft.Forward(proposals[len(proposals)-1:], dc.draft.State())
		if err != nil {
			return nil, fmt.Errorf("draft decode: %w", err)
		}
		proposals = append(proposals, kernels.Argmax(logits))
	}
	return proposals, nil
}

// Generate emits n tokens after prompt (the first from the prefill) and
// returns them and the number of verify steps it took.
func (dc *Decoder) Generate(ctx context.Context, prompt []int, n int) ([]int, int, error) {
	first, err := dc.Prefill(prompt)
	if err != nil {
		return nil, 0, err
	}
	out, steps := []int{first}, 0
	for len(out) < n {
		if err := ctx.Err(); err != nil {
			return out, steps, err
		}
		if out, err = dc.Step(out); err != nil {
			return out, steps, err
		}
		steps++
	}
	return out[:n], steps, nil
}

// Greedy emits n tokens after prompt with the target alone, one decode step
// per token: the reference that speculative decoding must reproduce.
func Greedy(ctx context.Context, target *model.Model, prompt []int, n int) ([]int, error) {
	out, err := target.Forward(prompt, 1)
	if err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	tokens := []int{kernels.Argmax(out.Logits)}
	for len(tokens) < n {
		if err := ctx.Err(); err != nil {
			return tokens, err
		}
		if out, err = target.Forward(tokens[len(tokens)-1:], 1); err != nil {
			return tokens, fmt.Errorf("decode: %w", err)
		}
		tokens = append(tokens, kernels.Argmax(out.Logits))
	}
	return tokens, nil
}
