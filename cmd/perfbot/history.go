package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/num"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/record"
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
		Long: `history prints the stored samples, newest first: time, commit, metric,
value, host, status and subject, one run a line. It reads the store and
measures nothing; before anything was measured it says so and creates no
store. While perfbot serve holds the store, it reads through its API.

--format csv prints the same rows as CSV; --format benchstat prints them in
the Go benchmark format with commit: lines, oldest commit first, for
benchstat -col commit. --speculative prints, per commit, the speculative
decoding breakdown of the configuration's speculative: block.`,
		Example: `  perfbot history --metric decode_tok_s --since 72h
  perfbot history --metric decode_tok_s --format benchstat > h.txt && benchstat -col commit h.txt
  perfbot history --speculative --limit 10`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usagef("--limit %d: want a number of samples (0: all)", limit)
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
			q := service.HistoryQuery{Metric: metric, Since: from, Limit: limit, Fingerprints: asJSON}
			if speculative {
				q.Limit, q.Fingerprints = 0, false // --limit counts commits
			}
			var rows []service.HistoryRow
			bot, err := g.openExistingRecords()
			if errors.Is(err, service.ErrNoStore) {
				// Nothing was ever measured: say so, and create nothing.
				fmt.Fprintf(g.stderr, "perfbot: no samples yet (%v); `perfbot measure REV` records some\n", err)
				if asJSON {
					return writeJSON(g.stdout, []service.HistoryRow{})
				}
				return nil
			}
			if r, ok := g.beside(err); ok {
				rows, err = r.history(cmd.Context(), q)
			} else if err == nil {
				defer bot.Close()
				rows, err = bot.History(cmd.Context(), q)
			}
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				fmt.Fprintln(g.stderr, "perfbot: no samples match"+describeQuery(metric, since, limit))
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
	cmd.MarkFlagsMutuallyExclusive("json", "format")
	// --speculative takes every metric of the breakdown.
	cmd.MarkFlagsMutuallyExclusive("speculative", "metric")
	cmd.MarkFlagsMutuallyExclusive("speculative", "format")
	return cmd
}

// describeQuery says which samples were asked for, for "no samples match".
func describeQuery(metric, since string, limit int) string {
	var parts []string
	if metric != "" {
		parts = append(parts, "metric "+metric)
	}
	if since != "" {
		parts = append(parts, "since "+since)
	}
	if len(parts) == 0 {
		return " (the store holds none yet)"
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// printHistory prints one line per sample, its time in loc.
func printHistory(w io.Writer, rows []service.HistoryRow, loc *time.Location) error {
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%s  %s  %-16s %12s %-8s %s  %s\n", r.Time.In(loc).Format("2006-01-02 15:04:05"), record.ShortHash(r.Commit), r.Metric, num.Format(r.Value), r.Unit, r.Host, r.Subject); err != nil {
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

// writeHistoryBenchstat writes the samples one commit after another in
// commit order (by the commit's date, oldest first; a commit the store
// has no date of by its first sample), each under a "commit: <short id>"
// line, so that benchstat's columns follow the history and read as the
// commits people type. Each value is named after the benchmark it was
// selected from and carries the metric's unit.
func writeHistoryBenchstat(w io.Writer, rows []service.HistoryRow) error {
	first := map[string]time.Time{}
	byCommit := map[string][]service.HistoryRow{}
	var commits []string
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		if _, ok := byCommit[r.Commit]; !ok {
			commits = append(commits, r.Commit)
			first[r.Commit] = r.Time
			if !r.CommitDate.IsZero() {
				first[r.Commit] = r.CommitDate
			}
		}
		byCommit[r.Commit] = append(byCommit[r.Commit], r)
	}
	slices.SortStableFunc(commits, func(a, b string) int { return first[a].Compare(first[b]) })
	var bs []bench.BenchstatRow
	for _, c := range commits {
		for _, r := range byCommit[c] {
			name := r.Benchmark
			if name == "" {
				name = r.Metric
			}
			bs = append(bs, bench.BenchstatRow{Commit: record.ShortHash(r.Commit), Name: name, Unit: r.Unit, Value: r.Value})
		}
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
