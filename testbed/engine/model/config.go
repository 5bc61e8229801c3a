// Package model is the target model: a decoder-only mixture-of-experts
// transformer with deterministic random weights, run tensor-parallel over
// goroutine ranks.
//
// Each layer is attention followed by a mixture-of-experts block. The
// attention projection is column-parallel (a rank owns Heads/Ranks heads)
// and its output projection row-parallel, so every layer ends its attention
// and its MoE block with an allreduce of the ranks' partial sums through
// the communicator. The LM head is split by vocabulary, and the ranks'
// slices of the logits are gathered through the communicator too. The
// embedding is replicated.
//
// Weights come from a seeded generator, so two models with the same Config
// compute the same logits. The scale of the blocks' output projections is
// small next to the token embedding, which keeps the residual stream close
// to the embedding: that is what lets a cheap draft model guess the target's
// next tokens often enough for speculative decoding to pay off.
package model

import (
	"fmt"

	"github.com/perfbot/perfbot/testbed/engine/attention"
	"github.com/perfbot/perfbot/testbed/engine/communicator"
)

// Config describes a model and how it runs.
type Config struct {
	Vocab     int
	Hidden    int
	Heads     int
	Layers    int
	Experts   int
	TopK      int
	ExpertFFN int
	// MaxSeq is the number of positions the key/value caches hold.
	MaxSeq int
	// Ranks is the tensor-parallel degree.
	Ranks int
	// Seed selects the weights.
	Seed uint64
	// Attention names the attention backend: tiled or naive.
	Attention string
	// Comm steers the allreduce backend; its Segment is set by New.
	Comm communicator.Options
	// BlockScale scales the output projections of attention and experts
	// relative to a unit-variance initialization.
	BlockScale float32
}

// DefaultConfig is the model the benchmarks run: eight ranks, like a node
// of eight GPUs, and a size at which a speculative verify step takes a few
// milliseconds on one core.
func DefaultConfig() Config {
	return Config{
		Vocab:      1024,
		Hidden:     128,
		Heads:      8,
		Layers:     4,
		Experts:    8,
		TopK:       2,
		ExpertFFN:  64,
		MaxSeq:     512,
		Ranks:      8,
		Seed:       1,
		Attention:  attention.Tiled,
		BlockScale: 0.1,
	}
}

// HeadDim returns the width of one attention head.
func (c Config) HeadDim() int { return c.Hidden / c.Heads }

// Validate reports the first setting that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Vocab < 2 || c.Hidden < 1 || c.Heads < 1 || c.Layers < 1 || c.MaxSeq < 1:
		return fmt.Errorf("model: vocab %d, hidden %d, heads %d, layers %d, max seq %d: all must be positive (vocab at least 2)",
			c.Vocab, c.Hidden, c.Heads, c.Layers, c.MaxSeq)
	case c.Ranks < 1:
		return fmt.Errorf("model: %d ranks, need at least 1", c.Ranks)
	case c.Hidden%c.Heads != 0 || c.HeadDim()%2 != 0:
		return fmt.Errorf("model: hidden %d over %d heads must give an even head width", c.Hidden, c.Heads)
	case c.Heads%c.Ranks != 0:
		return fmt.Errorf("model: %d heads do not split over %d ranks", c.Heads, c.Ranks)
	case c.Hidden%c.Ranks != 0:
		return fmt.Errorf("model: hidden %d does not split over %d ranks", c.Hidden, c.Ranks)
	case c.Vocab%c.Ranks != 0:
		return fmt.Errorf("model: vocabulary %d does not split over %d ranks", c.Vocab, c.Ranks)
	case c.Experts < 1 || c.TopK < 1 || c.TopK > c.Experts:
		return fmt.Errorf("model: top-%d of %d experts", c.TopK, c.Experts)
	case c.ExpertFFN%c.Ranks != 0:
		return fmt.Errorf("model: expert FFN %d does not split over %d ranks", c.ExpertFFN, c.Ranks)
	}
	return nil
}
