// Package moe is the mixture-of-experts feed-forward block: a router picks
// the top-k experts of every token, and each rank computes its slice of
// those experts' gated FFNs.
//
// Experts are tensor-parallel: the up and gate projections are split by
// rows (column-parallel), the down projection by columns (row-parallel), so
// a rank's output is a partial sum that the communicator reduces.
package moe

import (
	"fmt"
	"math"

	"github.com/perfbot/perfbot/testbed/engine/model/kernels"
)

// Router scores the experts of a token and keeps the TopK best. Every rank
// holds the whole router and routes every token itself, so ranks agree
// without communicating.
type Router struct {
	W    *kernels.Matrix // experts × hidden
	TopK int
}

// Route writes, for each of tokens rows of h, the indices of its TopK
// experts (best first) to experts and their gate weights, a softmax over the
// chosen experts' scores, to gates. logits is scratch of at least
// tokens×experts floats.
func (r *Router) Route(experts []int, gates, logits, h []float32, tokens int) {
	e, k := r.W.Rows, r.TopK
	kernels.MatMul(logits, h, tokens, r.W)
	for t := range tokens {
		lt := logits[t*e : (t+1)*e]
		idx, g := experts[t*k:(t+1)*k], gates[t*k:(t+1)*k]
		topK(idx, lt)
		m := lt[idx[0]]
		var sum float32
		for i, x := range idx {
			g[i] = float32(math.Exp(float64(lt[x] - m)))
			sum += g[i]
		}
		for i := range g {
			g[i] /= sum
		}
	}
}

// topK fills idx with the indices of the len(idx) largest scores, largest
// first, by repeated selection: k is small, so this beats sorting.
func topK(idx []int, scores []float32) {
	for i := range idx {
		best := -1
		for x, s := range scores {
			if taken(idx[:i], x) {
				continue
			}
			if best < 0 || s > scores[best] {
				best = x
			}
		}
		idx[i] = best
	}
}

func taken(idx []int, x int) bool {
	for _, y := range idx {
		if y == x {
			return true
		}
	}
	return false
}

// Expert is one rank's slice of one expert.
type Expert struct {
	Up, Gate *kernels.Matrix // ffn/ranks × hidden
	Down     *kernels.Matrix // hidden × ffn/ranks
}

// Shard is one rank's slice of every expert of a layer.
type Shard struct {
	Experts []Expert
	up, act []float32
	down    []float32
}

// NewShard returns a shard over experts, all of the same shape.
func NewShard(experts []Expert) (*Shard, error) {
	if len(experts) == 0 {
		return nil, fmt.Errorf("moe: no experts")
	}
	f := experts[0].Up.Rows
	return &Shard{
		Experts: experts,
		up:      make([]float32, f),
		act:     make([]float32, f),
		down:    make([]float32, experts[0].Down.Rows),
	}, nil
}

// Forward writes to out (tokens×hidden) this rank's partial sum of the
// routed experts' outputs for every token of h.
func (s *Shard) Forward(out, h []float32, tokens int, experts []int, gates []float32) {
	d := s.Experts[0].Up.Cols
	k := len(experts) / tokens
	clear(out[:tokens*d])
	for t := range tokens {
		ht, ot := h[t*d:(t+1)*d], out[t*d:(t+1)*d]
		for i := range k {
			ex := &s.Experts[experts[t*k+i]]
			kernels.MatMul(s.up, ht, 1, ex.Up)
			kernels.MatMul(s.act, ht, 1, ex.Gate)
			for j, u := range s.up {
				s.act[j] = kernels.SiLU(s.act[j]) * u
			}
			kernels.MatMul(s.down, s.act, 1, ex.Down)
			kernels.Axpy(ot, gates[t*k+i], s.down)
		}
	}
}
