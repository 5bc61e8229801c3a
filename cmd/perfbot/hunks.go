package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
)

func hunksCmd(g *globals) *cobra.Command {
	var (
		req              service.HunksRequest
		direction        string
		asJSON, withDiff bool
	)
	cmd := &cobra.Command{
		Use:   "hunks REV | --worktree",
		Short: "Find the diff hunks of a commit (or of uncommitted changes) that cause its effect",
		Long: `hunks splits the diff of REV against its first parent into hunks (one line of
context) and finds the fewest hunks that explain the change of the metric
(the primary one unless --metric): files first, then hunks inside them,
applied to the parent and reverted from REV, each configuration built and
measured. A configuration that does not apply or build is unresolved, never
good. Each explaining hunk is named by its file, function and component
with the lines it adds and removes (--diff prints its diff too), and
their effect is printed applied alone and reverted alone.

With --worktree it searches the uncommitted changes of the working copy at
repo.url instead (tracked changes, staged or not, and untracked files git
does not ignore), applied to its HEAD. perfbot's own files there (the
configuration, the workdir, the store, the issues directory) are left out.

--direction improvement finds the hunks that make an improvement (bisect
--direction improvement --hunks passes it on).`,
		Example: `  perfbot hunks 3f2a9c1
  perfbot hunks --worktree
  perfbot hunks HEAD --metric verify_tok_s --json`,
		Args: usageArgs(func(cmd *cobra.Command, args []string) error {
			switch {
			case req.Worktree && len(args) > 0:
				return fmt.Errorf("give either REV or --worktree, not both")
			case !req.Worktree && len(args) == 0:
				return fmt.Errorf("hunks needs REV or --worktree")
			}
			return cobra.MaximumNArgs(1)(cmd, args)
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				req.Rev = args[0]
			}
			switch req.Direction = record.Direction(direction); req.Direction {
			case record.Regression, record.Improvement:
			default:
				return usagef("--direction %q: want regression or improvement", direction)
			}
			bot, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer bot.Close()
			rep, err := bot.Hunks(cmd.Context(), req)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.stdout, hunksJSON(rep))
			}
			return printHunks(g.stdout, rep, withDiff)
		},
	}
	cmd.Flags().BoolVar(&req.Worktree, "worktree", false, "search the uncommitted changes of the configured working copy")
	cmd.Flags().StringVar(&req.Metric, "metric", "", "metric to follow (default: the primary)")
	cmd.Flags().StringVar(&direction, "direction", "regression", "the kind of change whose hunks to find: regression or improvement")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	cmd.Flags().BoolVar(&withDiff, "diff", false, "print the diff of each hunk")
	return cmd
}

