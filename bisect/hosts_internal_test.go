package bisect

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
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
