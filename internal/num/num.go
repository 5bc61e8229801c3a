// Package num prints measured values as people write them: four
// significant digits, thousands separated by commas, never an exponent
// ("154,400", "812.5", "0.05597"), and confidences as percentages that
// never overstate ("99.8%", "> 99.9%"). Every human view of perfbot (the
// command line, issues, the dashboard) prints values through it, so one
// value reads the same everywhere.
package num

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Digits is the number of significant digits Format keeps.
const Digits = 4

// Format prints v with Digits significant digits, without an exponent,
// with commas between thousands and without trailing zeros after the
// decimal point. NaN and infinities print as "n/a".
func Format(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v == 0:
		return "0"
	}
	exp := int(math.Floor(math.Log10(math.Abs(v))))
	// Rounding may carry into the next power of ten (9999.6 → 10,000).
	if r := roundSig(v, exp); math.Abs(r) >= math.Pow(10, float64(exp+1)) {
		exp++
	}
	v = roundSig(v, exp)
	decimals := max(0, Digits-1-exp)
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if decimals > 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return group(s)
}

// roundSig rounds v, whose magnitude is about 10^exp, to Digits
// significant digits.
func roundSig(v float64, exp int) float64 {
	scale := math.Pow(10, float64(Digits-1-exp))
	return math.Round(v*scale) / scale
}

// group puts commas between the thousands of s's integer part.
func group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if len(whole) <= 3 {
		return sign + s
	}
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return sign + b.String()
}

// Confidence prints a probability (a culprit's confidence, a cut-off) as a
// percentage with one decimal, rounded down so that it never reads higher
// than it is: 0.9987 is "99.8%". One above 0.999 but short of 1 is
// "> 99.9%", never "100.0%", which only exactly 1 is. NaN and
// infinities print as "n/a".
func Confidence(p float64) string {
	switch {
	case math.IsNaN(p) || math.IsInf(p, 0):
		return "n/a"
	case p >= 1:
		return "100%"
	case p > 0.999:
		return "> 99.9%"
	}
	// The nudge keeps a product such as 0.995×1000 = 994.999… from
	// rounding down a whole step.
	return fmt.Sprintf("%.1f%%", math.Floor(p*1000+1e-6)/10)
}

// Count is n and the noun, plural unless n is one ("1 hunk", "3 hunks").
// The noun's plural adds an s.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
