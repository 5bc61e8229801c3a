package bench

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// allPossible returns an ErrBenchmarkFailed error, quoting the line of
// output, for the first rate or time (see isRateOrTime) that is negative,
// or zero where zero cannot be measured. Such a value is a benchmark that
// measured nothing (a timer never started, no token produced); kept as an
// ok sample, it would read as the largest regression or improvement
// there is.
//
// Zero is kept where the output rounds or where it can be true: the
// bandwidths of nccl-tests (printed to 0.01 GB/s, so a small message reads
// 0.00), a spread (a standard deviation of equal values), and Prometheus
// series, whose sums and quantiles are zero until the first request.
func allPossible(format string, samples []record.Sample, file string, output []byte) error {
	for _, s := range samples {
		if !isRateOrTime(s.Unit) || s.Value > 0 {
			continue
		}
		if s.Value == 0 && zeroCanBe(format, s) {
			continue
		}
		n, text := lineOf(output, s)
		return &OutputError{File: file, Line: n, Text: text,
			Msg: fmt.Sprintf("%s %s is %v: a rate or time must be above zero", s.Name, s.Unit, s.Value), Err: ErrBenchmarkFailed}
	}
	return nil
}

// timeUnits are the units of time a unit may be or start with ("ms",
// "ns/op", "sec/op", "ms/verify").
var timeUnits = map[string]bool{"ns": true, "us": true, "µs": true, "μs": true, "ms": true, "s": true, "sec": true}

// isRateOrTime reports whether unit is a rate ("tok/s", "req/s", "GB/s",
// "algbw-GB/s") or a time ("s", "ms", "sec/op", "ms/verify").
func isRateOrTime(unit string) bool {
	u := strings.ToLower(strings.ReplaceAll(unit, " ", ""))
	if strings.HasSuffix(u, "/s") || strings.HasSuffix(u, "/sec") {
		return true
	}
	head, _, _ := strings.Cut(u, "/")
	return timeUnits[head]
}

func zeroCanBe(format string, s record.Sample) bool {
	switch {
	case format == "prometheus":
		return true
	case format == "nccl-tests" && (s.Unit == ncclAlgBWUnit || s.Unit == ncclBusBWUnit):
		return true
	}
	return strings.Contains(strings.ToLower(s.Name), "std")
}

var numberRE = regexp.MustCompile(`[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?`)

// lineOf returns the first line of output that prints s: one holding the
// value and the sample's name (or its last part) or unit, else one
// holding the value; 0 and "" when none does.
func lineOf(output []byte, s record.Sample) (int, string) {
	base := s.Name
	if i := strings.LastIndexByte(base, '/'); i >= 0 && i+1 < len(base) {
		base = base[i+1:]
	}
	fallback, fallbackText := 0, ""
	for i, l := range bytes.Split(output, []byte("\n")) {
		line := strings.TrimSpace(string(l))
		if !holdsValue(line, s.Value) {
			continue
		}
		if strings.Contains(line, s.Name) || strings.Contains(line, base) || strings.Contains(line, s.Unit) {
			return i + 1, quoted(line)
		}
		if fallback == 0 {
			fallback, fallbackText = i+1, quoted(line)
		}
	}
	return fallback, fallbackText
}

func holdsValue(line string, v float64) bool {
	for _, m := range numberRE.FindAllString(line, -1) {
		if x, err := strconv.ParseFloat(m, 64); err == nil && x == v {
			return true
		}
	}
	return false
}

// quoted is line cut to maxQuote bytes, for an error message.
func quoted(line string) string {
	const maxQuote = 256
	if len(line) <= maxQuote {
		return line
	}
	return strings.ToValidUTF8(line[:maxQuote], "") + "…"
}
