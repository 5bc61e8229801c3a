package attention

import "github.com/perfbot/perfbot/testbed/engine/model/kernels"

// tileKeys is the number of keys in a tile.
const tileKeys = 32

// tiled walks keys in tiles with an online softmax: per query and head it
// keeps the running maximum m, the running denominator l and the
// unnormalized output acc, and rescales them when a tile raises the
// maximum. Extend loads each tile once for all queries that see it.
type tiled struct {
	scores [tileKeys]float32
	// Per-query state for Extend, grown on demand.
	acc  []float32
	m, l []float32
}

var _ Backend = (*tiled)(nil)

func (t *tiled) Name() string { return Tiled }

func (t *tiled) Decode(out, q []float32, c *Cache) {
	t.grow(1, c)
	t.begin(1, c)
	pos := c.Len - 1
	for lo := 0; lo <= pos; lo += tileKeys {
		hi := min(lo+tileKeys, pos+1)
		for h := range c.Heads {
			t.tile(0, h, q, c, lo, hi)
		}
	}
	t.finish(out, 1, c)
}

func (t *tiled) Extend(out, q []float32, tokens int, c *Cache) {
	t.grow(tokens, c)
	t.begin(tokens, c)
	first := c.Len - tokens
	w, d := c.Width(), c.HeadDim
	sc := scale(d)
	for lo := 0; lo < c.Len; lo += tileKeys {
		for i := range tokens {
			pos := first + i
			if lo > pos {
				continue
			}
			hi := min(lo+tileKeys, pos+1)
			for h := range c.Heads {
				qh := q[i*w+h*d : i*w+(h+1)*d]
				st := i*c.Heads + h
				scores := t.scores[:hi-lo]
				tm := float32(-1e30)
				for j := range scores {
					k := (lo + j) * w
					scores[j] = kernels.Dot(qh, c.K[k+h*d:k+(h+1)*d]) * sc
					tm = max(tm, scores[j])
				}
				t.update(st, c, h, scores, tm, lo)
			}
		}
	}
	t.finish(out, tokens, c)
}

// tile folds keys lo..hi-1 of head h into the state of query i.
func (t *tiled) tile(i, h int, q []float32, c *Cache, lo, hi int) {
	w, d := c.Width(), c.HeadDim
	sc := scale(d)
	qh := q[i*w+h*d : i*w+(h+1)*d]
	scores := t.scores[:hi-lo]
	tm := float32(-1e30)
	for j := range scores {
		k := (lo + j) * w
		scores[j] = kernels.Dot(qh, c.K[k+h*d:k+(h+1)*d]) * sc
		tm = max(tm, scores[j])
	}
	t.update(i*c.Heads+h, c, h, scores, tm, lo)
}

// update folds a tile's scores, whose maximum is tm, into state st.
func (t *tiled) update(st int, c *Cache, h int, scores []float32, tm float32, lo int) {
	w, d := c.Width(), c.HeadDim
	acc := t.acc[st*d : (st+1)*d]
	if tm > t.m[st] {
		r := kernels.Exp(t.m[st] - tm)
		t.l[st] *= r
		for x := range acc {
			acc[x] *= r
		}
		t.m[st] = tm
	}
	m := t.m[st]
	for j, s := range scores {
		p := kernels.Exp(s - m)
		t.l[st] += p
		v := (lo + j) * w
		kernels.Axpy(acc, p, c.V[v+h*d:v+(h+1)*d])
	}
}

func (t *tiled) grow(tokens int, c *Cache) {
	n := tokens * c.Heads
	if len(t.m) < n {
		t.m, t.l = make([]float32, n), make([]float32, n)
	}
	if len(t.acc) < n*c.HeadDim {
		t.acc = make([]float32, n*c.HeadDim)
	}
}

func (t *tiled) begin(tokens int, c *Cache) {
	n := tokens * c.Heads
	for st := range n {
		t.m[st], t.l[st] = -1e30, 0
	}
	clear(t.acc[:n*c.HeadDim])
}

func (t *tiled) finish(out []float32, tokens int, c *Cache) {
	d := c.HeadDim
	for st := range tokens * c.Heads {
		inv := 1 / t.l[st]
		for x := range d {
			out[st*d+x] = t.acc[st*d+x] * inv
		}
	}
}
