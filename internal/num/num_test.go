package num

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    float64
		want string
	}{
		{"tok/s of a server", 154432, "154,400"},
		{"a million", 1_234_567, "1,235,000"},
		{"thousands", 1544.2, "1,544"},
		{"hundreds", 812.54, "812.5"},
		{"no trailing zeros", 600, "600"},
		{"tens", 75.66, "75.66"},
		{"ones", 3.14159, "3.142"},
		{"small", 0.055971, "0.05597"},
		{"tiny, still no exponent", 0.000012345, "0.00001235"},
		{"negative", -14.83, "-14.83"},
		{"negative thousands", -2_500_000, "-2,500,000"},
		{"rounding carries into the next power", 9999.7, "10,000"},
		{"rounding carries below one", 0.99996, "1"},
		{"zero", 0, "0"},
		{"NaN", math.NaN(), "n/a"},
		{"infinity", math.Inf(-1), "n/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Format(tc.v))
		})
	}
}

// TestConfidence: one rule for every view of a confidence, so that the
// command line and the issue of one finding say the same.
func TestConfidence(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    float64
		want string
	}{
		{"a culprit at the default confidence", 0.99, "99.0%"},
		{"rounded down, never up", 0.9987, "99.8%"},
		{"a product that floats below its value", 0.995, "99.5%"},
		{"a cut-off", 0.9, "90.0%"},
		{"exactly 99.9%", 0.999, "99.9%"},
		{"above 99.9% but not certain", 0.99995, "> 99.9%"},
		{"short of certainty by a rounding error", 1 - 1e-12, "> 99.9%"},
		{"certain", 1, "100%"},
		{"low", 0.071, "7.1%"},
		{"zero", 0, "0.0%"},
		{"NaN", math.NaN(), "n/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Confidence(tc.p))
		})
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		want string
	}{
		{"one", 1, "1 hunk"},
		{"none", 0, "0 hunks"},
		{"several", 3, "3 hunks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Count(tc.n, "hunk"))
		})
	}
}
