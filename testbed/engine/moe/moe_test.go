package moe

import (
	"math"
	"slices"
	"testing"

	"github.com/perfbot/perfbot/testbed/engine/model/kernels"
)

func TestTopK(t *testing.T) {
	idx := make([]int, 3)
	topK(idx, []float32{0.1, 2, -1, 3, 2.5})
	if want := []int{3, 4, 1}; !slices.Equal(idx, want) {
		t.Errorf("topK = %v, want %v", idx, want)
	}
}

func TestRoute(t *testing.T) {
	// Two tokens, three experts, one hidden unit: the router's rows scale
	// the token's single feature.
	r := &Router{W: &kernels.Matrix{Rows: 3, Cols: 1, Data: []float32{1, -1, 0.5}}, TopK: 2}
	experts, gates, logits := make([]int, 4), make([]float32, 4), make([]float32, 6)
	r.Route(experts, gates, logits, []float32{2, -2}, 2)
	if want := []int{0, 2, 1, 2}; !slices.Equal(experts, want) {
		t.Errorf("experts = %v, want %v", experts, want)
	}
	for tok := range 2 {
		if sum := gates[2*tok] + gates[2*tok+1]; math.Abs(float64(sum)-1) > 1e-6 {
			t.Errorf("token %d gates sum to %g", tok, sum)
		}
		if gates[2*tok] < gates[2*tok+1] {
			t.Errorf("token %d: the best expert has the smaller gate", tok)
		}
	}
	// Token 0 scores 2 and 1: softmax gives 1/(1+e^-1).
	if want := 1 / (1 + math.Exp(-1)); math.Abs(float64(gates[0])-want) > 1e-6 {
		t.Errorf("gate = %g, want %g", gates[0], want)
	}
}

func TestShardForward(t *testing.T) {
	// One expert of width one: out = gate · down · silu(gateW·h) · (up·h).
	ex := Expert{
		Up:   &kernels.Matrix{Rows: 1, Cols: 2, Data: []float32{1, 0}},
		Gate: &kernels.Matrix{Rows: 1, Cols: 2, Data: []float32{0, 1}},
		Down: &kernels.Matrix{Rows: 2, Cols: 1, Data: []float32{1, -2}},
	}
	s, err := NewShard([]Expert{ex})
	if err != nil {
		t.Fatal(err)
	}
	out := []float32{9, 9}
	s.Forward(out, []float32{3, 1}, 1, []int{0}, []float32{0.5})
	act := 3 * kernels.SiLU(1)
	want := []float32{0.5 * act, -1 * act}
	for i := range want {
		if math.Abs(float64(out[i]-want[i])) > 1e-6 {
			t.Errorf("out[%d] = %g, want %g", i, out[i], want[i])
		}
	}
	if _, err := NewShard(nil); err == nil {
		t.Error("NewShard(nil) succeeded")
	}
}
