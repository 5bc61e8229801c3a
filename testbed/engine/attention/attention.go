// Package attention computes causal multi-head attention over a rank's
// key/value cache.
//
// Two backends implement it, each with the two paths an inference engine
// needs: Decode for one new token, and Extend for several new tokens at
// once (a prefill, or the k+1 tokens a speculative verify step checks).
//
//   - naive: scores for all keys, softmax, weighted sum; one query at a time.
//   - tiled: flash-attention style: keys in tiles with an online softmax;
//     Extend walks each key tile once for all its queries.
//
// Within a backend, a query gives the same result, bit for bit, on either
// path. Across backends results agree to rounding.
package attention

import (
	"fmt"
	"math"
)

// Cache holds the keys and values of one rank and one layer: for every
// position, Heads×HeadDim floats of keys and as many of values.
type Cache struct {
	Heads, HeadDim int
	K, V           []float32
	// Len is the number of positions held.
	Len int
}

// NewCache returns an empty cache for up to maxSeq positions.
func NewCache(heads, headDim, maxSeq int) *Cache {
	w := heads * headDim
	return &Cache{Heads: heads, HeadDim: headDim, K: make([]float32, maxSeq*w), V: make([]float32, maxSeq*w)}
}

// Width is the number of floats a position takes in K (and in V).
func (c *Cache) Width() int { return c.Heads * c.HeadDim }

// Cap is the number of positions the cache can hold.
func (c *Cache) Cap() int { return len(c.K) / c.Width() }

// Append stores the keys and values of tokens new positions.
func (c *Cache) Append(k, v []float32, tokens int) error {
	w := c.Width()
	if c.Len+tokens > c.Cap() {
		return fmt.Errorf("attention: cache of %d positions cannot take %d more after %d", c.Cap(), tokens, c.Len)
	}
	copy(c.K[c.Len*w:], k[:tokens*w])
	copy(c.V[c.Len*w:], v[:tokens*w])
	c.Len += tokens
	return nil
}

// Truncate drops every position from n on.
func (c *Cache) Truncate(n int) {
	c.Len = min(c.Len, n)
}

// Backend computes attention for new tokens whose keys and values are
// already in the cache. A Backend keeps scratch space and must not be
// shared between goroutines.
type Backend interface {
	// Name returns the backend's name.
	Name() string
	// Decode writes to out (Heads×HeadDim) the attention of q, the query
	// of the last position in c, over all of c.
	Decode(out, q []float32, c *Cache)
	// Extend writes to out (tokens×Heads×HeadDim) the attention of
	// tokens queries, those of the last tokens positions in c, each over
	// the positions up to its own.
	Extend(out, q []float32, tokens int, c *Cache)
}

// Backend names.
const (
	Naive = "naive"
	Tiled = "tiled"
)

// New returns a fresh backend by name, sized for caches of up to maxSeq
// positions.
func New(name string, maxSeq int) (Backend, error) {
	switch name {
	case Naive:
		return &naive{scores: make([]float32, maxSeq)}, nil
	case Tiled, "":
		return &tiled{}, nil
	}
	return nil, fmt.Errorf("attention: unknown backend %q (want naive or tiled)", name)
}

func scale(headDim int) float32 {
	return float32(1 / math.Sqrt(float64(headDim)))
}
