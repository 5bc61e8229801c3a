package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// parsePrometheus reads the Prometheus text exposition format
// (what /metrics serves): one sample per series, named as written,
// "metric" or `metric{label="value",...}` with the spaces between labels
// removed. Comments (# HELP, # TYPE) and timestamps are ignored, and so
// is a summary quantile that is NaN: the client libraries write NaN until
// the summary has an observation. Any other NaN or infinite value fails the
// benchmark (ErrBenchmarkFailed), whichever series the metric selects: the
// parser cannot tell which series matter, and a NaN gauge means the
// server computed it from nothing.
//
// The unit follows the Prometheus naming conventions: "_seconds" → "s",
// "_bytes" → "B", counters and histogram parts (_total, _count, _bucket)
// → "count", anything else "value". Select matches a metric name without
// labels when exactly one series has that name.
func parsePrometheus(r io.Reader, file string, _ Options) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	var samples []record.Sample
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		name, rest, err := splitSeries(t)
		if err != nil {
			return nil, &OutputError{File: file, Line: i + 1, Text: t, Msg: err.Error(), Err: ErrSyntax}
		}
		f := strings.Fields(rest)
		if len(f) < 1 || len(f) > 2 {
			return nil, &OutputError{File: file, Line: i + 1, Text: t, Msg: "expected a value and an optional timestamp after the series name", Err: ErrSyntax}
		}
		v, err := parseNumber(f[0])
		if err != nil {
			return nil, &OutputError{File: file, Line: i + 1, Text: t, Msg: fmt.Sprintf("value %q is not a number", f[0]), Err: ErrSyntax}
		}
		if !isFinite(v) && isQuantile(name) {
			continue
		}
		if err := notFinite(file, i+1, t, name, v); err != nil {
			return nil, err
		}
		samples = append(samples, record.Sample{Name: name, Unit: prometheusUnit(name), Value: v})
	}
	if len(samples) == 0 {
		return nil, noResults(file, lines, "Prometheus samples")
	}
	return samples, nil
}

// isQuantile reports whether the series is a quantile of a summary.
func isQuantile(series string) bool {
	return strings.Contains(series, "{quantile=") || strings.Contains(series, ",quantile=")
}

// splitSeries splits a line into the series name (metric and labels) and
// the rest. Label values are quoted and may hold spaces, '}' and escaped
// quotes.
func splitSeries(line string) (name, rest string, err error) {
	brace := strings.IndexByte(line, '{')
	space := strings.IndexAny(line, " \t")
	if brace < 0 || (space >= 0 && space < brace) {
		if space < 0 {
			return "", "", fmt.Errorf("no value after metric name")
		}
		return line[:space], line[space:], nil
	}
	var b strings.Builder
	b.WriteString(line[:brace+1])
	inQuote, escaped := false, false
	for i := brace + 1; i < len(line); i++ {
		c := line[i]
		switch {
		case inQuote:
			b.WriteByte(c)
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inQuote = false
			}
		case c == '"':
			inQuote = true
			b.WriteByte(c)
		case c == '}':
			b.WriteByte(c)
			return b.String(), line[i+1:], nil
		case c == ' ' || c == '\t':
			// drop spaces between labels
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("unterminated label set")
}

// prometheusUnit derives a unit from the metric name's suffix.
func prometheusUnit(series string) string {
	metric, _, _ := strings.Cut(series, "{")
	for _, part := range []string{"_bucket", "_count", "_total"} {
		if strings.HasSuffix(metric, part) {
			return "count"
		}
	}
	metric = strings.TrimSuffix(metric, "_sum")
	switch {
	case strings.HasSuffix(metric, "_seconds"):
		return "s"
	case strings.HasSuffix(metric, "_bytes"):
		return "B"
	}
	return "value"
}
