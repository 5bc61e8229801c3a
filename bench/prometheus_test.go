package bench

import (
	"bytes"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"
)

// TestPrometheusWhatTheHandParserAccepted lists what perfbot's own
// Prometheus text parser, before expfmt replaced it, read as samples
// although the exposition format does not allow it. Each is now a syntax
// error quoting the line: a /metrics page written so is broken (or is
// not a /metrics page), and its numbers should not be trusted. On every
// real output at hand (the samples of the other formats, all refused by
// both, and a client_golang registry's page with a histogram, a summary
// and escaped label values, read alike by both) the two parsers agreed.
func TestPrometheusWhatTheHandParserAccepted(t *testing.T) {
	runErrorCases(t, []errorCase{
		{name: "a timestamp that is not a number", format: "prometheus", input: "up 1 abc\n", is: ErrSyntax,
			mention: []string{"<input>:1:", "timestamp", `"abc"`}},
		{name: "a metric name that starts with a digit", format: "prometheus", input: "1abc 5\n", is: ErrSyntax,
			mention: []string{"<input>:1:", "invalid metric name"}},
		{name: "# TYPE after the metric's samples", format: "prometheus", input: "x_total 1\n# TYPE x_total counter\n", is: ErrSyntax,
			mention: []string{"<input>:2:", "TYPE reported after samples"}},
		{name: "a label given twice", format: "prometheus", input: `up{a="1",a="2"} 1` + "\n", is: ErrSyntax,
			mention: []string{"<input>:1:", "duplicate label names"}},
		{name: "an unquoted label value", format: "prometheus", input: "up{a=b} 1\n", is: ErrSyntax,
			mention: []string{"<input>:1:", `expected '"'`}},
		{name: "an escape the format does not have", format: "prometheus", input: `up{a="x\q"} 1` + "\n", is: ErrSyntax,
			mention: []string{"<input>:1:", "invalid escape sequence"}},
		{name: "a Go number literal", format: "prometheus", input: "up 1_000\n", is: ErrSyntax,
			mention: []string{"<input>:1:", `"1_000"`}},
	})
}

// TestPrometheusClientGolangPage reads a page as client_golang writes it:
// a declared histogram and summary come back as the series the page
// shows, le and quantile last, and escaped label values as written.
func TestPrometheusClientGolangPage(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "request_seconds", Help: "h", Buckets: []float64{0.1, 1}}, []string{"code"})
	h.WithLabelValues("200").Observe(0.3)
	s := prometheus.NewSummary(prometheus.SummaryOpts{Name: "verify_seconds", Help: "s", Objectives: map[float64]float64{0.5: 0.05}})
	s.Observe(0.02)
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokens_total", Help: "c"}, []string{"model"})
	c.WithLabelValues(`llama "3" \ 70b`).Add(3)
	empty := prometheus.NewSummary(prometheus.SummaryOpts{Name: "idle_seconds", Help: "no observation yet", Objectives: map[float64]float64{0.9: 0.01}})
	reg.MustRegister(h, s, c, empty)
	families, err := reg.Gather()
	require.NoError(t, err)
	var page bytes.Buffer
	for _, f := range families {
		_, err := expfmt.MetricFamilyToText(&page, f)
		require.NoError(t, err)
	}

	samples := parseText(t, "prometheus", page.String(), nil)
	requireSelected(t, samples, []selected{
		{`request_seconds_bucket{code="200",le="0.1"}`, "count", 0},
		{`request_seconds_bucket{code="200",le="1"}`, "count", 1},
		{`request_seconds_bucket{code="200",le="+Inf"}`, "count", 1},
		{`request_seconds_sum{code="200"}`, "s", 0.3},
		{`verify_seconds{quantile="0.5"}`, "s", 0.02},
		{"verify_seconds_count", "count", 1},
		{`tokens_total{model="llama \"3\" \\ 70b"}`, "count", 3},
		{"idle_seconds_count", "count", 0},
	})
	for _, s := range samples {
		require.NotEqual(t, `idle_seconds{quantile="0.9"}`, s.Name, "a quantile without observations is NaN, and skipped")
	}
}