// printHunks prints the hunks that explain a change, each named by its
// file and function with the lines it adds and removes, and their effect
// applied alone and reverted alone; withDiff prints each hunk's diff
// under it. A rewrite's diff runs to hundreds of lines, so it is asked
// for.
func printHunks(w io.Writer, rep *service.HunksReport, withDiff bool) error {
	if rep.NoRuntimeChange != "" {
		_, err := fmt.Fprintf(w, "\nhunks of %s (%s): none of its %d hunks can change %s: %s\n", record.ShortHash(rep.Change), rep.Subject, rep.TotalHunks, rep.Metric, rep.NoRuntimeChange)
		return err
	}
	if len(rep.Hunks) == 0 {
		// A search that stopped unresolved names nothing: "0 of N hunks
		// explain the change" would read as a finding that none matters.
		fmt.Fprintf(w, "\nhunks of %s (%s): none of its %d hunks singled out on %s\n", record.ShortHash(rep.Change), rep.Subject, rep.TotalHunks, rep.Metric)
	} else {
		fmt.Fprintf(w, "\nhunks of %s (%s): %d of %d hunks explain the change on %s\n", record.ShortHash(rep.Change), rep.Subject, len(rep.Hunks), rep.TotalHunks, rep.Metric)
	}
	fmt.Fprintf(w, "  applied alone to %s: %s; reverted alone: %s\n", record.ShortHash(rep.Base), measured(rep.Applied), measured(rep.Reverted))
	for _, h := range rep.Hunks {
		loc := h.File
		if h.Function != "" {
			loc += "::" + h.Function
		}
		fmt.Fprintf(w, "  [%s] %s  %s\n", orNone(h.Component), loc, h.Size())
		if !withDiff {
			continue
		}
		for _, line := range strings.Split(strings.TrimRight(h.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	if len(rep.Hunks) > 0 && !withDiff {
		fmt.Fprintln(w, "  (--diff prints their diffs)")
	}
	if len(rep.Unresolved) > 0 {
		what := "configurations"
		if len(rep.Unresolved) == 1 {
			what = "configuration"
		}
		fmt.Fprintf(w, "  %d %s unresolved (did not apply or build, or stayed undecided)\n", len(rep.Unresolved), what)
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	_, err := fmt.Fprintf(w, "  %d configurations, %d runs, %d builds, %.0fs\n", rep.Configurations, rep.Runs, rep.Builds, rep.WallSeconds)
	return err
}

// measured is the effect, or "not measured" for one that was not: never
// a zero that reads as measured.
func measured(e minimize.Effect) string {
	if !e.Measured() {
		return "not measured"
	}
	return e.Effect.String()
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func envbisectCmd(g *globals) *cobra.Command {
	var (
		req    service.EnvBisectRequest
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "envbisect --rev REV --good-env A.env --bad-env B.env",
		Short: "Find the environment variables whose difference explains a change",
		Long: `envbisect measures REV's benchmarks in two environments and finds the fewest
variables whose difference explains the change of the metric (the primary
one unless --metric). Each file holds NAME=VALUE lines: blank lines and
lines starting with # are skipped, an "export " prefix and one pair of
matching quotes around the value are removed; a name given twice, or one
that is not a variable name, is an error naming the file and line.

The variables are set over each benchmark step's own env (the build is the
same for both). A variable that one file sets and the other does not is
left, on that other side, as the step and the host give it. Variables with
the same value in both files are not searched.`,
		Example: `  printf 'NCCL_PROTO=LL\nNCCL_ALGO=Ring\n' > good.env
  printf 'NCCL_PROTO=Simple\nNCCL_ALGO=Tree\n' > bad.env
  perfbot envbisect --rev HEAD --good-env good.env --bad-env bad.env`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			bot, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer bot.Close()
			rep, err := bot.EnvBisect(cmd.Context(), req)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.stdout, envBisectJSON(rep))
			}
			return printEnvBisect(g.stdout, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Rev, "rev", "", "the revision to measure")
	f.StringVar(&req.GoodEnv, "good-env", "", "file of NAME=VALUE lines: the good environment")
	f.StringVar(&req.BadEnv, "bad-env", "", "file of NAME=VALUE lines: the bad environment")
	f.StringVar(&req.Metric, "metric", "", "metric to follow (default: the primary)")
	f.BoolVar(&asJSON, "json", false, "print one JSON document")
	markRequired(cmd, "rev", "good-env", "bad-env")
	return cmd
}

// printEnvBisect prints the variables whose difference explains the
// change, with their effect applied alone and reverted alone.
func printEnvBisect(w io.Writer, rep *service.EnvBisectReport) error {
	fmt.Fprintf(w, "at %s, %d variables differ (%s); the change is explained by: %s\n", record.ShortHash(rep.Commit), len(rep.Differing), strings.Join(rep.Differing, " "), strings.Join(rep.Minimal, " "))
	for _, name := range rep.Minimal {
		fmt.Fprintf(w, "  %s: %q (good) → %q (bad)\n", name, rep.Good[name], rep.Bad[name])
	}
	fmt.Fprintf(w, "  applied alone: %s; reverted alone: %s\n", measured(rep.Applied), measured(rep.Reverted))
	_, err := fmt.Fprintf(w, "  %d tests, %d runs, %.0fs\n", len(rep.Tests), rep.Runs, rep.WallSeconds)
	return err
}
