// Package kernels holds the dense float32 kernels every layer of the engine
// is built from: dot products, matrix products, normalization and
// activations.
//
// The kernels stand in for the GPU kernels of a real engine. They are
// written so that a token's result never depends on how many tokens are
// computed together: a matrix product over k+1 verify tokens gives, bit for
// bit, the values that k+1 single-token decode steps give. Speculative
// decoding relies on that to emit exactly the tokens that greedy decoding
// emits.
package kernels

import "math"

// Matrix is a dense row-major matrix of float32.
type Matrix struct {
	Rows, Cols int
	Data       []float32
}

// NewMatrix returns a zeroed rows×cols matrix.
func NewMatrix(rows, cols int) *Matrix {
	return &Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
}

// Row returns row i, sharing storage with m.
func (m *Matrix) Row(i int) []float32 {
	return m.Data[i*m.Cols : (i+1)*m.Cols : (i+1)*m.Cols]
}

// Dot returns the dot product of a and b, which must have the same length.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// MatMul computes out[t] = w · x[t] for tokens rows of x: x is
// tokens×w.Cols and out is tokens×w.Rows, both row-major.
func MatMul(out, x []float32, tokens int, w *Matrix) {
	for t := range tokens {
		xt := x[t*w.Cols : (t+1)*w.Cols]
		ot := out[t*w.Rows : (t+1)*w.Rows]
		for r := range w.Rows {
			ot[r] = Dot(xt, w.Data[r*w.Cols:(r+1)*w.Cols])
		}
	}
}

// Axpy adds a*x to y.
func Axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// Add adds x to y element by element.
func Add(y, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += x[i]
	}
}

// RMSNorm writes x / rms(x) * weight to out, one row of width len(weight)
// at a time.
func RMSNorm(out, x, weight []float32) {
	n := len(weight)
	for off := 0; off+n <= len(x); off += n {
		row, o := x[off:off+n], out[off:off+n]
		var ss float32
		for _, v := range row {
			ss += v * v
		}
		inv := float32(1 / math.Sqrt(float64(ss/float32(n))+1e-6))
		for i, v := range row {
			o[i] = v * inv * weight[i]
		}
	}
}

// SiLU returns x * sigmoid(x).
func SiLU(x float32) float32 {
	return x / (1 + Exp(-x))
}

// Exp returns e**x. Attention calls it for every score and the experts for
// every activation.
func Exp(x float32) float32 {
	return float32(math.Exp(float64(x)))
}

// Argmax returns the index of the largest value, the first one on ties.
func Argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
