package model

import (
	"fmt"
	"sync"

	"github.com/perfbot/perfbot/testbed/engine/attention"
	"github.com/perfbot/perfbot/testbed/engine/communicator"
	"github.com/perfbot/perfbot/testbed/engine/model/kernels"
	"github.com/perfbot/perfbot/testbed/engine/moe"
)

// Model is the target model with its key/value caches. It is not safe for
// concurrent use: one sequence, one caller.
type Model struct {
	cfg   Config
	w     *Weights
	comm  *communicator.Group
	rope  *rope
	ranks []*rank
	len   int

	x      []float32
	hidden []float32
	logits []float32
}

// rank is one tensor-parallel rank: its weight shards, caches and scratch.
type rank struct {
	id     int
	layers []rankLayer
	// lmHead holds the rows of the LM head for this rank's slice of the
	// vocabulary.
	lmHead *kernels.Matrix
	attn   attention.Backend
	buf    scratch
}

type rankLayer struct {
	qkv      *kernels.Matrix // 3·localHeads·headDim × hidden
	o        *kernels.Matrix // hidden × localHeads·headDim
	cache    *attention.Cache
	router   *moe.Router
	experts  *moe.Shard
	attnNorm []float32
	ffnNorm  []float32
}

// scratch is a rank's working memory for one forward pass.
type scratch struct {
	x, h, qkv, q, k, v, attn, part []float32
	scores                         []float32
	experts                        []int
	gates                          []float32
	shard, vocab                   []float32
}

// Output is the result of a forward pass. Its slices are reused by the next
// pass.
type Output struct {
	// Hidden is tokens × hidden: the last layer's output before the final
	// norm, the feature an EAGLE draft reads.
	Hidden []float32
	// Logits is n × vocab for the last n tokens, n as asked.
	Logits []float32
}

// New builds the model that cfg describes.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Comm.Segment = cfg.Hidden / cfg.Ranks
	comm, err := communicator.NewGroup(cfg.Ranks, cfg.Comm)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	w := NewWeights(cfg)
	m := &Model{cfg: cfg, w: w, comm: comm, rope: newRope(cfg.HeadDim(), cfg.MaxSeq)}
	for r := range cfg.Ranks {
		rk, err := newRank(cfg, w, r)
		if err != nil {
			return nil, err
		}
		m.ranks = append(m.ranks, rk)
	}
	return m, nil
}

