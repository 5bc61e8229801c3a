package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// Measurement is what `perfbot measure` reports for one revision.
type Measurement struct {
	Rev     string                 `json:"rev"`
	Commit  string                 `json:"commit"`
	Subject string                 `json:"subject"`
	Status  record.Status          `json:"status"`
	Error   string                 `json:"error,omitempty"`
	Metrics []record.MetricSummary `json:"metrics"`
}

// MeasureRequest is a measure job's request: what `perfbot measure` asks
// a running service for. Asked tells two requests of the same revisions
// apart, since a revision such as HEAD moves.
type MeasureRequest struct {
	Revs    []string
	Repeats int
	Asked   time.Time `json:",omitzero"`
}

// MeasureReport is a measure job's report.
type MeasureReport struct {
	Measurements []Measurement
}

// MeasureJob runs Measure as a job of the queue.
func (b *Bot) MeasureJob(ctx context.Context, req MeasureRequest) (*MeasureReport, error) {
	if len(req.Revs) == 0 || req.Repeats < 1 {
		return nil, &record.InputError{Err: fmt.Errorf("measure: want at least one revision and repeats ≥ 1, got %d revisions and repeats %d", len(req.Revs), req.Repeats)}
	}
	ms, err := b.Measure(ctx, req.Revs, req.Repeats)
	if err != nil {
		return nil, err
	}
	return &MeasureReport{Measurements: ms}, nil
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
		if err := b.measureRuns(ctx, t, c.Short(), repeats); err != nil {
			if !errors.Is(err, record.ErrBroken) {
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
	if err := b.checkSelection(out); err != nil {
		return nil, err
	}
	return out, nil
}

// measureRuns gives t repeats ok runs, with a progress line after each
// run (runLine), so that a slow benchmark is never silent. The runs are
// asked for at once: a host that pays for each request (a Slurm job)
// pays once.
func (b *Bot) measureRuns(ctx context.Context, t record.Target, short string, repeats int) error {
	entry, err := b.Store.Cached(b.Oracle.SpecHash(), t.Key())
	if err != nil {
		return fmt.Errorf("read cache of %s: %w", short, err)
	}
	have := len(entry.OK)
	if have >= repeats {
		b.progressf("  measure  %s: %d runs recorded already, nothing to run", short, have)
		return nil
	}
	primary := b.Config.Primary().Name
	return b.Oracle.EnsureEach(ctx, t, repeats, func(r record.Run) {
		if r.Status != record.StatusOK {
			b.progressf("  measure  %s run %d of %d: %s", short, have+1, repeats, r.Status)
			return
		}
		have++
		v, ok := r.Values[primary]
		b.progressf("%s", runLine("measure", short, have, repeats, primary, v, ok))
	})
}

// checkSelection turns a metric that selects nothing at every revision
// measured into the configuration mistake it is (a unit or a benchmark name
// mistyped), naming what the output holds, instead of reporting every
// revision as bench_failed. It reads each revision's last failed run
// again: its benchmark printed results, parsed, that the metric does not
// select from.
func (b *Bot) checkSelection(ms []Measurement) error {
	var mismatch error
	for _, m := range ms {
		if m.Status != record.StatusBenchFailed {
			return nil
		}
		err := b.selectMismatch(record.Target{Commit: m.Commit})
		if err == nil {
			return nil
		}
		mismatch = err
	}
	if mismatch == nil {
		return nil
	}
	return &record.InputError{Err: fmt.Errorf("%w at every revision measured: the benchmark ran and printed results, which the metric does not select; fix the metric's select or unit in %s", mismatch, b.configName())}
}

// selectMismatch returns why a metric selected nothing from the output of
// t's last failed run, or nil when that run failed otherwise.
func (b *Bot) selectMismatch(t record.Target) error {
	entry, err := b.Store.Cached(b.Oracle.SpecHash(), t.Key())
	if err != nil || len(entry.Failed) == 0 {
		return nil
	}
	run, ok, err := b.Store.Run(entry.Failed[len(entry.Failed)-1].ID)
	if err != nil || !ok || run.Status != record.StatusBenchFailed {
		return nil
	}
	for _, s := range b.Config.Benchmarks {
		var out *record.Log
		for i := range run.Logs {
			if run.Logs[i].Step == s.Name {
				out = &run.Logs[i]
			}
		}
		if out == nil || out.ExitCode != 0 {
			continue
		}
		samples, err := bench.Parse(s.Format, strings.NewReader(out.Output), s.Options)
		if err != nil {
			return nil
		}
		for _, metric := range b.Config.Metrics {
			if metric.Benchmark != s.Name {
				continue
			}
			if _, err := bench.Select(samples, metric.Select, metric.Unit); err != nil {
				return fmt.Errorf("metric %s (select %q, unit %q) matches nothing in the output of benchmark %s (%v)", metric.Name, metric.Select, metric.Unit, s.Name, err)
			}
		}
	}
	return nil
}

// configName names the configuration file for messages.
func (b *Bot) configName() string {
	if b.Config.Path != "" {
		return b.Config.Path
	}
	return "the configuration"
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
func (b *Bot) summaries(t record.Target) ([]record.MetricSummary, error) {
	var out []record.MetricSummary
	for _, m := range b.Config.Metrics {
		vals, err := b.Store.Values(b.Oracle.SpecHash(), t.Key(), m.Name)
		if err != nil {
			return nil, err
		}
		ms := record.MetricSummary{Metric: m.Name, Unit: m.Unit}
		if len(vals) > 0 {
			s := stats.Summarize(vals, 0.95)
			ms.N, ms.Median, ms.Lo, ms.Hi, ms.Coverage = s.N, s.Median, s.Lo, s.Hi, s.Confidence
			ms.Range = s.Confidence < 0.95
		}
		out = append(out, ms)
	}
	return out, nil
}
