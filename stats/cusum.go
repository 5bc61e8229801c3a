package stats

import (
	"fmt"
	"math"
)

// Shift is the direction of change a detector watches for.
type Shift int

const (
	// Drop watches for falling values (a throughput regression).
	Drop Shift = -1
	// Rise watches for rising values (a latency regression).
	Rise Shift = +1
)

// CUSUMConfig sets up a one-sided CUSUM detector. Zero fields take the
// defaults given; Watch is required.
type CUSUMConfig struct {
	Watch Shift
	// Allowance is the shift, as a fraction of the baseline, that the
	// detector ignores: half the smallest change of interest (κ).
	// Default 0.015, for changes of 3% or more.
	Allowance float64
	// Threshold is the alarm level h, in baseline standard deviations.
	// Default 8.
	Threshold float64
	// Window is the number of trailing values the baseline is estimated
	// from. Default 20; at least 5.
	Window int
	// MinSigma is the smallest baseline standard deviation, as a
	// fraction of the baseline, so that a window of identical values
	// does not make every wobble an alarm. Default 0.002.
	MinSigma float64
}

func (c CUSUMConfig) withDefaults() (CUSUMConfig, error) {
	if c.Watch != Drop && c.Watch != Rise {
		return c, fmt.Errorf("cusum: Watch must be Drop or Rise, got %d", c.Watch)
	}
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Allowance, 0.015)
	def(&c.Threshold, 8)
	def(&c.MinSigma, 0.002)
	if c.Window == 0 {
		c.Window = 20
	}
	if c.Window < 5 || c.Allowance < 0 || c.Threshold <= 0 || c.MinSigma < 0 {
		return c, fmt.Errorf("cusum: bad configuration %+v", c)
	}
	return c, nil
}

// CUSUM runs a one-sided CUSUM (Page 1954) over series, one value per
// night (the median of that night's repeats), and returns the indexes at
// which it alarms.
//
// It works on log values, so the allowance and the shift are ratios. The
// baseline μ₀ and σ₀ are the median and the scaled MAD (1.4826·MAD) of
// the Window values before the current excursion began; they are frozen
// while the statistic is above zero so that a slow drift cannot teach the
// baseline to accept itself. Watching for a drop,
//
//	S_t = max(0, S_{t−1} + (μ₀ − x_t − κ)/σ₀),  alarm when S_t > h.
//
// After an alarm the detector restarts on the new level: S is reset and
// the next baseline comes from the Window values starting where the
// excursion that alarmed began. No alarm is possible until Window values
// of a level are seen. Non-positive or non-finite values are an error.
func CUSUM(series []float64, cfg CUSUMConfig) ([]int, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	logs, err := logValues(series)
	if err != nil {
		return nil, fmt.Errorf("cusum: %w", err)
	}
	var alarms []int
	levelStart := 0 // first index of the current level
	excursion := -1 // first index of the current excursion (S > 0), or -1
	var s, mu, sigma float64
	for t, x := range logs {
		if t-levelStart < cfg.Window {
			continue
		}
		if excursion < 0 {
			mu, sigma = robustLocation(logs[t-cfg.Window : t])
			sigma = max(sigma, cfg.MinSigma)
		}
		step := (x - mu) * float64(cfg.Watch) // positive when moving the watched way
		s = max(0, s+(step-cfg.Allowance)/sigma)
		switch {
		case s == 0:
			excursion = -1
		case excursion < 0:
			excursion = t
		}
		if s > cfg.Threshold {
			alarms = append(alarms, t)
			levelStart, excursion, s = excursion, -1, 0
		}
	}
	return alarms, nil
}

// robustLocation returns the median and the scaled MAD of values.
func robustLocation(values []float64) (med, sigma float64) {
	med = Median(values)
	devs := make([]float64, len(values))
	for i, v := range values {
		devs[i] = v - med
	}
	return med, MAD(devs)
}

// logValues returns the natural logs of series, which must be positive
// and finite.
func logValues(series []float64) ([]float64, error) {
	logs := make([]float64, len(series))
	for i, x := range series {
		if !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("value %d is %v; values must be positive and finite", i, x)
		}
		logs[i] = math.Log(x)
	}
	return logs, nil
}
