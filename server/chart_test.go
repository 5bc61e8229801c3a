package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/views"
)

func TestValueRange(t *testing.T) {
	pt := func(v, lo, hi float64) views.NightPoint { return views.NightPoint{Value: v, Lo: lo, Hi: hi} }
	for _, tt := range []struct {
		name   string
		points []views.NightPoint
		lo, hi float64
	}{
		{name: "narrow intervals are shown whole", points: []views.NightPoint{pt(100, 99, 101), pt(90, 89, 91)}, lo: 89, hi: 101},
		{name: "wide intervals are clipped near the values", points: []views.NightPoint{pt(100, 60, 140), pt(90, 50, 130)}, lo: 84, hi: 106},
		{name: "one point without spread", points: []views.NightPoint{pt(100, 100, 100)}, lo: 100, hi: 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := valueRange(tt.points)
			require.InDelta(t, tt.lo, lo, 1e-9)
			require.InDelta(t, tt.hi, hi, 1e-9)
		})
	}
}

func TestNiceTicks(t *testing.T) {
	require.Equal(t, []float64{900, 925, 950, 975, 1000, 1025}, niceTicks(910, 1022, 5))
	require.Equal(t, []float64{11.5, 12, 12.5, 13, 13.5}, niceTicks(11.7, 13.2, 5))
	require.Equal(t, []float64{7}, niceTicks(7, 7, 5))
}
