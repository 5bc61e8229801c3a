package main

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// historyRow is one sample as `perfbot history --json` prints it.
type historyRow struct {
	Metric      string              `json:"metric"`
	Unit        string              `json:"unit"`
	Value       float64             `json:"value"`
	Commit      string              `json:"commit"`
	Subject     string              `json:"subject,omitempty"`
	Time        time.Time           `json:"time"`
	Host        string              `json:"host"`
	Status      string              `json:"status"`
	RunID       uint64              `json:"run_id"`
	Fingerprint *record.Fingerprint `json:"fingerprint,omitempty"`
}

func historyCmd(g *globals) *cobra.Command {
	var (
		metric, since, format string
		limit                 int
		asJSON                bool
	)
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Query the stored samples, newest first",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON && format != "" {
				return usagef("--json and --format are exclusive")
			}
			switch format {
			case "", "csv", "benchstat":
			default:
				return usagef("--format %q: want csv or benchstat", format)
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return usageError{err}
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			units := map[string]string{}
			for _, m := range cfg.Metrics {
				units[m.Name] = m.Unit
			}
			if metric != "" {
				if _, ok := units[metric]; !ok {
					return inputErr(fmt.Errorf("--metric %q: not a configured metric", metric))
				}
			}
			db, err := store.Open(cfg.Store)
			if err != nil {
				return err
			}
			defer db.Close()
			rows, err := db.History(store.HistoryQuery{Metric: metric, Since: from, Limit: limit})
			if err != nil {
				return err
			}
			subjects := map[string]string{}
			subject := func(h string) string {
				s, ok := subjects[h]
				if !ok {
					if c, found, err := db.Commit(h); err == nil && found {
						s = c.Subject
					}
					subjects[h] = s
				}
				return s
			}
			switch {
			case asJSON:
				out := make([]historyRow, 0, len(rows))
				fps := map[uint64]*record.Fingerprint{}
				for _, r := range rows {
					fp, ok := fps[r.RunID]
					if !ok {
						if run, found, err := db.Run(r.RunID); err == nil && found {
							fp = &run.Fingerprint
						}
						fps[r.RunID] = fp
					}
					out = append(out, historyRow{Metric: r.Metric, Unit: units[r.Metric], Value: r.Value, Commit: r.Commit, Subject: subject(r.Commit),
						Time: r.Time, Host: r.Host, Status: r.Status, RunID: r.RunID, Fingerprint: fp})
				}
				return writeJSON(g.stdout, out)
			case format == "csv":
				w := csv.NewWriter(g.stdout)
				w.Write([]string{"time", "commit", "metric", "unit", "value", "host", "status", "run_id"})
				for _, r := range rows {
					w.Write([]string{r.Time.UTC().Format(time.RFC3339Nano), r.Commit, r.Metric, units[r.Metric],
						strconv.FormatFloat(r.Value, 'g', -1, 64), r.Host, r.Status, strconv.FormatUint(r.RunID, 10)})
				}
				w.Flush()
				return w.Error()
			case format == "benchstat":
				// Oldest first, so benchstat's columns follow history.
				var bs []bench.BenchstatRow
				for i := len(rows) - 1; i >= 0; i-- {
					r := rows[i]
					bs = append(bs, bench.BenchstatRow{Commit: r.Commit, Name: r.Metric, Unit: units[r.Metric], Value: r.Value})
				}
				return bench.WriteBenchstat(g.stdout, bs)
			default:
				for _, r := range rows {
					fmt.Fprintf(g.stdout, "%s  %s  %-16s %12.4g %-8s %s  %s\n", r.Time.Local().Format("2006-01-02 15:04:05"), short(r.Commit), r.Metric, r.Value, units[r.Metric], r.Host, subject(r.Commit))
				}
				return nil
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&metric, "metric", "", "only this metric")
	f.StringVar(&since, "since", "", "only samples since a time: a duration (72h), a date (2026-11-01) or RFC 3339")
	f.IntVar(&limit, "limit", 0, "at most N samples (0: all)")
	f.BoolVar(&asJSON, "json", false, "print one JSON document")
	f.StringVar(&format, "format", "", "csv or benchstat (Go benchmark format with commit: lines)")
	return cmd
}

// parseSince accepts a duration back from now, a date or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (72h), a date (2006-01-02) or an RFC 3339 time", s)
}
