package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/service"
)

func demoCmd(g *globals) *cobra.Command {
	var (
		dir    string
		seed   int64
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole cycle on the bundled testbed and compare the findings with its ground truth",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sum, err := service.Demo(cmd.Context(), service.DemoOptions{Dir: dir, Seed: seed, Progress: g.stderr, Logger: g.logger()})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.stdout, sum)
			}
			printDemo(g.stdout, sum)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "demo-out", "directory for the testbed repository, the store and the issues")
	cmd.Flags().Int64Var(&seed, "seed", 1, "seed of the testbed history")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func printDemo(w io.Writer, s *service.DemoSummary) {
	fmt.Fprintf(w, "perfbot demo: %d commits of %s searched, verdict %s\n\n", s.Commits, s.Repo, s.Verdict)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANGE\tKIND\tTRUE COMMIT\tINTENDED\tFOUND COMMIT\tΔ%\tCONFIDENCE\tHUNK FOUND\tCOMPONENT\tMATCH\tISSUE")
	for _, r := range s.Rows {
		match := "-"
		switch {
		case r.CommitMatch && r.HunkMatch:
			match = "commit+hunk"
		case r.CommitMatch:
			match = "commit"
		case r.FoundCommit != "" && r.Change == "-":
			match = "unexpected"
		case r.FoundCommit == "" && r.IntendedPct == 0:
			match = "no effect expected, none found"
		case r.FoundCommit == "" && r.TrueCommit != "":
			match = "missed"
		}
		if r.Unconfirmed {
			match += ", not confirmed: kept"
		}
		intended := ""
		if r.IntendedPct != 0 {
			intended = fmt.Sprintf("%+.0f%%", r.IntendedPct)
		}
		delta, conf := "", ""
		if r.FoundCommit != "" {
			delta, conf = fmt.Sprintf("%+.1f%%", r.DeltaPct), fmt.Sprintf("%.3f", r.Confidence)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Change, r.Kind, short(r.TrueCommit), intended,
			short(r.FoundCommit), delta, conf, orNone(r.FoundHunk), orNone(r.Component), match, r.Issue)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d runs, %d builds, %.0fs; issues written: %d\n", s.Runs, s.Builds, s.Wall, len(s.Issues))
	for _, i := range s.Issues {
		fmt.Fprintf(w, "  %s\n", i)
	}
}
