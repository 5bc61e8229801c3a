package speculative

import (
	"fmt"

	"github.com/perfbot/perfbot/testbed/engine/attention"
	"github.com/perfbot/perfbot/testbed/engine/model"
	"github.com/perfbot/perfbot/testbed/engine/model/kernels"
)

// Draft is an EAGLE-style draft head: one decoder layer with a dense FFN
// that reads the embedding of a token together with a feature (the target's
// hidden state at the previous position, or its own while it runs ahead),
// and shares the target's embedding, final norm and LM head. It runs on a
// single rank.
//
// Draft position j consumes token j and the feature of position j-1 and
// guesses token j+1. The draft applies no rotary embedding: the target's
// features already carry the positions.
type Draft struct {
	cfg    model.Config
	target *model.Weights
	fc     *kernels.Matrix // hidden × 2·hidden
	layer  draftLayer
	attn   attention.Backend
	cache  *attention.Cache
	// states holds the hidden state of every draft position: the feature
	// of the next position while the draft runs ahead of the target.
	states []float32
	buf    draftScratch
}

type draftLayer struct {
	attnNorm, ffnNorm []float32
	qkv               *kernels.Matrix // 3·hidden × hidden
	o                 *kernels.Matrix // hidden × hidden
	up, gate          *kernels.Matrix // ffn × hidden
	down              *kernels.Matrix // hidden × ffn
}

type draftScratch struct {
	in, x, h, qkv, q, k, v, attn, part, up, act []float32
	normed, logits                              []float32
}

// draftFFN is the width of the draft's dense FFN.
const draftFFN = 128

// NewDraft returns the draft head of target. Its own weights come from the
// target's seed on a separate stream. The fc projection starts from the
// identity on the token embedding: a trained EAGLE head learns to carry
// the token through, and the random one is made to do the same so that it
// guesses the random target's tokens often enough to be useful.
func NewDraft(target *model.Model) (*Draft, error) {
	cfg := target.Config()
	attn, err := attention.New(cfg.Attention, cfg.MaxSeq)
	if err != nil {
		return nil, fmt.Errorf("speculative: %w", err)
	}
	in := model.NewInit(cfg.Seed, 1)
	d := cfg.Hidden
	fc := in.Matrix(d, 2*d, 0.1)
	for i := range d {
		fc.Row(i)[i] += 1
	}
	return &Draft{
		cfg:    cfg,
		target: target.Weights(),
		fc:     fc,
		layer: draftLayer{
			attnNorm: in.Norm(d),
			ffnNorm:  in.Norm(d),
			qkv:      in.Matrix(3*d, d, 1),
			o:        in.Matrix(d, d, cfg.BlockScale),
			up:       in.Matrix(draftFFN, d, 1),
			gate:     in.Matrix(draftFFN, d, 1),
			down:     in.Matrix(d, draftFFN, cfg.BlockScale),
		},
		attn:   attn,
		cache:  attention.NewCache(cfg.Heads, cfg.HeadDim(), cfg.MaxSeq),
		states: make([]float32, cfg.MaxSeq*d),
	}, nil
}

// Len returns the number of draft positions in the cache.
func (dr *Draft) Len() int { return dr.cache.Len }

// Truncate forgets every draft position from n on.
func (dr *Draft) Truncate(n int) { dr.cache.Truncate(n) }

// State returns the hidden state the draft computed at its last position.
func (dr *Draft) State() []float32 {
	d := dr.cfg.Hidden
	return dr.states[(dr.cache.Len-1)*d : dr.cache.Len*d]
}

// Forward runs tokens, each with its feature row (tokens × hidden), at the
// next draft positions and returns the draft's hidden states and the
// logits of the last token. The slices are reused by the next call.
func (dr *Draft) Forward(tokens []int, features []float32) (hidden, logits []float32, err error) {
	cfg := dr.cfg
	t, d := len(tokens), cfg.Hidden
	if dr.cache.Len+t > dr.cache.Cap() {
		return nil, nil, fmt.Errorf("speculative: %d draft positions after %d exceed the maximum of %d", t, dr.cache.Len, dr.cache.Cap())
	}
	b := &dr.buf
	b.in, b.x, b.h, b.part = grow(b.in, t*2*d), grow(b.x, t*d), grow(b.h, t*d), grow(b.part, t*d)
	b.qkv, b.q, b.k, b.v, b.attn = grow(b.qkv, t*3*d), grow(b.q, t*d), grow(b.k, t*d), grow(b.v, t*d), grow(b.attn, t*d)
	b.up, b.act = grow(b.up, draftFFN), grow(b.act, draftFFN)
	for i, tok := range tokens {
		if tok < 0 || tok >= cfg.Vocab {
			return nil, nil, fmt.Errorf("speculative: draft token %d at %d is outside the vocabulary of %d", tok, i, cfg.Vocab)
		}
		copy(b.in[i*2*d:], dr.target.Embed.Row(tok))
		copy(b.in[i*2*d+d:(i+1)*2*d], features[i*d:(i+1)*d])
	}
	kernels.MatMul(b.x, b.in, t, dr.fc)
	l := &dr.layer
	kernels.RMSNorm(b.h, b.x, l.attnNorm)
	kernels.MatMul(b.qkv, b.h, t, l.qkv)
	for i := range t {
		row := b.qkv[i*3*d : (i+1)*3*d]
		copy(b.q[i*d:(i+1)*d], row[:d])
		copy(b.k[i*d:(i+1)*d], row[d:2*d])
		copy(b.v[i*d:(i+1)*d], row[2*d:])
	}
	first := dr.cache.Len
	if err := dr.cache.Append(b.k, b.v, t); err != nil {
		return nil, nil, fmt.Errorf("speculative: %w", err)
	}
	if t == 1 {
		dr.attn.Decode(b.attn, b.q, dr.cache)
	} else {
		dr.attn.Extend(b.attn, b.q, t, dr.cache)
	}
	kernels.MatMul(b.part, b.attn, t, l.o)
	kernels.Add(b.x, b.part)
	kernels.RMSNorm(b.h, b.x, l.ffnNorm)
	for i := range t {
		ht := b.h[i*d : (i+1)*d]
		kernels.MatMul(b.up, ht, 1, l.up)
		kernels.MatMul(b.act, ht, 1, l.gate)
		for j, u := range b.up {
			b.act[j] = kernels.SiLU(b.act[j]) * u
		}
		kernels.MatMul(b.part[i*d:(i+1)*d], b.act, 1, l.down)
	}
	kernels.Add(b.x, b.part[:t*d])
	copy(dr.states[first*d:], b.x[:t*d])
	return b.x[:t*d], dr.logitsOf(b.x[(t-1)*d:t*d], 1), nil
}

// logitsOf returns the LM head's logits for the last rows hidden states of
// h.
func (dr *Draft) logitsOf(h []float32, rows int) []float32 {
	d, v := dr.cfg.Hidden, dr.cfg.Vocab
	b := &dr.buf
	b.normed, b.logits = grow(b.normed, rows*d), grow(b.logits, rows*v)
	kernels.RMSNorm(b.normed, h, dr.target.FinalNorm)
	kernels.MatMul(b.logits, b.normed, rows, dr.target.LMHead)
	return b.logits[(rows-1)*v : rows*v]
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
