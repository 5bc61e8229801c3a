package detect

import (
	"fmt"

	"github.com/perfbot/perfbot/record"
)

// Config sets up detection for one metric. Zero fields take the defaults
// given beside them; Better is required.
type Config struct {
	// Better says which way is good for the metric: record.Higher or
	// record.Lower. It decides which alerts are regressions.
	Better record.Better
	// MinEffect is the smallest relative change of interest: an alert
	// needs its change (After against Before) to be at least this large.
	// Default DefaultMinEffect.
	MinEffect float64
	// Allowance is the CUSUM's κ: the shift, as a fraction of the level,
	// that the sums ignore. Default MinEffect/2 (the optimal κ for a
	// change of MinEffect).
	Allowance float64
	// Threshold is the CUSUM's alarm level h, in standard deviations of a
	// night's value. Default 0: chosen each night, from κ in standard
	// deviations, so that a sum's in-control average run length is ARL
	// nights (Siegmund's approximation); noisier metrics get a higher h.
	Threshold float64
	// ARL is the in-control average run length, in nights, of each of the
	// two one-sided CUSUMs when Threshold is 0. Default DefaultARL.
	ARL float64
	// Jump is the one-night limit, in standard deviations of a night's
	// value: a single night this far from the level (and at least
	// MinEffect from it) alarms at once. Default DefaultJump.
	Jump float64
	// Window is the number of nights of the current level whose median is
	// the baseline; the noise of a night is estimated from the last
	// 2·Window nights. Default DefaultWindow.
	Window int
	// MinLevel is the number of nights the level after a change needs
	// before its CUSUMs run; until then only a further step in the
	// direction of that change (the one-night limit) can alert. It is also
	// the longest run of nights the paired test of a young series weighs
	// together. Default DefaultMinLevel.
	MinLevel int
	// Warmup is the number of nights with values before the CUSUMs and
	// the one-night limit, which read the noise between nights, take over
	// from the paired test of a young series: each night's values against
	// the reference's level, with the noise its repeats show (see the
	// package doc). It never silences a series: the paired test alerts
	// from the second night. Default DefaultWarmup; fewer trusts a shorter
	// history's noise between nights, more keeps the paired test longer.
	Warmup int
	// MinSigma is the smallest standard deviation of a night's value, as
	// a fraction of the level, so that a metric without noise does not
	// alert on rounding. Default DefaultMinSigma.
	MinSigma float64
	// MaxP is the e-divisive significance that places a change with at
	// least five nights on either side (Otava's max_pvalue). Default
	// DefaultMaxP.
	MaxP float64
	// MergeGap is the distance in nights (with values) within which
	// change points are taken for one change. Default DefaultMergeGap.
	MergeGap int
	// MissingNights is the number of consecutive latest nights without
	// values that makes CheckMissing report the metric. Default
	// DefaultMissingNights.
	MissingNights int
	// ConfirmNights is the number of points after a new alert's first
	// that Watch waits for before it acts on the alert (see
	// Watch.Decide). Zero acts on the night the alert fires.
	ConfirmNights int
	// NoteImprovements makes Watch note an improvement with the range that
	// holds it rather than act on it (bisect it).
	NoteImprovements bool
	// Best makes a paired point's Estimate its best run against the
	// reference's best (Pair), for a host whose speed flips between states
	// from one run to the next; false takes the median of the scaled runs.
	Best bool
}

// The defaults of Config.
const (
	DefaultMinEffect     = 0.02
	DefaultARL           = 20000.0
	DefaultJump          = 3.5
	DefaultWindow        = 30
	DefaultMinLevel      = 5
	DefaultWarmup        = 20
	DefaultMinSigma      = 0.002
	DefaultMaxP          = 0.001
	DefaultMergeGap      = 5
	DefaultMissingNights = 3
)

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.MinEffect, DefaultMinEffect)
	def(&c.Allowance, c.MinEffect/2)
	def(&c.ARL, DefaultARL)
	def(&c.Jump, DefaultJump)
	def(&c.MinSigma, DefaultMinSigma)
	def(&c.MaxP, DefaultMaxP)
	defInt(&c.Window, DefaultWindow)
	defInt(&c.MinLevel, DefaultMinLevel)
	defInt(&c.Warmup, DefaultWarmup)
	defInt(&c.MergeGap, DefaultMergeGap)
	defInt(&c.MissingNights, DefaultMissingNights)
	return c
}

// Validate reports the first field of c (with its defaults) that is out
// of range, naming it.
func (c Config) Validate() error {
	c = c.WithDefaults()
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("detect: Config.%s is %v; want %s", field, v, want)
	}
	switch {
	case c.Better != record.Higher && c.Better != record.Lower:
		return bad("Better", fmt.Sprintf("%q", c.Better), fmt.Sprintf("%q or %q", record.Higher, record.Lower))
	case !(c.MinEffect > 0 && c.MinEffect < 1):
		return bad("MinEffect", c.MinEffect, "a fraction in (0, 1), e.g. 0.02")
	case !(c.Allowance > 0 && c.Allowance < 1):
		return bad("Allowance", c.Allowance, "a fraction in (0, 1)")
	case !(c.Threshold >= 0 && c.Threshold < 1e6):
		return bad("Threshold", c.Threshold, "a positive number of standard deviations, or 0 to choose it from ARL")
	case !(c.ARL >= 10 && c.ARL < 1e12):
		return bad("ARL", c.ARL, "at least 10 nights")
	case !(c.Jump > 0 && c.Jump < 1e6):
		return bad("Jump", c.Jump, "a positive number of standard deviations")
	case !(c.MinSigma > 0 && c.MinSigma < 1):
		return bad("MinSigma", c.MinSigma, "a fraction in (0, 1)")
	case !(c.MaxP > 0 && c.MaxP < 0.5):
		return bad("MaxP", c.MaxP, "a p-value in (0, 0.5)")
	case c.MinLevel < 3:
		return bad("MinLevel", c.MinLevel, "at least 3 nights")
	case c.Warmup < c.MinLevel:
		return bad("Warmup", c.Warmup, fmt.Sprintf("at least MinLevel (%d) nights", c.MinLevel))
	case c.Window < c.MinLevel:
		return bad("Window", c.Window, fmt.Sprintf("at least MinLevel (%d) nights", c.MinLevel))
	case c.MergeGap < 1:
		return bad("MergeGap", c.MergeGap, "at least 1 night")
	case c.MissingNights < 1:
		return bad("MissingNights", c.MissingNights, "at least 1 night")
	case c.ConfirmNights < 0:
		return bad("ConfirmNights", c.ConfirmNights, "0 nights or more")
	}
	return nil
}
