package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perfbot/perfbot/internal/num"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
)

func measureCmd(g *globals) *cobra.Command {
	var (
		repeats int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "measure REV...",
		Short: "Measure revisions and store their samples (runs only what the store lacks)",
		Long: `measure builds and benchmarks each revision until it has --repeats ok runs of
every metric, the revisions' runs interleaved, and prints each revision's
status and, per metric, the median with its interval. Runs already in the
store count: measuring again runs only what is missing. A revision that
does not build or whose benchmark fails is a status (build_failed,
bench_failed), not an error.`,
		Example: `  perfbot measure HEAD~1 HEAD --repeats 5
  perfbot measure v0.4.6 main --json`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if repeats < 1 {
				return usagef("--repeats must be at least 1, got %d", repeats)
			}
			ctx := cmd.Context()
			var ms []service.Measurement
			bot, err := g.open(ctx)
			if r, ok := g.beside(err); ok {
				var rep service.MeasureReport
				err = r.run(ctx, record.JobMeasure, service.MeasureRequest{Revs: args, Repeats: repeats, Asked: time.Now().UTC()}, g.stderr, &rep)
				ms = rep.Measurements
			} else if err == nil {
				defer bot.Close()
				ms, err = bot.Measure(ctx, args, repeats)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.stdout, ms)
			}
			return printMeasurements(g.stdout, ms)
		},
	}
	cmd.Flags().IntVar(&repeats, "repeats", 5, "ok runs each revision must have")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

// medianOf prints a median with its unit, or "-" without runs.
func medianOf(s record.MetricSummary) string {
	if s.N == 0 {
		return "-"
	}
	return num.Format(s.Median) + " " + s.Unit
}

// interval prints a median's interval as what it is: a 95% interval, or
// below six runs the runs' range with the coverage it really has.
func interval(s record.MetricSummary) string {
	if s.N == 0 {
		return "-"
	}
	iv := "[" + num.Format(s.Lo) + ", " + num.Format(s.Hi) + "]"
	if s.Range {
		return fmt.Sprintf("%s min–max, %.0f%%", iv, 100*s.Coverage)
	}
	return iv + " 95%"
}

// printMeasurements prints one line per metric of each revision, and the
// error of a revision that did not build or run.
func printMeasurements(w io.Writer, ms []service.Measurement) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMMIT\tSTATUS\tMETRIC\tN\tMEDIAN\tINTERVAL OF THE MEDIAN\tSUBJECT")
	for _, m := range ms {
		for _, s := range m.Metrics {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", record.ShortHash(m.Commit), m.Status, s.Metric, s.N, medianOf(s), interval(s), m.Subject)
		}
		if m.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t%s\n", record.ShortHash(m.Commit), m.Status, firstLine(m.Error))
		}
	}
	return tw.Flush()
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
