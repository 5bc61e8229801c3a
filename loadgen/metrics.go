package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Spec is the speculative-decoding acceptance over a load, from the
// server's metrics.
type Spec struct {
	// Source says where the numbers come from and what they are:
	// "vllm counters (delta over the load)" or "sglang gauge (the
	// server's running average, not a delta over the load)".
	Source string `json:"source"`
	// AcceptanceLength is the mean number of tokens a verify step emits:
	// 1 + accepted / drafts from counters, the gauge's value otherwise.
	AcceptanceLength float64 `json:"acceptance_length"`
	// Drafts, DraftTokens and AcceptedTokens are the counter deltas
	// (zero for a gauge).
	Drafts         float64 `json:"drafts,omitempty"`
	DraftTokens    float64 `json:"draft_tokens,omitempty"`
	AcceptedTokens float64 `json:"accepted_tokens,omitempty"`
}

// Metric names the load reads from the server.
const (
	vllmDrafts      = "vllm:spec_decode_num_drafts"
	vllmDraftTokens = "vllm:spec_decode_num_draft_tokens"
	vllmAccepted    = "vllm:spec_decode_num_accepted_tokens"
	sglangAccept    = "sglang:spec_accept_length"
)

// scrape is one read of /metrics.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics reads and parses url's Prometheus text.
func scrapeMetrics(ctx context.Context, client *http.Client, url string) (scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: HTTP %d", url, resp.StatusCode)
	}
	return parseMetrics(io.LimitReader(resp.Body, 64<<20))
}

// parseMetrics parses Prometheus text exposition.
func parseMetrics(r io.Reader) (scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	return fams, nil
}

// sum returns the sum over every label set of the counter, gauge or
// untyped metric name (the family written with or without "_total"), the
// number of series, and whether the metric is there.
func (s scrape) sum(name string) (v float64, series int, ok bool) {
	for _, n := range []string{name + "_total", name} {
		fam, found := s[n]
		if !found {
			continue
		}
		for _, m := range fam.GetMetric() {
			switch {
			case m.Counter != nil:
				v += m.GetCounter().GetValue()
			case m.Gauge != nil:
				v += m.GetGauge().GetValue()
			case m.Untyped != nil:
				v += m.GetUntyped().GetValue()
			default:
				continue
			}
			series++
			ok = true
		}
		if ok {
			return v, series, true
		}
	}
	return 0, 0, false
}

// specDecode returns the acceptance over the load from two scrapes, nil
// when the server exposes none or no draft was made during the load.
func specDecode(before, after scrape) *Spec {
	d0, _, ok0 := before.sum(vllmDrafts)
	d1, _, ok1 := after.sum(vllmDrafts)
	a0, _, _ := before.sum(vllmAccepted)
	a1, _, _ := after.sum(vllmAccepted)
	if ok0 && ok1 && d1 > d0 {
		t0, _, _ := before.sum(vllmDraftTokens)
		t1, _, _ := after.sum(vllmDraftTokens)
		return &Spec{
			Source:           "vllm counters (delta over the load)",
			AcceptanceLength: 1 + (a1-a0)/(d1-d0),
			Drafts:           d1 - d0,
			DraftTokens:      t1 - t0,
			AcceptedTokens:   a1 - a0,
		}
	}
	if v, n, ok := after.sum(sglangAccept); ok && n > 0 {
		return &Spec{
			Source:           fmt.Sprintf("sglang gauge (the server's running average over %d ranks, not a delta over the load)", n),
			AcceptanceLength: v / float64(n),
		}
	}
	return nil
}

// metrics adds the Spec's numbers to a report's metrics.
func (s *Spec) metrics(m map[string]float64) {
	if strings.HasPrefix(s.Source, "sglang") {
		m["spec_accept_length"] = s.AcceptanceLength
		return
	}
	m["spec_decode_acceptance_length"] = s.AcceptanceLength
	m["spec_decode_num_drafts"] = s.Drafts
	m["spec_decode_accepted_tokens"] = s.AcceptedTokens
	if s.DraftTokens > 0 {
		m["spec_decode_draft_tokens"] = s.DraftTokens
		m["spec_decode_acceptance_rate"] = 100 * s.AcceptedTokens / s.DraftTokens
	}
}
