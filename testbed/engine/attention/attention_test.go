package attention

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

const heads, headDim = 2, 16

func filled(positions int, seed uint64) (*Cache, []float32) {
	rng := rand.New(rand.NewPCG(seed, 1))
	c := NewCache(heads, headDim, 128)
	w := c.Width()
	k, v := make([]float32, positions*w), make([]float32, positions*w)
	for i := range k {
		k[i], v[i] = 2*rng.Float32()-1, 2*rng.Float32()-1
	}
	if err := c.Append(k, v, positions); err != nil {
		panic(err)
	}
	q := make([]float32, positions*w)
	for i := range q {
		q[i] = 3 * (2*rng.Float32() - 1)
	}
	return c, q
}

// reference computes attention in float64 for the query of position pos.
func reference(c *Cache, q []float32, pos int) []float64 {
	w, d := c.Width(), c.HeadDim
	out := make([]float64, w)
	for h := range c.Heads {
		scores := make([]float64, pos+1)
		m := math.Inf(-1)
		for j := range scores {
			for x := range d {
				scores[j] += float64(q[h*d+x]) * float64(c.K[j*w+h*d+x])
			}
			scores[j] /= math.Sqrt(float64(d))
			m = math.Max(m, scores[j])
		}
		var l float64
		for j := range scores {
			scores[j] = math.Exp(scores[j] - m)
			l += scores[j]
		}
		for j, p := range scores {
			for x := range d {
				out[h*d+x] += p / l * float64(c.V[j*w+h*d+x])
			}
		}
	}
	return out
}

func TestBackendsMatchReference(t *testing.T) {
	// 75 positions span several tiles and end inside one.
	const positions, tokens = 75, 4
	for _, name := range []string{Naive, Tiled} {
		t.Run(name, func(t *testing.T) {
			b, err := New(name, 128)
			if err != nil {
				t.Fatal(err)
			}
			c, q := filled(positions, 3)
			w := c.Width()
			out := make([]float32, tokens*w)
			b.Extend(out, q[(positions-tokens)*w:], tokens, c)
			for i := range tokens {
				pos := positions - tokens + i
				want := reference(c, q[pos*w:(pos+1)*w], pos)
				for x, v := range want {
					if got := out[i*w+x]; math.Abs(float64(got)-v) > 1e-5 {
						t.Fatalf("token %d element %d: got %g, want %g", i, x, got, v)
					}
				}
			}
		})
	}
}

// TestDecodeMatchesExtend checks, bit for bit, that a query gives the same
// output through Decode, one position at a time, as through Extend.
func TestDecodeMatchesExtend(t *testing.T) {
	const positions, tokens = 70, 4
	for _, name := range []string{Naive, Tiled} {
		t.Run(name, func(t *testing.T) {
			b, err := New(name, 128)
			if err != nil {
				t.Fatal(err)
			}
			c, q := filled(positions, 5)
			w := c.Width()
			extend := make([]float32, tokens*w)
			b.Extend(extend, q[(positions-tokens)*w:], tokens, c)
			for i := range tokens {
				pos := positions - tokens + i
				// Hide the later positions, as a decode step would not
				// have them yet; their data stays for the next token.
				c.Len = pos + 1
				decode := make([]float32, w)
				b.Decode(decode, q[pos*w:(pos+1)*w], c)
				if !slices.Equal(decode, extend[i*w:(i+1)*w]) {
					t.Errorf("position %d: decode and extend differ", pos)
				}
				c.Len = positions
			}
		})
	}
}

func TestCache(t *testing.T) {
	c := NewCache(1, 2, 3)
	if err := c.Append([]float32{1, 2, 3, 4}, []float32{5, 6, 7, 8}, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.Append([]float32{1, 2, 3, 4}, []float32{5, 6, 7, 8}, 2); err == nil {
		t.Error("appending past the capacity succeeded")
	}
	c.Truncate(1)
	if c.Len != 1 {
		t.Errorf("Len after Truncate(1) = %d", c.Len)
	}
	c.Truncate(5)
	if c.Len != 1 {
		t.Errorf("Truncate beyond Len grew the cache to %d", c.Len)
	}
}

func TestNewRejectsUnknown(t *testing.T) {
	if _, err := New("flash", 8); err == nil {
		t.Error("New(flash) succeeded")
	}
}
