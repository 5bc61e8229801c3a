package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/perfbot/perfbot/internal/num"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
)

func bisectCmd(g *globals) *cobra.Command {
	var (
		req                                    service.BisectRequest
		direction                              string
		fileIssue, asJSON, failOnCul, withDiff bool
	)
	cmd := &cobra.Command{
		Use:   "bisect --good REV --bad REV",
		Short: "Find the commit that changed a metric, noise-aware, with a calibrated confidence",
		Long: `bisect finds the commit between --good and --bad (first-parent history)
that changed the metric (the primary one unless --metric). It measures both
ends again first, interleaved: ends that do not differ in --direction by
bisect.min_effect are not_reproduced, and nothing is searched. Otherwise a
noise-aware Bayesian search probes commits until one is the culprit with
bisect.confidence, and confirms it with fresh interleaved runs of parent and
culprit before it is reported; commits that do not build are skipped.
--hunks continues from each culprit into the diff hunks that explain it,
named by file and function with the lines each adds and removes (--diff
prints their diffs), and into the dependencies it bumps: a Go module's
versions from GOPROXY, then, with its repository under dependencies in
the configuration, its commits; a submodule's commits; a Python pin's
versions from the package's wheels directory under dependencies (the
build step installs from the pin). Each is measured as the culprit with
the dependency swapped in.

Every run is stored and reused: a second bisect over the same range, or a
measure of the same commits, runs only what is missing. The verdict is
printed on stdout (or one JSON document with --json); progress goes to
stderr. The exit status is 0 whatever the verdict, unless
--fail-on-culprit and a confirmed regression.`,
		Example: `  perfbot bisect --good v0.4.6 --bad main
  perfbot bisect --good HEAD~20 --bad HEAD --hunks --file-issue
  perfbot bisect --good HEAD~200 --bad HEAD --scan 20 --metric decode_tok_s
  perfbot bisect --good "$BASE" --bad HEAD --fail-on-culprit --json > bisect.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if req.Scan < 0 {
				return usagef("--scan %d: want a number of commits (0: no survey)", req.Scan)
			}
			switch record.Direction(direction) {
			case record.Regression, record.Improvement, record.Any:
				req.Direction = record.Direction(direction)
			default:
				return usagef("--direction %q: want regression, improvement or any", direction)
			}
			ctx := cmd.Context()
			bot, err := g.open(ctx)
			if r, ok := g.beside(err); ok {
				if fileIssue {
					return usagef("--file-issue: perfbot serve holds the store; its alert jobs file issues, a bisection submitted to it does not")
				}
				var rep service.Bisection
				if err := r.run(ctx, record.JobBisect, req, g.stderr, &rep); err != nil {
					return err
				}
				if asJSON {
					err = writeJSON(g.stdout, bisectJSON(&rep))
				} else {
					err = printBisect(g.stdout, &rep, withDiff)
				}
				return errors.Join(err, failOn(failOnCul, &rep))
			}
			if err != nil {
				return err
			}
			defer bot.Close()
			if fileIssue {
				// A tracker that cannot take the findings is found
				// before anything is measured.
				if err := bot.CheckFiling(); err != nil {
					return err
				}
			}
			rep, err := bot.Bisect(ctx, req)
			if err != nil {
				return err
			}
			findings, err := bot.StoreFindings(ctx, rep)
			if err != nil {
				return err
			}
			var fileErr error
			if fileIssue {
				fileErr = bot.File(ctx, findings)
			}
			// The report is printed whether or not filing worked: the
			// bisection is done and its findings are stored unfiled.
			if asJSON {
				err = writeJSON(g.stdout, bisectJSON(rep))
			} else {
				err = printBisect(g.stdout, rep, withDiff)
			}
			return errors.Join(fileErr, err, failOn(failOnCul, rep))
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Good, "good", "", "a revision without the change")
	f.StringVar(&req.Bad, "bad", "", "a revision with the change")
	f.StringVar(&req.Metric, "metric", "", "metric to follow (default: the primary)")
	f.StringVar(&direction, "direction", "regression", "regression, improvement or any")
	f.BoolVar(&req.Hunks, "hunks", false, "continue from each culprit into its hunks")
	f.BoolVar(&withDiff, "diff", false, "with --hunks, print the diff of each hunk")
	f.IntVar(&req.Scan, "scan", 0, "survey every N commits first and bisect each differing stretch (finds changes masked by later opposite ones)")
	f.BoolVar(&fileIssue, "file-issue", false, "file an issue per culprit (GitHub, or the issues directory)")
	f.BoolVar(&asJSON, "json", false, "print one JSON document")
	f.BoolVar(&failOnCul, "fail-on-culprit", false, fmt.Sprintf("exit with status %d when a confirmed culprit of a regression is found (for CI)", exitCulprit))
	markRequired(cmd, "good", "bad")
	return cmd
}

// errCulprit is the outcome --fail-on-culprit turns into exit status
// exitCulprit.
var errCulprit = errors.New("a confirmed regression was found (--fail-on-culprit)")

// failOn returns errCulprit when on is set and rep names a confirmed
// culprit of a regression.
func failOn(on bool, rep *service.Bisection) error {
	if !on {
		return nil
	}
	for _, c := range rep.Culprits {
		if c.Confirmation != nil && c.Confirmation.Confirmed && c.Direction == record.Regression {
			return fmt.Errorf("culprit %s: %w", record.ShortHash(c.Commit), errCulprit)
		}
	}
	return nil
}

// printBisect prints the verdict, the probes, each culprit with its
// confirmation, the hunks of each culprit searched (their diffs too with
// withDiff), and what it cost.
func printBisect(w io.Writer, rep *service.Bisection, withDiff bool) error {
	fmt.Fprintf(w, "%s on %s (%s): good %s median %s (n=%d)  bad %s median %s (n=%d)\n\n",
		rep.Verdict, rep.Metric, rep.Direction, record.ShortHash(rep.Good.Commit), num.Format(rep.Good.Median), rep.Good.N, record.ShortHash(rep.Bad.Commit), num.Format(rep.Bad.Median), rep.Bad.N)
	if ow, ok := record.OtherDirection(rep.Warnings); ok && rep.Verdict == record.OutcomeNotReproduced {
		fmt.Fprintf(w, "no %s, but the ends differ the other way: %s of %s; to find its commit:\n  %s\n\n",
			rep.Direction, ow.Direction.Indefinite(), ow.Change(), ow.Command(rep.Metric))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tCOMMIT\tN\tMEDIAN\tSTATUS\tSIDE\tSUBJECT")
	for _, p := range rep.Probes {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\n", p.Index, record.ShortHash(p.Commit), p.N, num.Format(p.Median), p.Status, p.Side, rep.Commit(p.Commit).Subject)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, c := range rep.Culprits {
		commit := rep.Commit(c.Commit)
		fmt.Fprintf(w, "culprit %s %s confidence %s (%s) — %s by %s\n",
			commit.Short(), c.Effect, num.Confidence(c.Confidence), c.Direction, commit.Subject, commit.Author)
		switch conf := c.Confirmation; {
		case conf == nil:
			fmt.Fprintf(w, "  NOT confirmed: no interleaved runs were taken\n")
		case conf.Confirmed:
			fmt.Fprintf(w, "  confirmed: %s\n", conf)
		default:
			fmt.Fprintf(w, "  NOT confirmed: %s\n", conf)
		}
	}
	if len(rep.Candidates) > 0 {
		var names []string
		for _, c := range rep.Candidates {
			names = append(names, record.ShortHash(c))
		}
		fmt.Fprintf(w, "candidates (among commits that do not build): %s\n", strings.Join(names, " "))
	}
	for _, c := range rep.Culprits {
		if h := rep.Hunks[c.Commit]; h != nil {
			printHunks(w, h, withDiff)
		}
		for _, d := range rep.Descents[c.Commit] {
			printDescent(w, d, withDiff)
		}
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	_, err := fmt.Fprintf(w, "%d runs, %d builds, %d samples, %.0fs, job %s\n", rep.Runs, rep.Builds, rep.Samples, rep.WallSeconds, rep.JobID)
	return err
}

// printDescent prints a descent into a dependency bump: the versions (or
// commits) measured and the one that makes the change, with its hunks.
func printDescent(w io.Writer, d record.Descent, withDiff bool) {
	fmt.Fprintf(w, "\ndescent into %s, %s (%d):\n", d.Dependency, d.Over, d.Searched)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	column := "VERSION"
	if d.Over == record.DescentCommits {
		column = "COMMIT"
	}
	fmt.Fprintf(tw, "  %s\tN\tMEDIAN\tSIDE\n", column)
	for _, s := range d.Steps {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", d.Label(s.Version), s.N, num.Format(s.Median), s.Verdict)
	}
	tw.Flush()
	if d.Outcome != record.OutcomeCulprit {
		fmt.Fprintf(w, "  %s: no single %s named\n", d.Outcome, strings.TrimSuffix(d.Over, "s"))
		return
	}
	confirmed := "confirmed"
	if !d.Confirmed {
		confirmed = "NOT confirmed"
	}
	fmt.Fprintf(w, "  culprit %s (after %s) %s confidence %s, %s\n", d.Label(d.Culprit), d.Label(d.Before), d.Effect, num.Confidence(d.Confidence), confirmed)
	if c := d.Commit; c != nil {
		fmt.Fprintf(w, "  dependency commit %s %s by %s\n", c.Short(), c.Subject, c.Author)
	}
	if d.PseudoVersion != "" {
		fmt.Fprintf(w, "  pseudo-version %s\n", d.PseudoVersion)
	}
	for _, h := range d.Hunks {
		loc := h.File
		if h.Function != "" {
			loc += "::" + h.Function
		}
		fmt.Fprintf(w, "  [%s] %s  %s\n", orNone(h.Component), loc, h.Size())
		if withDiff {
			for _, line := range strings.Split(strings.TrimRight(h.Diff, "\n"), "\n") {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
	}
}
