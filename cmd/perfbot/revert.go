package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/service"
)

func revertCmd(g *globals) *cobra.Command {
	var (
		req           service.RevertRequest
		asJSON, patch bool
	)
	cmd := &cobra.Command{
		Use:   "revert FINDING [--tip REV] [--pr]",
		Short: "Prove a culprit by reverting it on today's tip and measuring the revert beside the tip",
		Long: `revert undoes the culprit of FINDING on the tip of the watched branch (or
--tip REV): its minimal hunks, or the whole commit when no hunks were found,
reverted as git revert would, a three-way merge included. The reverted tip
is built and measured beside the tip, interleaved, by the rules that
confirm a culprit, and the verdict is stored with the finding:

  reverting on tip restores +X% [lo, hi]
  the revert no longer applies (later commits depend on it: files)
  the tip no longer has the regression (a later commit undid it, or the
  revert gains nothing)

A filed finding's issue gets the verdict as a comment when it is new or
changed. --pr pushes a revert that restores the speed to perfbot's branch
of github.push_remote and opens a draft pull request into repo.branch
(report.revert_pr must be true). The same finding on the same tip measures
nothing again.`,
		Example: `  perfbot revert 3fa9c1
  perfbot revert 3fa9c1 --tip origin/main --patch
  perfbot revert 3fa9c1 --pr --json`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Finding = args[0]
			bot, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer bot.Close()
			rep, err := bot.Revert(cmd.Context(), req)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.stdout, rep)
			}
			return printRevert(g.stdout, rep, patch)
		},
	}
	cmd.Flags().StringVar(&req.Tip, "tip", "", "revision to revert on (default: the watched branch after a fetch)")
	cmd.Flags().BoolVar(&req.PR, "pr", false, "open a draft pull request with a revert that restores the speed")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	cmd.Flags().BoolVar(&patch, "patch", false, "print the revert as a patch")
	return cmd
}

// printRevert prints the verdict, what was reverted and the revert's
// commit and pull request; withPatch prints the patch under it.
func printRevert(w io.Writer, rep *service.RevertReport, withPatch bool) error {
	rev := rep.Revert
	fmt.Fprintf(w, "\nfinding %s, culprit %s, %s\n", rep.Finding, rep.Culprit[:min(10, len(rep.Culprit))], rep.Metric)
	fmt.Fprintf(w, "  %s\n", rev.Text())
	if rep.Changed != "" {
		fmt.Fprintf(w, "  since the last check: %s\n", rep.Changed)
	}
	what := "the whole commit"
	if len(rev.Hunks) > 0 {
		what = num.Count(len(rev.Hunks), "hunk") + " (" + strings.Join(rev.Hunks, ", ") + ")"
	}
	fmt.Fprintf(w, "  reverted: %s\n", what)
	if rev.Commit != "" {
		fmt.Fprintf(w, "  revert commit: %s (parent %s)\n", rev.Commit[:10], rev.Tip.Short())
	}
	if len(rev.Undone) > 0 {
		fmt.Fprintf(w, "  already undone on the tip: %s\n", strings.Join(rev.Undone, ", "))
	}
	if rev.PR != nil {
		fmt.Fprintf(w, "  draft pull request #%d %s from %s\n", rev.PR.Number, rev.PR.URL, rev.PR.Branch)
	}
	if rep.Commented > 0 {
		fmt.Fprintf(w, "  commented on issue #%d\n", rep.Commented)
	}
	if withPatch && rev.Patch != "" {
		fmt.Fprintf(w, "\n%s", rev.Patch)
	}
	_, err := fmt.Fprintf(w, "  %d runs, %d builds, %.0fs\n", rep.Runs, rep.Builds, rep.WallSeconds)
	return err
}
