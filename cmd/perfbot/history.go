package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/service"
)

func historyCmd(g *globals) *cobra.Command {
	var (
		metric, since, format string
		limit                 int
		asJSON, speculative   bool
	)
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Query the stored samples, newest first",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON && format != "" {
				return usagef("--json and --format are exclusive")
			}
			if limit < 0 {
				return usagef("--limit %d: want a number of samples (0: all)", limit)
			}
			switch format {
			case "", "csv", "benchstat":
			default:
				return usagef("--format %q: want csv or benchstat", format)
			}
			if speculative && (metric != "" || format != "") {
				return usagef("--speculative takes every metric of the breakdown: no --metric or --format")
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return usageError{err}
			}
			q := service.HistoryQuery{Metric: metric, Since: from, Limit: limit, Fingerprints: asJSON}
			if speculative {
				q.Limit, q.Fingerprints = 0, false // --limit counts commits
			}
			var rows []service.HistoryRow
			bot, err := g.openRecords()
			if r, ok := g.beside(err); ok {
				rows, err = r.history(cmd.Context(), q)
			} else if err == nil {
				defer bot.Close()
				rows, err = bot.History(cmd.Context(), q)
			}
			if err != nil {
				return err
			}
			switch {
			case speculative:
				return historySpeculative(g, rows, limit, asJSON)
			case asJSON:
				return writeJSON(g.stdout, rows)
			case format == "csv":
				return writeHistoryCSV(g.stdout, rows)
			case format == "benchstat":
				return writeHistoryBenchstat(g.stdout, rows)
			default:
				return printHistory(g.stdout, rows, time.Local)
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&metric, "metric", "", "only this metric")
	f.StringVar(&since, "since", "", "only samples since a time: a duration (72h), a date (2026-11-01) or RFC 3339")
	f.IntVar(&limit, "limit", 0, "at most N samples (0: all)")
	f.BoolVar(&asJSON, "json", false, "print one JSON document")
	f.StringVar(&format, "format", "", "csv or benchstat (Go benchmark format with commit: lines)")
	f.BoolVar(&speculative, "speculative", false, "the speculative-decoding breakdown of every commit: speed-up over plain decoding, break-even acceptance and the terms (--limit counts commits)")
	return cmd
}

// printHistory prints one line per sample, its time in loc.
func printHistory(w io.Writer, rows []service.HistoryRow, loc *time.Location) error {
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%s  %s  %-16s %12.4g %-8s %s  %s\n", r.Time.In(loc).Format("2006-01-02 15:04:05"), short(r.Commit), r.Metric, r.Value, r.Unit, r.Host, r.Subject); err != nil {
			return err
		}
	}
	return nil
}

func writeHistoryCSV(w io.Writer, rows []service.HistoryRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"time", "commit", "metric", "unit", "value", "host", "status", "run_id"})
	for _, r := range rows {
		cw.Write([]string{r.Time.UTC().Format(time.RFC3339Nano), r.Commit, r.Metric, r.Unit,
			strconv.FormatFloat(r.Value, 'g', -1, 64), r.Host, r.Status, strconv.FormatUint(r.RunID, 10)})
	}
	cw.Flush()
	return cw.Error()
}

// writeHistoryBenchstat writes the samples oldest first, so that
// benchstat's columns follow history.
func writeHistoryBenchstat(w io.Writer, rows []service.HistoryRow) error {
	var bs []bench.BenchstatRow
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		bs = append(bs, bench.BenchstatRow{Commit: r.Commit, Name: r.Metric, Unit: r.Unit, Value: r.Value})
	}
	return bench.WriteBenchstat(w, bs)
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
