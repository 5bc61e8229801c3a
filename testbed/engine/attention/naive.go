package attention

import "github.com/perfbot/perfbot/testbed/engine/model/kernels"

// naive computes every score of a query, then the softmax, then the
// weighted sum of values.
type naive struct {
	scores []float32
}

var _ Backend = (*naive)(nil)

func (n *naive) Name() string { return Naive }

func (n *naive) Decode(out, q []float32, c *Cache) {
	n.query(out, q, c, c.Len-1)
}

func (n *naive) Extend(out, q []float32, tokens int, c *Cache) {
	w := c.Width()
	for t := range tokens {
		n.query(out[t*w:(t+1)*w], q[t*w:(t+1)*w], c, c.Len-tokens+t)
	}
}

// query attends from q, at position pos, over positions 0..pos.
func (n *naive) query(out, q []float32, c *Cache, pos int) {
	w, d := c.Width(), c.HeadDim
	sc := scale(d)
	scores := n.scores[:pos+1]
	for h := range c.Heads {
		qh, oh := q[h*d:(h+1)*d], out[h*d:(h+1)*d]
		m := float32(-1e30)
		for j := range scores {
			scores[j] = kernels.Dot(qh, c.K[j*w+h*d:j*w+(h+1)*d]) * sc
			m = max(m, scores[j])
		}
		var l float32
		for j, s := range scores {
			scores[j] = kernels.Exp(s - m)
			l += scores[j]
		}
		clear(oh)
		for j, p := range scores {
			kernels.Axpy(oh, p/l, c.V[j*w+h*d:j*w+(h+1)*d])
		}
	}
}
