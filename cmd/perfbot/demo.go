package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/demo"
	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/record"
)

func demoCmd(g *globals) *cobra.Command {
	var (
		dir    string
		seed   int64
		asJSON bool
		serve  bool
		listen string
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole cycle on the bundled testbed and compare the findings with its ground truth",
		Long: `demo runs perfbot's service cycle on the bundled testbed, with the embedded
testbed configuration (it reads no perfbot.yaml): it generates the testbed
repository of a small Go inference engine with known injected changes in
--dir, replays its history as nights (measure the tip beside the reference,
detect, bisect each alert, localize its hunks, write one Markdown issue per
regression under DIR/issues) and prints each injected change beside what
was found. The store is DIR/perfbot.db; a second run reuses both.
--serve keeps serving the dashboard of that store, read-only, afterwards.`,
		Example: `  perfbot demo
  perfbot demo --dir /tmp/demo --serve --listen 127.0.0.1:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sum, err := demo.Run(cmd.Context(), demo.Options{Dir: dir, Seed: seed, Progress: g.stderr, Logger: g.logger()})
			if err != nil {
				return err
			}
			if asJSON {
				err = writeJSON(g.stdout, sum)
			} else {
				err = printDemo(g.stdout, sum)
			}
			if err != nil {
				return err
			}
			return demoDashboard(cmd.Context(), g, dir, serve, listen)
		},
	}
	cmd.Flags().BoolVar(&serve, "serve", false, "keep serving the dashboard of the demo's store afterwards (read-only) until interrupted")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address --serve serves the dashboard on")
	cmd.Flags().StringVar(&dir, "dir", "demo-out", "directory for the testbed repository, the store and the issues")
	cmd.Flags().Int64Var(&seed, "seed", 1, "seed of the testbed history")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

// printDemo prints each ground-truth change beside what was found, and the
// issues written.
func printDemo(w io.Writer, s *demo.Summary) error {
	fmt.Fprintf(w, "perfbot demo: %d commits of %s replayed as %d nights, %d alerts\n\n", s.Commits, s.Repo, s.Nights, s.Alerts)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANGE\tKIND\tTRUE COMMIT\tINTENDED\tFOUND COMMIT\tΔ%\tCONFIDENCE\tHUNK FOUND\tCOMPONENT\tNIGHT\tMATCH\tISSUE")
	for _, r := range s.Rows {
		intended := ""
		if r.IntendedPct != 0 {
			intended = fmt.Sprintf("%+.0f%%", r.IntendedPct)
		}
		delta, conf := "", ""
		if r.FoundCommit != "" {
			delta, conf = fmt.Sprintf("%+.1f%%", r.DeltaPct), num.Confidence(r.Confidence)
		}
		night := ""
		if r.Night > 0 {
			night = fmt.Sprint(r.Night)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Change, r.Kind, record.ShortHash(r.TrueCommit), intended,
			record.ShortHash(r.FoundCommit), delta, conf, orNone(r.FoundHunk), orNone(r.Component), night, r.Match(), r.Issue)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d runs, %d builds, %.0fs; issues written: %d\n", s.Runs, s.Builds, s.Wall, len(s.Issues))
	for _, i := range s.Issues {
		if _, err := fmt.Fprintf(w, "  %s\n", i); err != nil {
			return err
		}
	}
	return nil
}
