package bench

import (
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/perfbot/perfbot/record"
)

// parsePrometheus reads the Prometheus text exposition format (what
// /metrics serves) through prometheus/common's expfmt parser, the one
// Prometheus itself and the client libraries' tests use: one sample per
// series, named `metric` or `metric{label="value",...}`, labels in the
// order written and values escaped as in the format (a name that is not a
// legacy one is quoted, `{"vllm.cache"}`, as the format writes it). A histogram or
// summary declared by # TYPE gives its series as written, with the le or
// quantile label last: x_bucket{...,le="0.1"}, x_sum, x_count,
// x{...,quantile="0.5"}. Samples come in metric name order, each metric's
// series in the order written. Timestamps are checked and ignored.
//
// A summary quantile that is NaN is skipped: the client libraries write NaN
// until the summary has an observation. Any other NaN or infinite value
// fails the benchmark (ErrBenchmarkFailed), whichever series the metric
// selects: the parser cannot tell which series matter, and a NaN gauge
// means the server computed it from nothing.
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
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		return nil, prometheusError(file, lines, err)
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	slices.Sort(names)
	var samples []record.Sample
	for _, name := range names {
		for _, s := range familySeries(families[name]) {
			if !isFinite(s.value) {
				if s.quantile {
					continue
				}
				n, text := nonFiniteLine(lines, s.metric)
				return nil, notFinite(file, n, text, s.name, s.value)
			}
			samples = append(samples, record.Sample{Name: s.name, Unit: prometheusUnit(s.metric), Value: s.value})
		}
	}
	if len(samples) == 0 {
		return nil, noResults(file, lines, "Prometheus samples")
	}
	return samples, nil
}

// prometheusError turns expfmt's error into an OutputError quoting the
// line. A value too large for a float64 (1e400) is the infinity it rounds
// to, as in every format (parseNumber), not a syntax error.
func prometheusError(file string, lines []string, err error) error {
	var pe expfmt.ParseError
	if !errors.As(err, &pe) {
		return &OutputError{File: file, Msg: err.Error(), Err: ErrSyntax}
	}
	oe := &OutputError{File: file, Line: pe.Line, Msg: pe.Msg, Err: ErrSyntax}
	if pe.Line < 1 || pe.Line > len(lines) {
		return oe
	}
	oe.Text = strings.TrimSpace(lines[pe.Line-1])
	if token, ok := strings.CutPrefix(pe.Msg, "expected float as value, got "); ok {
		if token, err := strconv.Unquote(token); err == nil {
			if v, err := parseNumber(token); err == nil && math.IsInf(v, 0) {
				return notFinite(file, pe.Line, oe.Text, strings.Fields(oe.Text)[0], v)
			}
		}
	}
	return oe
}

// series is one value of a metric family, named as the text format
// writes it.
type series struct {
	metric   string // the name before the labels, as on its line
	name     string
	value    float64
	quantile bool // a summary quantile, also an untyped one
}

// familySeries returns the series of a parsed family in the order they
// were written, a histogram's and a summary's parts expanded.
func familySeries(f *dto.MetricFamily) []series {
	var out []series
	add := func(metric string, labels []*dto.LabelPair, extra *dto.LabelPair, v float64, quantile bool) {
		out = append(out, series{metric: metric, name: seriesName(metric, labels, extra), value: v, quantile: quantile})
	}
	name := f.GetName()
	for _, m := range f.GetMetric() {
		labels := m.GetLabel()
		switch {
		case m.Counter != nil:
			add(name, labels, nil, m.GetCounter().GetValue(), false)
		case m.Gauge != nil:
			add(name, labels, nil, m.GetGauge().GetValue(), false)
		case m.Untyped != nil:
			quantile := slices.ContainsFunc(labels, func(l *dto.LabelPair) bool { return l.GetName() == model.QuantileLabel })
			add(name, labels, nil, m.GetUntyped().GetValue(), quantile)
		case m.Summary != nil:
			s := m.GetSummary()
			for _, q := range s.GetQuantile() {
				add(name, labels, label(model.QuantileLabel, q.GetQuantile()), q.GetValue(), true)
			}
			add(name+"_sum", labels, nil, s.GetSampleSum(), false)
			add(name+"_count", labels, nil, float64(s.GetSampleCount()), false)
		case m.Histogram != nil:
			h := m.GetHistogram()
			for _, b := range h.GetBucket() {
				add(name+"_bucket", labels, label(model.BucketLabel, b.GetUpperBound()), float64(b.GetCumulativeCount()), false)
			}
			add(name+"_sum", labels, nil, h.GetSampleSum(), false)
			add(name+"_count", labels, nil, float64(h.GetSampleCount()), false)
		}
	}
	return out
}

// label is the le or quantile label of a bucket or quantile, its value
// written as the client libraries write it.
func label(name string, v float64) *dto.LabelPair {
	text := strconv.FormatFloat(v, 'g', -1, 64)
	if math.IsInf(v, 1) {
		text = "+Inf"
	}
	return &dto.LabelPair{Name: &name, Value: &text}
}

// seriesName writes metric{labels} as the text format does (expfmt's
// writeNameAndLabelPairs), extra last: a name that is not a legacy one
// ("0", "vllm.cache") is quoted, and a metric name so quoted goes inside
// the braces, {"0"}. Read back, the name gives the same series.
func seriesName(metric string, labels []*dto.LabelPair, extra *dto.LabelPair) string {
	if extra != nil {
		labels = append(slices.Clip(labels), extra)
	}
	var b strings.Builder
	sep := byte('{')
	inside := !model.LegacyValidation.IsValidMetricName(metric)
	if inside {
		b.WriteByte(sep)
		sep = ','
	}
	writeSeriesName(&b, metric)
	if len(labels) == 0 {
		if inside {
			b.WriteByte('}')
		}
		return b.String()
	}
	for _, l := range labels {
		b.WriteByte(sep)
		sep = ','
		writeSeriesName(&b, l.GetName())
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(l.GetValue()))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// writeSeriesName writes a metric or label name, quoted unless it is a
// legacy name.
func writeSeriesName(b *strings.Builder, name string) {
	if model.LegacyValidation.IsValidMetricName(name) {
		b.WriteString(name)
		return
	}
	b.WriteByte('"')
	b.WriteString(labelEscaper.Replace(name))
	b.WriteByte('"')
}

// labelEscaper escapes a label value as the text format does.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// nonFiniteLine returns the first line that gives metric a value that is
// not a finite number, for the error that quotes it; 0 and "" when none
// can be told.
func nonFiniteLine(lines []string, metric string) (int, string) {
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		name, rest := t, ""
		if j := strings.IndexAny(t, "{ \t"); j >= 0 {
			name, rest = t[:j], t[j:]
		}
		if name != metric {
			continue
		}
		if j := strings.LastIndexByte(rest, '}'); j >= 0 {
			rest = rest[j+1:]
		}
		if f := strings.Fields(rest); len(f) > 0 {
			if v, err := parseNumber(f[0]); err == nil && !isFinite(v) {
				return i + 1, t
			}
		}
	}
	return 0, ""
}

// prometheusUnit derives a unit from the metric name's suffix.
func prometheusUnit(metric string) string {
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
