package bisect

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAnchored(t *testing.T) {
	groups := [][]Run{
		{{Value: 1, Seq: 1}, {Value: 1, Seq: 3}, {Value: 1, Seq: 100}, {Value: 1}},
		{{Value: 1, Seq: 2}, {Value: 1, Seq: 10}, {Value: 1, Seq: 11}, {Value: 1, Seq: 12}, {Value: 1, Seq: 13}, {Value: 1, Seq: 14}, {Value: 1, Seq: 15}},
		{{Value: 1, Seq: 9}},
	}
	got := anchored(groups)
	assert.Equal(t, []bool{true, true, false, false}, got[0], "a run far from the others and a run of unknown time do not count")
	assert.Equal(t, []bool{true, true, true, true, false, false, false}, got[1], "a long row of one commit counts only near its start")
	assert.Equal(t, []bool{true}, got[2])
}

func TestPairs(t *testing.T) {
	seqs := func(ns ...uint64) []Run {
		out := make([]Run, len(ns))
		for i, n := range ns {
			out[i] = Run{Value: 1, Seq: n}
		}
		return out
	}
	tests := []struct {
		name   string
		a, b   []Run
		ia, ib []int
	}{
		{"far runs stay alone", seqs(1, 5, 20, 30), seqs(2, 3, 6, 40), []int{0, 1}, []int{0, 1}},
		{"the outer two of A A B B pair too", seqs(1, 3), seqs(4, 6), []int{0, 1}, []int{0, 1}},
		{"an endgame after a lone probe", seqs(9, 11, 12, 15), seqs(7, 10, 13, 14), []int{0, 1, 2, 3}, []int{0, 1, 2, 3}},
		{"no time, no pair", []Run{{Value: 1}}, []Run{{Value: 1}}, nil, nil},
		{"two machines make no pair", []Run{{Value: 1, Seq: 1, Host: "a"}}, []Run{{Value: 1, Seq: 2, Host: "b"}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ia, ib := pairs(tt.a, tt.b)
			assert.Equal(t, tt.ia, ia)
			assert.Equal(t, tt.ib, ib)
		})
	}
}

// TestPairsIsMaximum checks pairs against every matching of small random
// interleavings: it finds as many pairs as the best of them.
func TestPairsIsMaximum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		var a, b []Run
		seq := uint64(0)
		for range 2 + rng.IntN(9) {
			seq += 1 + uint64(rng.IntN(3))
			if rng.IntN(2) == 0 {
				a = append(a, Run{Value: 1, Seq: seq})
			} else {
				b = append(b, Run{Value: 1, Seq: seq})
			}
		}
		ia, ib := pairs(a, b)
		for k := range ia {
			if !besides(a[ia[k]], b[ib[k]]) {
				t.Fatalf("trial %d: pair %d is not side by side: %v %v", trial, k, a[ia[k]], b[ib[k]])
			}
		}
		if best := maxPairs(a, b, 0, map[int]bool{}); len(ia) != best {
			t.Fatalf("trial %d: a %v b %v: %d pairs, %d possible", trial, a, b, len(ia), best)
		}
	}
}

// maxPairs is the largest matching of a[i:] into the unused runs of b, by
// trying every choice.
func maxPairs(a, b []Run, i int, used map[int]bool) int {
	if i == len(a) {
		return 0
	}
	best := maxPairs(a, b, i+1, used)
	for j := range b {
		if !used[j] && besides(a[i], b[j]) {
			used[j] = true
			best = max(best, 1+maxPairs(a, b, i+1, used))
			used[j] = false
		}
	}
	return best
}

func TestBesidesInTime(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	a := Run{Seq: 10, At: now}
	assert.True(t, besides(a, Run{Seq: 11, At: now.Add(40 * time.Minute)}), "a build between them")
	assert.False(t, besides(a, Run{Seq: 11, At: now.Add(20 * time.Hour)}), "yesterday's last run and today's first")
	assert.True(t, besides(a, Run{Seq: 12}), "time unknown on one side")
	assert.False(t, besides(a, Run{Seq: 14, At: now}))
	assert.False(t, besides(Run{}, Run{}))
}
