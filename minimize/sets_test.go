package minimize

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetUniverseClosure(t *testing.T) {
	u, err := newSetUniverse(
		[]Group{{Name: "a.go", Elements: []string{"a", "b", "c"}}, {Name: "b.go", Elements: []string{"d", "e"}}},
		// a needs b needs d; c and e need each other.
		map[string][]string{"a": {"b"}, "b": {"d"}, "c": {"e"}, "e": {"c"}},
	)
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		set      elemSet
		up, down elemSet
	}{
		{"empty", elemSet{}, nil, nil},
		{"chain", elemSet{0}, elemSet{0, 1, 3}, nil},
		{"chain without its root", elemSet{0, 1}, elemSet{0, 1, 3}, nil},
		{"whole chain", elemSet{0, 1, 3}, elemSet{0, 1, 3}, elemSet{0, 1, 3}},
		{"half a cycle", elemSet{2}, elemSet{2, 4}, nil},
		{"leaf kept", elemSet{1, 3, 4}, elemSet{1, 2, 3, 4}, elemSet{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.up, u.closeUp(tc.set), "closeUp")
			assert.Equal(t, tc.down, u.closeDown(tc.set), "closeDown")
		})
	}
}

func TestSetUniversePartition(t *testing.T) {
	groups := func(sizes ...int) []Group {
		var gs []Group
		e := 0
		for _, n := range sizes {
			var g Group
			for range n {
				g.Elements = append(g.Elements, string(rune('a'+e)))
				e++
			}
			gs = append(gs, g)
		}
		return gs
	}
	for _, tc := range []struct {
		name  string
		sizes []int
		delta elemSet
		n     int
		want  []elemSet
	}{
		{"files whole", []int{2, 3, 3}, elemSet{0, 1, 2, 3, 4, 5, 6, 7}, 2, []elemSet{{0, 1, 2, 3, 4}, {5, 6, 7}}},
		{"one file splits", []int{8}, elemSet{0, 1, 2, 3, 4, 5, 6, 7}, 2, []elemSet{{0, 1, 2, 3}, {4, 5, 6, 7}}},
		{"lopsided files split", []int{5, 1}, elemSet{0, 1, 2, 3, 4, 5}, 2, []elemSet{{0, 1, 2}, {3, 4, 5}}},
		{"more parts than files", []int{2, 2}, elemSet{0, 1, 2, 3}, 4, []elemSet{{0}, {1}, {2}, {3}}},
		{"n beyond delta", []int{3}, elemSet{0, 2}, 4, []elemSet{{0}, {2}}},
		{"four files in four", []int{2, 2, 2, 2}, elemSet{0, 1, 2, 3, 4, 5, 6, 7}, 4, []elemSet{{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
		{"lopsided four in four", []int{2, 1, 4, 1}, elemSet{0, 1, 2, 3, 4, 5, 6, 7}, 4, []elemSet{{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
		{"files of a part of delta", []int{2, 2, 2, 2}, elemSet{2, 3, 4, 5, 6, 7}, 3, []elemSet{{2, 3}, {4, 5}, {6, 7}}},
		{"nearly even files stay whole", []int{3, 4}, elemSet{0, 1, 2, 3, 4, 5, 6}, 2, []elemSet{{0, 1, 2}, {3, 4, 5, 6}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := newSetUniverse(groups(tc.sizes...), nil)
			require.NoError(t, err)
			got := u.partition(tc.delta, tc.n)
			assert.Equal(t, tc.want, got)
			var all elemSet
			for _, p := range got {
				require.NotEmpty(t, p)
				all = all.union(p)
			}
			assert.Equal(t, tc.delta, all, "parts cover delta")
		})
	}
}

func TestElemSetOps(t *testing.T) {
	a, b := elemSet{1, 3, 5}, elemSet{2, 3, 6}
	assert.Equal(t, elemSet{1, 2, 3, 5, 6}, a.union(b))
	assert.Equal(t, elemSet{1, 5}, a.minus(b))
	assert.True(t, elemSet{3, 5}.subsetOf(a))
	assert.False(t, b.subsetOf(a))
	assert.Equal(t, "1,3,5", a.key())
	assert.Equal(t, "", elemSet{}.key())
}

func TestEffectOf(t *testing.T) {
	ref := []float64{100, 101, 99, 100.5, 99.5, 100, 100.2, 99.8}
	xs := []float64{95, 96, 94, 95.5, 94.5, 95, 95.2, 94.8}
	m := effectOf(ref, xs)
	assert.InDelta(t, -5, m.Pct, 0.3)
	assert.Less(t, m.Lo, m.Pct)
	assert.Greater(t, m.Hi, m.Pct)
	assert.Less(t, m.Hi, 0.0)
	assert.Equal(t, 8, m.N)

	// One stalled run moves neither the estimate nor the interval much.
	stalled := append([]float64{30}, xs[1:]...)
	ms := effectOf(ref, stalled)
	assert.InDelta(t, m.Pct, ms.Pct, 0.5)
	assert.False(t, math.IsNaN(ms.Lo))

	assert.True(t, m.Measured())
	assert.Equal(t, &m.Effect, m.Record())
	for _, e := range []Effect{effectOf(ref, nil), effectOf(nil, xs[:3])} {
		assert.Equal(t, Effect{}, e, "a side without samples: not measured")
		assert.False(t, e.Measured())
		assert.Nil(t, e.Record(), "never an effect of zero")
	}
}
