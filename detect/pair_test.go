package detect

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

func TestAlone(t *testing.T) {
	nm := Alone([]float64{990, 1010, 1000})
	assert.Equal(t, 1000.0, nm.Level)
	assert.Equal(t, []float64{990, 1010, 1000}, nm.Values)
	assert.Empty(t, nm.Ref)
}

func TestPair(t *testing.T) {
	higher := Config{Better: record.Higher}
	tip, ref := []float64{900, 1100, 800}, []float64{1000, 1100, 800}
	for _, tc := range []struct {
		name     string
		tip, ref []float64
		level    float64
		cfg      Config
		ok       bool
		values   []float64
		estimate float64
	}{
		{name: "no reference runs", tip: tip, level: 1000, cfg: higher},
		{name: "no level", tip: tip, ref: ref, cfg: higher},
		{name: "each run scaled by its pair", tip: tip, ref: ref, level: 1000, cfg: higher, ok: true,
			values: []float64{900, 1000, 1000}},
		{name: "unpaired runs scaled by the reference's median", tip: tip, ref: []float64{1000, 1250}, level: 1000, cfg: higher, ok: true,
			values: []float64{800, 977.7777777777778, 711.1111111111111}},
		{name: "best of a higher-is-better metric", tip: tip, ref: ref, level: 1000, ok: true,
			cfg: Config{Better: record.Higher, Best: true}, values: []float64{900, 1000, 1000}, estimate: 1000},
		{name: "best of a lower-is-better metric", tip: tip, ref: ref, level: 1000, ok: true,
			cfg: Config{Better: record.Lower, Best: true}, values: []float64{900, 1000, 1000}, estimate: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nm, ok := Pair(nil, "m", tc.tip, tc.ref, tc.level, tc.cfg)
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, 1.0, nm.RefWeight, "fewer than minWeightPairs pairs: scaled fully")
			assert.InDeltaSlice(t, tc.values, nm.Values, 1e-9)
			assert.InDelta(t, tc.estimate, nm.Estimate, 1e-9)
		})
	}
}

// The reference's weight follows what the nights show: a metric that
// moves with the host's speed (tip and reference alike, run by run and
// night by night) is scaled fully, a ratio within one run that does not
// follow the host is hardly scaled at all.
func TestPairWeight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shared float64 // how much of the host's speed the metric (tip and reference) takes
		lo, hi float64
	}{
		{name: "follows the host", shared: 1, lo: 0.85, hi: 1},
		{name: "a ratio within one run", shared: 0, lo: 0, hi: 0.15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var past []record.Night
			var w float64
			for range 10 {
				night := math.Exp(0.1 * rng.NormFloat64())
				tip, ref := make([]float64, 5), make([]float64, 5)
				for i := range tip {
					run := math.Pow(night*math.Exp(0.05*rng.NormFloat64()), tc.shared)
					ref[i] = 1000 * run * math.Exp(0.01*rng.NormFloat64())
					tip[i] = 1000 * run * math.Exp(0.01*rng.NormFloat64())
				}
				nm, ok := Pair(past, "m", tip, ref, 1000, Config{Better: record.Higher})
				require.True(t, ok)
				w = nm.RefWeight
				past = append(past, record.Night{Metrics: map[string]record.NightMetric{"m": nm}})
			}
			assert.GreaterOrEqual(t, w, tc.lo)
			assert.LessOrEqual(t, w, tc.hi)
		})
	}
}
