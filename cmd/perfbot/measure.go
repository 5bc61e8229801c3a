package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if repeats < 1 {
				return usagef("--repeats must be at least 1, got %d", repeats)
			}
			bot, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer bot.Close()
			ms, err := bot.Measure(cmd.Context(), args, repeats)
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

// printMeasurements prints one line per metric of each revision, and the
// error of a revision that did not build or run.
func printMeasurements(w io.Writer, ms []service.Measurement) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMMIT\tSTATUS\tMETRIC\tN\tMEDIAN\t95% CI\tSUBJECT")
	for _, m := range ms {
		for _, s := range m.Metrics {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.4g %s\t[%.4g, %.4g]\t%s\n", short(m.Commit), m.Status, s.Metric, s.N, s.Median, s.Unit, s.Lo, s.Hi, m.Subject)
		}
		if m.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t%s\n", short(m.Commit), m.Status, firstLine(m.Error))
		}
	}
	return tw.Flush()
}

func short(h string) string { return record.ShortHash(h) }

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
