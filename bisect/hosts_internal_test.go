package bisect

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostOffsets(t *testing.T) {
	ln := math.Log
	for _, tc := range []struct {
		name   string
		groups [][]float64
		hosts  [][]string
		want   map[string]float64 // nil: nothing fitted
		linked []string
	}{
		{
			name:   "one host: nothing to fit",
			groups: [][]float64{{ln(100), ln(101)}, {ln(95)}},
			hosts:  [][]string{{"a", "a"}, {"a"}},
		},
		{
			name: "two hosts, the second 5% slower, levels recovered exactly",
			groups: [][]float64{
				{ln(100), ln(100 * 0.95), ln(100)},
				{ln(90), ln(90 * 0.95)},
				{ln(92 * 0.95)}, // measured on b only: a level of its own
			},
			hosts:  [][]string{{"a", "b", "a"}, {"a", "b"}, {"b"}},
			want:   map[string]float64{"a": 0, "b": ln(0.95)},
			linked: []string{"a", "b"},
		},
		{
			name: "a host that shares no commit with the good end's has no offset",
			groups: [][]float64{
				{ln(100), ln(98)},
				{ln(90), ln(91)},
				{ln(80)},
			},
			hosts:  [][]string{{"a", "b"}, {"a", "b"}, {"c"}},
			want:   map[string]float64{"a": 0, "b": (ln(0.98) + ln(91.0/90)) / 2}, // least squares over both commits
			linked: []string{"a", "b"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, linked := hostOffsets(tc.groups, tc.hosts, 0)
			if tc.want == nil {
				assert.Nil(t, got)
				assert.Nil(t, linked)
				return
			}
			assert.Len(t, got, len(tc.want))
			for h, w := range tc.want {
				assert.InDelta(t, w, got[h], 0.002, "host %s", h)
			}
			assert.Len(t, linked, len(tc.linked))
			for _, h := range tc.linked {
				assert.True(t, linked[h], "host %s linked", h)
			}
		})
	}
}

// TestMachines: the machine of a run is its host and node; runs of two
// nodes of one host make no pair, and their offsets are fitted apart.
func TestMachines(t *testing.T) {
	assert.Equal(t, "gpu1", Run{Host: "gpu1"}.machine())
	assert.Equal(t, "cluster/node3", Run{Host: "cluster", Node: "node3"}.machine())

	parent := []Run{{Value: 100, Seq: 1, Host: "cluster", Node: "n1"}, {Value: 100, Seq: 3, Host: "cluster", Node: "n2"}}
	self := []Run{{Value: 95, Seq: 2, Host: "cluster", Node: "n2"}}
	ip, is := pairs(parent, self)
	assert.Equal(t, []int{1}, ip, "the parent's run on n2 pairs, the nearer one on n1 does not")
	assert.Equal(t, []int{0}, is)

	s := &search{chain: []string{"a", "b"}, commits: make([]commitState, 2), measured: []int{0, 1}, lastRun: -1, prevRun: -1}
	ln := math.Log
	var seq uint64
	for k := range 4 {
		for i, level := range []float64{100, 95} {
			node := []string{"n1", "n2"}[k%2]
			speed := map[string]float64{"n1": 1, "n2": 0.9}[node]
			seq++
			s.commits[i].runs = append(s.commits[i].runs, Run{Value: level * speed, Seq: seq, Host: "cluster", Node: node})
		}
	}
	s.rescreen()
	for i, level := range []float64{100, 95} {
		require.Len(t, s.clean(i), 4)
		for _, y := range s.clean(i) {
			assert.InDelta(t, ln(level), y, 1e-6, "the node's speed taken out of commit %d", i)
		}
	}
}
