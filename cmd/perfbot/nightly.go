package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/perfbot/perfbot/internal/num"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/stats"
)

func nightlyCmd(g *globals) *cobra.Command {
	var (
		asJSON bool
		noWork bool
	)
	cmd := &cobra.Command{
		Use:   "nightly",
		Short: "Run one scheduled cycle now: measure the tip beside the reference, detect, and work off the alert jobs",
		Long: `nightly runs one cycle of the scheduled service now: it fetches the watched
branch, measures its tip interleaved with the reference commit, records the
night, runs change detection on every metric and queues one job per new
change, which it then runs (bisect, hunks, file the issue) unless --no-work.`,
		Example: `  perfbot nightly
  perfbot nightly --no-work --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			bot, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer bot.Close()
			rep, err := bot.Nightly(cmd.Context())
			if err != nil {
				return err
			}
			if !noWork {
				if err := bot.Drain(cmd.Context()); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(g.stdout, rep)
			}
			return printNight(g.stdout, rep)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	cmd.Flags().BoolVar(&noWork, "no-work", false, "queue the alert jobs without running them (perfbot serve runs them)")
	return cmd
}

// printNight prints what the night measured and the alerts it raised.
func printNight(w io.Writer, r *service.NightReport) error {
	n := r.Night
	fmt.Fprintf(w, "night %d: %s at %s, %d new commit(s)", n.Seq, n.Branch, record.ShortHash(n.Tip), len(n.New))
	if n.Reference != "" {
		fmt.Fprintf(w, ", reference %s", record.ShortHash(n.Reference))
	}
	if n.Rewritten {
		fmt.Fprint(w, " (branch rewritten)")
	}
	fmt.Fprintln(w)
	if n.Status != record.StatusOK {
		fmt.Fprintf(w, "tip not measured: %s: %s\n", n.Status, n.Error)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(n.Metrics) > 0 {
		fmt.Fprintln(tw, "METRIC\tTIP\tREFERENCE\tSCALED\tRUNS")
		for _, name := range slices.Sorted(maps.Keys(n.Metrics)) {
			m := n.Metrics[name]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", name, num.Format(median(m.Tip)), orDash(m.Ref), num.Format(median(m.Values)), len(m.Tip))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Alerts) == 0 {
		fmt.Fprintln(w, "no alert")
	}
	for _, a := range r.Alerts {
		what := a.Job
		if a.Note != "" {
			what = a.Note
		}
		fmt.Fprintf(w, "alert: %s %s %+.1f%% between %s and %s (night %d): %s\n", a.Metric, a.Direction, a.DeltaPct, record.ShortHash(a.Good), record.ShortHash(a.Bad), a.Night, what)
		if cmd := a.BisectCommand(); cmd != "" {
			fmt.Fprintf(w, "  to locate it: %s\n", cmd)
		}
	}
	for _, id := range r.Missing {
		fmt.Fprintf(w, "missing data: finding %s\n", id)
	}
	_, err := fmt.Fprintf(w, "%d runs, %d builds, %.0fs\n", r.Runs, r.Builds, r.WallSeconds)
	return err
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return stats.Median(vs)
}

func orDash(vs []float64) string {
	if len(vs) == 0 {
		return "-"
	}
	return num.Format(stats.Median(vs))
}
