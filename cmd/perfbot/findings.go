package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/num"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
	"github.com/perfbot/perfbot/service"
)

func findingsCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "findings",
		Short: "List localized regressions and the issues filed for them",
		Long: `findings lists what bisections and nightly cycles found, one line each: the
short id (report and triage take it, or any unique prefix of it), the
outcome, the metric, the first culprit and its effect, the confidence, the
components, the triage state and the issue it was filed as.`,
		Example: `  perfbot findings
  perfbot findings --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var fs []record.Finding
			v, err := g.openViews(false)
			if r, ok := g.beside(err); ok {
				fs, err = r.findings(cmd.Context())
			} else if err == nil {
				defer v.Store.Close()
				fs, err = v.ListFindings(cmd.Context())
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.stdout, fs)
			}
			return printFindings(g.stdout, fs)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

// printFindings prints one line per finding: its first culprit, its
// effect and where it stands with the tracker.
func printFindings(w io.Writer, fs []record.Finding) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOUTCOME\tMETRIC\tCULPRIT\tΔ%\tCONFIDENCE\tCOMPONENTS\tSTATE\tISSUE")
	for _, f := range fs {
		culprit, delta := "-", ""
		if len(f.Culprits) > 0 {
			culprit, delta = f.Culprits[0].Commit.Short(), fmt.Sprintf("%+.1f", f.Culprits[0].Effect.Pct)
		}
		issue := ""
		if f.Issue > 0 {
			issue = fmt.Sprintf("#%d", f.Issue)
		}
		components := orNone(strings.Join(report.Components(&f), ","))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.ID, f.Outcome, f.Metric, culprit, delta, confidence(f), components, f.State, issue)
	}
	return tw.Flush()
}

// confidence is the finding's confidence as every view prints it, or "-"
// for an outcome that has none (the ends did not differ).
func confidence(f record.Finding) string {
	if f.Outcome == record.OutcomeNotReproduced {
		return "-"
	}
	return num.Confidence(f.Confidence)
}

func reportCmd(g *globals) *cobra.Command {
	var fileIssue, retry bool
	cmd := &cobra.Command{
		Use:   "report FINDING | --retry-unfiled",
		Short: "Render a finding as Markdown, file it, or retry the findings whose filing failed",
		Long: `report prints a finding (named by a unique prefix of its id, see perfbot
findings) as the issue it is filed as: title, then the Markdown body.
--file-issue files it: on GitHub when github.repo is set, else as a Markdown
file in issues_dir; a finding filed before gets a comment, not a second
issue. --retry-unfiled files every finding whose filing failed.`,
		Example: `  perfbot report 3f2a9c1
  perfbot report 3f2a --file-issue
  perfbot report --retry-unfiled`,
		Args: usageArgs(func(cmd *cobra.Command, args []string) error {
			if retry == (len(args) == 1) {
				return fmt.Errorf("give either FINDING or --retry-unfiled")
			}
			return cobra.MaximumNArgs(1)(cmd, args)
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			v, bot, err := g.openRecords()
			if r, ok := g.beside(err); ok {
				if retry || fileIssue {
					req := service.FileRequest{RetryUnfiled: retry, Asked: time.Now().UTC()}
					if fileIssue {
						req.Finding = args[0]
					}
					return r.run(ctx, record.JobFile, req, g.stderr, &service.FileReport{})
				}
				f, err := r.finding(ctx, args[0])
				if err != nil {
					return err
				}
				return printReport(g.stdout, &f)
			}
			if err != nil {
				return err
			}
			defer bot.Close()
			if retry {
				_, err := bot.RetryUnfiled(ctx)
				return err
			}
			f, err := v.Finding(ctx, args[0])
			if err != nil {
				return err
			}
			if fileIssue {
				return bot.File(ctx, []*record.Finding{&f})
			}
			return printReport(g.stdout, &f)
		},
	}
	cmd.Flags().BoolVar(&fileIssue, "file-issue", false, "file the finding (GitHub, or the issues directory)")
	cmd.Flags().BoolVar(&retry, "retry-unfiled", false, "file every finding whose filing failed before")
	cmd.MarkFlagsMutuallyExclusive("file-issue", "retry-unfiled")
	return cmd
}

// printReport prints the finding as the issue it would be filed as.
func printReport(w io.Writer, f *record.Finding) error {
	title, body, err := report.Render(f)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "# %s\n\n%s", title, body)
	return err
}
