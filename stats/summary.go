package stats

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/perfbot/perfbot/record"
)

// Summary describes one sample: its median and a distribution-free
// confidence interval for the median.
type Summary struct {
	N      int
	Median float64
	// Interval bounds the median with probability Confidence.
	record.Interval
	// Confidence is the coverage of [Lo, Hi]: that of the order
	// statistics chosen, at least the confidence asked for (0.969 for 6
	// values at 0.95). When too few values allow that level, [Lo, Hi] is
	// [min, max] and Confidence is the lower coverage that range really
	// has (1 − 2·0.5ⁿ).
	Confidence float64
	Warnings   []string
}

// Summarize returns the median of values and an order-statistic
// confidence interval for it at the given confidence (benchmath's
// AssumeNothing summary, as benchstat prints it). values is not modified.
//
// benchmath needs at least 6 values for a 95% interval and gives ±∞ below
// that; Summarize then reports the sample minimum and maximum with their
// true, lower coverage and a warning, so that callers always have finite
// bounds to print and never mistake them for a 95% interval. An empty
// input gives NaN fields and a warning.
func Summarize(values []float64, confidence float64) Summary {
	var warnings []string
	if !(confidence > 0 && confidence < 1) {
		warnings = append(warnings, fmt.Sprintf("confidence %v is not in (0, 1); using 0.95", confidence))
		confidence = 0.95
	}
	if len(values) == 0 {
		return Summary{Median: math.NaN(), Interval: record.Interval{Lo: math.NaN(), Hi: math.NaN()}, Confidence: confidence,
			Warnings: append(warnings, "no values")}
	}
	sample := newSample(values)
	sum := benchmath.AssumeNothing.Summary(sample, confidence)
	s := Summary{N: len(values), Median: sum.Center, Interval: record.Interval{Lo: sum.Lo, Hi: sum.Hi}, Confidence: sum.Confidence}
	s.Warnings = append(warnings, errorStrings(sample.Warnings)...)
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
		// sample.Values is sorted by NewSample.
		s.Lo, s.Hi = sample.Values[0], sample.Values[len(sample.Values)-1]
		s.Confidence = 1 - 2*math.Pow(0.5, float64(len(values)))
		s.Warnings = append(s.Warnings, errorStrings(sum.Warnings)...)
		s.Warnings = append(s.Warnings, fmt.Sprintf("range [min, max] given instead; it covers the median with probability %.3f", s.Confidence))
	} else {
		s.Warnings = append(s.Warnings, errorStrings(sum.Warnings)...)
	}
	return s
}

// Compare tests whether a and b come from the same distribution with the
// two-sided Mann–Whitney U test (benchmath's AssumeNothing comparison,
// what benchstat reports as p). Warnings say when the samples are too
// small for p to fall below 0.05 whatever the data. a and b are not
// modified.
func Compare(a, b []float64) (p float64, warnings []string) {
	sa, sb := newSample(a), newSample(b)
	cmp := benchmath.AssumeNothing.Compare(sa, sb)
	warnings = append(errorStrings(sa.Warnings), errorStrings(sb.Warnings)...)
	return cmp.P, append(warnings, errorStrings(cmp.Warnings)...)
}

// newSample wraps a copy of values: benchmath.NewSample sorts in place.
func newSample(values []float64) *benchmath.Sample {
	return benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
}

func errorStrings(errs []error) []string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return s
}
