package loadgen

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// request is one request of the load, fixed before the load starts.
type request struct {
	prompt       string
	promptTokens int
	outputTokens int
}

// words are the words prompts are made of; a word is one prompt token.
var words = func() []string {
	w := make([]string, 512)
	for i := range w {
		w[i] = "w" + strconv.Itoa(i)
	}
	return w
}()

// Streams of the seed: each request is drawn from its own stream and
// index, so that request i is the same whatever the count or duration.
const (
	streamMeasured = 1
	streamWarmup   = 2
	streamArrivals = 3
)

// requestAt returns request i of stream: lengths around c's, the prompt a
// sequence of words.
func (c Config) requestAt(stream, i uint64) request {
	rng := rand.New(rand.NewPCG(c.Seed, stream<<48|i))
	p := drawLength(rng, c.PromptTokens, c.RangeRatio)
	var b strings.Builder
	for j := range p {
		if j > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return request{prompt: b.String(), promptTokens: p, outputTokens: drawLength(rng, c.OutputTokens, c.RangeRatio)}
}

// drawLength draws a length uniformly from [l·(1−r), l·(1+r)], at least 1.
func drawLength(rng *rand.Rand, l int, r float64) int {
	if r == 0 {
		return l
	}
	lo := int(math.Floor(float64(l) * (1 - r)))
	hi := int(math.Ceil(float64(l) * (1 + r)))
	return max(1, lo+rng.IntN(hi-lo+1))
}

// arrivals returns the send times of n requests at rate a second, after
// the start: gaps drawn from a gamma distribution of the given shape and
// mean 1/rate, accumulated, then scaled so that the last send is at
// n/rate, as vLLM does (accumulated draws stray by a percent or two from
// the rate asked for, differently for every seed).
func arrivals(rng *rand.Rand, n int, rate, shape float64) []time.Duration {
	at := make([]float64, n)
	t := 0.0
	for i := range at {
		t += gamma(rng, shape) / (shape * rate)
		at[i] = t
	}
	out := make([]time.Duration, n)
	if n == 0 || t == 0 {
		return out
	}
	scale := float64(n) / rate / t
	for i, v := range at {
		out[i] = time.Duration(v * scale * float64(time.Second))
	}
	return out
}

// arrivalsFor returns the send times at rate until d has passed, with the
// same gaps as arrivals but unscaled (the count is not known ahead).
func arrivalsFor(rng *rand.Rand, d time.Duration, rate, shape float64, limit int) []time.Duration {
	var out []time.Duration
	t := 0.0
	for limit <= 0 || len(out) < limit {
		t += gamma(rng, shape) / (shape * rate)
		at := time.Duration(t * float64(time.Second))
		if at >= d {
			break
		}
		out = append(out, at)
	}
	return out
}

// gamma draws from the gamma distribution of the shape and scale 1
// (Marsaglia and Tsang; a shape below 1 is boosted by U^(1/shape)).
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(rng, shape+1) * math.Pow(1-rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
