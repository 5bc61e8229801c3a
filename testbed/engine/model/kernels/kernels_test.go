package kernels

import (
	"math"
	"slices"
	"testing"
)

func ramp(n int, f func(i int) float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = f(i)
	}
	return x
}

func TestDot(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 7, 64, 129} {
		a := ramp(n, func(i int) float32 { return float32(i%5) - 2 })
		b := ramp(n, func(i int) float32 { return float32(i%3) + 0.5 })
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		if got := Dot(a, b); math.Abs(float64(got)-want) > 1e-4 {
			t.Errorf("Dot of %d: got %g, want %g", n, got, want)
		}
	}
}

// TestMatMulPerToken checks that a token's output does not depend on how
// many tokens are multiplied together, bit for bit.
func TestMatMulPerToken(t *testing.T) {
	const rows, cols, tokens = 24, 40, 5
	w := &Matrix{Rows: rows, Cols: cols, Data: ramp(rows*cols, func(i int) float32 { return float32(math.Sin(float64(i))) })}
	x := ramp(tokens*cols, func(i int) float32 { return float32(math.Cos(float64(i) * 0.7)) })
	batch := make([]float32, tokens*rows)
	MatMul(batch, x, tokens, w)
	for tok := range tokens {
		one := make([]float32, rows)
		MatMul(one, x[tok*cols:(tok+1)*cols], 1, w)
		if !slices.Equal(one, batch[tok*rows:(tok+1)*rows]) {
			t.Errorf("token %d alone differs from the batch", tok)
		}
		for r := range rows {
			if want := Dot(x[tok*cols:(tok+1)*cols], w.Row(r)); one[r] != want {
				t.Errorf("token %d row %d: got %g, want %g", tok, r, one[r], want)
			}
		}
	}
}

func TestRMSNorm(t *testing.T) {
	x := []float32{3, 4, 0, 0, 1, 1, 1, 1}
	out := make([]float32, len(x))
	RMSNorm(out, x, []float32{1, 1, 1, 2})
	want := []float32{1.2, 1.6, 0, 0, 1, 1, 1, 2}
	for i := range want {
		if math.Abs(float64(out[i]-want[i])) > 1e-5 {
			t.Errorf("out[%d] = %g, want %g", i, out[i], want[i])
		}
	}
}

func TestArgmax(t *testing.T) {
	if got := Argmax([]float32{1, 5, 5, -2}); got != 1 {
		t.Errorf("Argmax = %d, want the first maximum, 1", got)
	}
}
