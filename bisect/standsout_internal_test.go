package bisect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// standOutSearch returns a search of a chain of eight commits on one
// steady host, its runs taken in turn: the parent (3) and the culprit (4)
// with the given values, and five runs of 1% noise of each of the other
// commits, at level 100 up to the parent and 90 from the culprit on, so
// that the noise rests on enough degrees of freedom and the screen has a
// scale.
func standOutSearch(t *testing.T, parent, self []float64) (s *search, p, c int) {
	t.Helper()
	const n = 8
	p, c = 3, 4
	r := rand.New(rand.NewPCG(1, 2))
	values := make([][]float64, n)
	for i := range n {
		level := 100.0
		if i >= c {
			level = 90
		}
		for range 5 {
			values[i] = append(values[i], level*math.Exp(0.01*r.NormFloat64()))
		}
	}
	values[p], values[c] = parent, self
	s = &search{commits: make([]commitState, n), lastRun: -1, prevRun: -1}
	var seq uint64
	for k := 0; k < 5 || k < len(parent) || k < len(self); k++ {
		for i := range n {
			if k < len(values[i]) {
				seq++
				s.commits[i].runs = append(s.commits[i].runs, Run{Value: values[i][k], Seq: seq})
			}
		}
	}
	for i := range n {
		s.chain = append(s.chain, fmt.Sprintf("c%d", i))
		s.measured = append(s.measured, i)
	}
	s.rescreen()
	require.False(t, s.drifting, "a steady host")
	require.Positive(t, s.scale, "enough successive runs for a scale")
	require.GreaterOrEqual(t, s.noise().DF, float64(minStandOutDF))
	return s, p, c
}

// TestStandsOut states when the change between a culprit and its parent
// stands out of the noise the search has measured: the rule the search
// takes a culprit up by on fewer runs and Confirm confirms one by
// (shownByNoise), on the runs the screen kept.
func TestStandsOut(t *testing.T) {
	tests := []struct {
		name         string
		parent, self []float64
		// sign is the side the change must fall on; 0, either, as the
		// search asks (standsOut).
		sign float64
		want bool
	}{
		{name: "a clear drop stands out", parent: []float64{100, 101}, self: []float64{90, 90.5}, want: true},
		{name: "noise alone does not", parent: []float64{100, 101, 99.5}, self: []float64{100.5, 99, 100}},
		{name: "a stalled run of the parent does not make a change", parent: []float64{100, 101, 130}, self: []float64{100, 99.5, 100.5}},
		{name: "a stalled run of the culprit does not make a change", parent: []float64{100, 101, 99.5}, self: []float64{100, 70, 100.5}},
		{name: "a stalled run of the parent does not turn a drop around", parent: []float64{100, 101, 60}, self: []float64{90, 90.5, 89.5}, sign: -1, want: true},
		{name: "a drop stands out as a drop", parent: []float64{100, 101}, self: []float64{90, 90.5}, sign: -1, want: true},
		{name: "a drop is no improvement", parent: []float64{100, 101}, self: []float64{90, 90.5}, sign: 1},
		{name: "an improvement is no drop", parent: []float64{90, 90.5, 89.5}, self: []float64{100, 101, 99.5}, sign: -1},
		{name: "one run of the parent is too few", parent: []float64{100}, self: []float64{90, 90.5}},
		{name: "one run of the culprit is too few", parent: []float64{100, 101}, self: []float64{90}},
		{name: "a side of two the screen leaves one run of is too few", parent: []float64{100, 150}, self: []float64{90, 90.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p, c := standOutSearch(t, tt.parent, tt.self)
			if tt.sign == 0 {
				assert.Equal(t, tt.want, s.standsOut(p, c), "the search's rule")
			}
			assert.Equal(t, tt.want, shownByNoise(s.clean(p), s.clean(c), s.noise(), tt.sign), "the shared rule on the clean runs")
		})
	}
}

// TestScreen states what the screen keeps: every run without a scale, a
// group of three or more without its odd run out, and all of a group it
// would leave fewer than half of.
func TestScreen(t *testing.T) {
	ln := math.Log
	tests := []struct {
		name   string
		groups [][]float64
		scale  float64
		want   [][]float64
	}{
		{name: "no scale, nothing screened", groups: [][]float64{{ln(100), ln(130), ln(100)}, {ln(90)}}, scale: 0,
			want: [][]float64{{ln(100), ln(130), ln(100)}, {ln(90)}}},
		{name: "the odd run out of three", groups: [][]float64{{ln(100), ln(130), ln(101)}, {ln(90), ln(90.5), ln(89.5)}}, scale: 0.01,
			want: [][]float64{{ln(100), ln(101)}, {ln(90), ln(90.5), ln(89.5)}}},
		{name: "two even clusters are kept whole", groups: [][]float64{{ln(100), ln(110), ln(100), ln(110)}, {ln(90), ln(90), ln(90)}}, scale: 0.01,
			want: [][]float64{{ln(100), ln(110), ln(100), ln(110)}, {ln(90), ln(90), ln(90)}}},
		{name: "a run of a small group beyond the ends' span", groups: [][]float64{{ln(100), ln(100), ln(100)}, {ln(90), ln(90), ln(90)}, {ln(95), ln(150)}}, scale: 0.01,
			want: [][]float64{{ln(100), ln(100), ln(100)}, {ln(90), ln(90), ln(90)}, {ln(95)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := screen(tt.groups, tt.scale, 0, 1)
			require.Len(t, got, len(tt.want))
			for j := range tt.want {
				assert.InDeltaSlice(t, tt.want[j], got[j], 1e-12, "group %d", j)
			}
		})
	}
}
