package model

import (
	"math"
	"math/rand/v2"

	"github.com/perfbot/perfbot/testbed/engine/model/kernels"
)

// Weights are the full, unsharded weights of the model.
type Weights struct {
	Embed     *kernels.Matrix // vocab × hidden
	FinalNorm []float32
	LMHead    *kernels.Matrix // vocab × hidden
	Layers    []LayerWeights
}

// LayerWeights are the weights of one decoder layer.
type LayerWeights struct {
	AttnNorm   []float32
	Q, K, V, O *kernels.Matrix // hidden × hidden
	FFNNorm    []float32
	Router     *kernels.Matrix // experts × hidden
	Up, Gate   []*kernels.Matrix
	Down       []*kernels.Matrix
}

// Init fills matrices with uniform random values of variance scale²/fan-in,
// drawn from one seeded stream so that weights are reproducible.
type Init struct {
	rng *rand.Rand
}

// NewInit returns an initializer for seed and stream.
func NewInit(seed, stream uint64) *Init {
	return &Init{rng: rand.New(rand.NewPCG(seed, stream))}
}

// Matrix returns a rows×cols matrix.
func (in *Init) Matrix(rows, cols int, scale float32) *kernels.Matrix {
	m := kernels.NewMatrix(rows, cols)
	a := scale * float32(math.Sqrt(3/float64(cols)))
	for i := range m.Data {
		m.Data[i] = a * (2*in.rng.Float32() - 1)
	}
	return m
}

// Norm returns norm weights near one.
func (in *Init) Norm(n int) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = 1 + 0.1*(2*in.rng.Float32()-1)
	}
	return w
}

// NewWeights draws the weights that cfg.Seed selects.
func NewWeights(cfg Config) *Weights {
	in := NewInit(cfg.Seed, 0)
	d, f := cfg.Hidden, cfg.ExpertFFN
	w := &Weights{
		Embed:     in.Matrix(cfg.Vocab, d, float32(math.Sqrt(float64(d)))),
		FinalNorm: in.Norm(d),
		LMHead:    in.Matrix(cfg.Vocab, d, 1),
	}
	for range cfg.Layers {
		l := LayerWeights{
			AttnNorm: in.Norm(d),
			Q:        in.Matrix(d, d, 1),
			K:        in.Matrix(d, d, 1),
			V:        in.Matrix(d, d, 1),
			O:        in.Matrix(d, d, cfg.BlockScale),
			FFNNorm:  in.Norm(d),
			Router:   in.Matrix(cfg.Experts, d, 1),
		}
		for range cfg.Experts {
			l.Up = append(l.Up, in.Matrix(f, d, 1))
			l.Gate = append(l.Gate, in.Matrix(f, d, 1))
			l.Down = append(l.Down, in.Matrix(d, f, cfg.BlockScale))
		}
		w.Layers = append(w.Layers, l)
	}
	return w
}

// rows returns rows lo..hi-1 of m as a new matrix (a column-parallel
// shard).
func rows(m *kernels.Matrix, lo, hi int) *kernels.Matrix {
	s := kernels.NewMatrix(hi-lo, m.Cols)
	copy(s.Data, m.Data[lo*m.Cols:hi*m.Cols])
	return s
}

// cols returns columns lo..hi-1 of m as a new matrix (a row-parallel
// shard).
func cols(m *kernels.Matrix, lo, hi int) *kernels.Matrix {
	s := kernels.NewMatrix(m.Rows, hi-lo)
	for r := range m.Rows {
		copy(s.Row(r), m.Row(r)[lo:hi])
	}
	return s
}

// stack returns the rows of ms one after another.
func stack(ms ...*kernels.Matrix) *kernels.Matrix {
	n := 0
	for _, m := range ms {
		n += m.Rows
	}
	s := kernels.NewMatrix(n, ms[0].Cols)
	off := 0
	for _, m := range ms {
		copy(s.Data[off:], m.Data)
		off += len(m.Data)
	}
	return s
}