func newRank(cfg Config, w *Weights, id int) (*rank, error) {
	attn, err := attention.New(cfg.Attention, cfg.MaxSeq)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	hd, lh := cfg.HeadDim(), cfg.Heads/cfg.Ranks
	lo, hi := id*lh*hd, (id+1)*lh*hd
	flo, fhi := id*cfg.ExpertFFN/cfg.Ranks, (id+1)*cfg.ExpertFFN/cfg.Ranks
	vs := cfg.Vocab / cfg.Ranks
	rk := &rank{id: id, attn: attn, lmHead: rows(w.LMHead, id*vs, (id+1)*vs)}
	for _, l := range w.Layers {
		var experts []moe.Expert
		for e := range cfg.Experts {
			experts = append(experts, moe.Expert{
				Up:   rows(l.Up[e], flo, fhi),
				Gate: rows(l.Gate[e], flo, fhi),
				Down: cols(l.Down[e], flo, fhi),
			})
		}
		shard, err := moe.NewShard(experts)
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		rk.layers = append(rk.layers, rankLayer{
			qkv:      stack(rows(l.Q, lo, hi), rows(l.K, lo, hi), rows(l.V, lo, hi)),
			o:        cols(l.O, lo, hi),
			cache:    attention.NewCache(lh, hd, cfg.MaxSeq),
			router:   &moe.Router{W: l.Router, TopK: cfg.TopK},
			experts:  shard,
			attnNorm: l.AttnNorm,
			ffnNorm:  l.FFNNorm,
		})
	}
	return rk, nil
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Weights returns the full weights; the draft model shares the embedding,
// final norm and LM head.
func (m *Model) Weights() *Weights { return m.w }

// Communicator returns the group the ranks reduce through.
func (m *Model) Communicator() *communicator.Group { return m.comm }

// Len returns the number of positions in the caches.
func (m *Model) Len() int { return m.len }

// Truncate forgets every position from n on, for instance the draft
// tokens a verify step rejected.
func (m *Model) Truncate(n int) {
	m.len = min(m.len, n)
	for _, rk := range m.ranks {
		for _, l := range rk.layers {
			l.cache.Truncate(m.len)
		}
	}
}

// Forward runs tokens at the next positions, appending them to the caches,
// and computes logits for the last logitTokens of them. One token takes the
// decode path of attention, several the extend path.
func (m *Model) Forward(tokens []int, logitTokens int) (*Output, error) {
	t, d := len(tokens), m.cfg.Hidden
	if t == 0 || logitTokens > t || logitTokens < 0 {
		return nil, fmt.Errorf("model: forward of %d tokens with logits for %d", t, logitTokens)
	}
	if m.len+t > m.cfg.MaxSeq {
		return nil, fmt.Errorf("model: %d positions after %d exceed the maximum of %d", t, m.len, m.cfg.MaxSeq)
	}
	m.x = grow(m.x, t*d)
	for i, tok := range tokens {
		if tok < 0 || tok >= m.cfg.Vocab {
			return nil, fmt.Errorf("model: token %d at %d is outside the vocabulary of %d", tok, i, m.cfg.Vocab)
		}
		copy(m.x[i*d:(i+1)*d], m.w.Embed.Row(tok))
	}
	m.hidden = grow(m.hidden, t*d)
	m.logits = grow(m.logits, logitTokens*m.cfg.Vocab)
	var wg sync.WaitGroup
	for _, rk := range m.ranks {
		wg.Go(func() { m.runRank(rk, t, logitTokens) })
	}
	wg.Wait()
	m.len += t
	return &Output{Hidden: m.hidden[:t*d], Logits: m.logits}, nil
}

// runRank runs every layer of one rank over t tokens, then its slice of the
// LM head over the last logitTokens. Rank 0 leaves the final hidden states
// in m.hidden and the logits in m.logits; all ranks hold the same values.
func (m *Model) runRank(rk *rank, t, logitTokens int) {
	cfg := m.cfg
	d, hd, lh := cfg.Hidden, cfg.HeadDim(), cfg.Heads/cfg.Ranks
	w := lh * hd
	b := &rk.buf
	b.x, b.h, b.part = grow(b.x, t*d), grow(b.h, t*d), grow(b.part, t*d)
	b.qkv = grow(b.qkv, t*3*w)
	b.q, b.k, b.v, b.attn = grow(b.q, t*w), grow(b.k, t*w), grow(b.v, t*w), grow(b.attn, t*w)
	b.scores = grow(b.scores, t*cfg.Experts)
	b.experts = growInts(b.experts, t*cfg.TopK)
	b.gates = grow(b.gates, t*cfg.TopK)
	copy(b.x, m.x[:t*d])

	for _, l := range rk.layers {
		kernels.RMSNorm(b.h, b.x, l.attnNorm)
		kernels.MatMul(b.qkv, b.h, t, l.qkv)
		for i := range t {
			row := b.qkv[i*3*w : (i+1)*3*w]
			q, k := b.q[i*w:(i+1)*w], b.k[i*w:(i+1)*w]
			copy(q, row[:w])
			copy(k, row[w:2*w])
			copy(b.v[i*w:(i+1)*w], row[2*w:])
			m.rope.Apply(q, lh, m.len+i)
			m.rope.Apply(k, lh, m.len+i)
		}
		// Forward checked the room, so Append cannot fail.
		_ = l.cache.Append(b.k, b.v, t)
		if t == 1 {
			rk.attn.Decode(b.attn, b.q, l.cache)
		} else {
			rk.attn.Extend(b.attn, b.q, t, l.cache)
		}
		kernels.MatMul(b.part, b.attn, t, l.o)
		m.comm.AllReduce(rk.id, b.part)
		kernels.Add(b.x, b.part)

		kernels.RMSNorm(b.h, b.x, l.ffnNorm)
		l.router.Route(b.experts, b.gates, b.scores, b.h, t)
		l.experts.Forward(b.part, b.h, t, b.experts, b.gates)
		m.comm.AllReduce(rk.id, b.part)
		kernels.Add(b.x, b.part)
	}
	if rk.id == 0 {
		copy(m.hidden, b.x)
	}
	if logitTokens > 0 {
		m.gatherLogits(rk, t, logitTokens)
	}
}

// gatherLogits computes the rank's slice of the vocabulary's logits for the
// last n of t tokens and gathers all slices on every rank. The communicator
// only reduces, so each rank contributes its slice in a buffer of zeros:
// adding zeros is exact, and the logits are those one rank would compute.
func (m *Model) gatherLogits(rk *rank, t, n int) {
	d, v := m.cfg.Hidden, m.cfg.Vocab
	vs := rk.lmHead.Rows
	b := &rk.buf
	b.shard, b.vocab = grow(b.shard, n*vs), grow(b.vocab, n*v)
	kernels.RMSNorm(b.h[:n*d], b.x[(t-n)*d:t*d], m.w.FinalNorm)
	kernels.MatMul(b.shard, b.h[:n*d], n, rk.lmHead)
	clear(b.vocab)
	for i := range n {
		copy(b.vocab[i*v+rk.id*vs:], b.shard[i*vs:(i+1)*vs])
	}
	m.comm.AllReduce(rk.id, b.vocab)
	if rk.id == 0 {
		copy(m.logits, b.vocab)
	}
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func growInts(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}
