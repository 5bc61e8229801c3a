package service

import (
	"context"
	"errors"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// Measurement is what `perfbot measure` reports for one revision.
type Measurement struct {
	Rev     string          `json:"rev"`
	Commit  string          `json:"commit"`
	Subject string          `json:"subject"`
	Status  record.Status   `json:"status"`
	Error   string          `json:"error,omitempty"`
	Metrics []MetricSummary `json:"metrics"`
}

// MetricSummary summarizes the samples of one metric of one target.
type MetricSummary struct {
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// Measure makes sure every revision has at least repeats ok runs and
// summarizes what the store holds for it. A revision that does not build
// is reported with its status; that is a result, not an error.
func (b *Bot) Measure(ctx context.Context, revs []string, repeats int) ([]Measurement, error) {
	var out []Measurement
	for _, rev := range revs {
		c, err := b.resolve(ctx, rev)
		if err != nil {
			return nil, err
		}
		m := Measurement{Rev: rev, Commit: c.Hash, Subject: c.Subject, Status: record.StatusOK}
		t := record.Target{Commit: c.Hash}
		b.progressf("measure %s %s (%d runs)", c.Short(), c.Subject, repeats)
		if err := b.Oracle.Ensure(ctx, t, repeats); err != nil {
			if !errors.Is(err, bisect.ErrBroken) {
				return nil, err
			}
			m.Error = err.Error()
			m.Status = b.lastStatus(t)
		}
		sums, err := b.summaries(t)
		if err != nil {
			return nil, err
		}
		m.Metrics = sums
		out = append(out, m)
	}
	return out, nil
}

func (b *Bot) lastStatus(t record.Target) record.Status {
	entry, err := b.Store.Cached(b.Oracle.SpecHash(), t.Key())
	if err != nil || len(entry.Failed) == 0 {
		return record.StatusInfraError
	}
	r, ok, err := b.Store.Run(entry.Failed[len(entry.Failed)-1].ID)
	if err != nil || !ok {
		return record.StatusInfraError
	}
	return r.Status
}

// summaries summarizes every configured metric of t from the store.
func (b *Bot) summaries(t record.Target) ([]MetricSummary, error) {
	var out []MetricSummary
	for _, m := range b.Config.Metrics {
		vals, err := b.Store.Values(b.Oracle.SpecHash(), t.Key(), m.Name)
		if err != nil {
			return nil, err
		}
		ms := MetricSummary{Metric: m.Name, Unit: m.Unit}
		if len(vals) > 0 {
			s := stats.Summarize(vals, 0.95)
			ms.N, ms.Median, ms.Lo, ms.Hi = s.N, s.Median, s.Lo, s.Hi
		}
		out = append(out, ms)
	}
	return out, nil
}
