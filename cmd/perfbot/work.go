package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

func workCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "work",
		Short: "Run the queued jobs until none is left, then exit",
		Long: `work runs the jobs waiting in the queue, oldest first, and exits when none
is left: the alert jobs that 'perfbot nightly --no-work' queued, and the
jobs a stopped perfbot left unfinished (they resume from what they had
measured). It prints one line per job it ran. perfbot serve does the
same continuously; work is for a nightly run from the system's own
scheduler, or a machine that is lent for a while.

A job that fails makes work exit as the job's own command would have
(1 for bad input, 2 for the infrastructure), after the other jobs ran.`,
		Example: `  perfbot nightly --no-work && perfbot work`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			bot, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer bot.Close()
			before, err := bot.Store.Jobs()
			if err != nil {
				return err
			}
			seen := make(map[string]store.Job, len(before))
			for _, j := range before {
				seen[j.ID] = j
			}
			drained := bot.Drain(cmd.Context())
			after, err := bot.Store.Jobs()
			if err != nil {
				return err
			}
			var ran []store.Job
			for _, j := range after {
				old, known := seen[j.ID]
				if j.Parent == "" && (!known || !old.Updated.Equal(j.Updated)) {
					ran = append(ran, j)
				}
			}
			slices.SortFunc(ran, func(a, b store.Job) int { return a.Created.Compare(b.Created) })
			if err := printWork(g.stdout, ran); err != nil {
				return err
			}
			if drained != nil {
				return drained
			}
			for _, j := range ran {
				if j.Status == record.JobFailed {
					return jobError(j.ID, j.ErrorKind, j.Error)
				}
			}
			return nil
		},
	}
}

// printWork prints the jobs a drain ran, one line each.
func printWork(w io.Writer, jobs []store.Job) error {
	if len(jobs) == 0 {
		_, err := fmt.Fprintln(w, "no job was waiting")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tKIND\tSTATUS\tRUNS\tBUILDS\tWALL\tERROR")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.0fs\t%s\n", j.ID, j.Kind, j.Status, j.Cost.Runs, j.Cost.Builds, j.Cost.WallSeconds, j.Error)
	}
	return tw.Flush()
}
