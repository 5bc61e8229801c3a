package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/store"
)

func parseCmd(g *globals) *cobra.Command {
	var (
		format string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "parse --format F FILE",
		Short: "Parse a benchmark output file into samples",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "" {
				return usagef("parse needs --format (one of %v)", bench.Formats())
			}
			f, err := os.Open(args[0])
			if err != nil {
				return inputErr(err)
			}
			defer f.Close()
			samples, err := bench.Parse(format, f, nil)
			if err != nil {
				return inputErr(fmt.Errorf("%s: %w", args[0], err))
			}
			if asJSON {
				return writeJSON(g.stdout, samples)
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVALUE\tUNIT\tBETTER")
			for _, s := range samples {
				fmt.Fprintf(tw, "%s\t%g\t%s\t%s\n", s.Name, s.Value, s.Unit, s.Better)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "gobench, nccl-tests, sglang-serving, sglang-log, vllm-serve, prometheus, json or regex")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func findingsCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "findings",
		Short: "List localized regressions and the issues filed for them",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			db, err := store.Open(cfg.Store)
			if err != nil {
				return err
			}
			defer db.Close()
			fs, err := db.Findings()
			if err != nil {
				return err
			}
			if asJSON {
				if fs == nil {
					fs = []record.Finding{}
				}
				return writeJSON(g.stdout, fs)
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tOUTCOME\tMETRIC\tCULPRIT\tΔ%\tCONFIDENCE\tCOMPONENTS\tSTATE\tISSUE")
			for _, f := range fs {
				culprit, delta := "-", ""
				if len(f.Culprits) > 0 {
					culprit, delta = f.Culprits[0].Commit.Short(), fmt.Sprintf("%+.1f", f.Culprits[0].DeltaPct)
				}
				issue := ""
				if f.Issue > 0 {
					issue = fmt.Sprintf("#%d", f.Issue)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3f\t%v\t%s\t%s\n", short(f.ID), f.Outcome, f.Metric, culprit, delta, f.Confidence, f.Components, f.State, issue)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func reportCmd(g *globals) *cobra.Command {
	var fileIssue, retry bool
	cmd := &cobra.Command{
		Use:   "report FINDING | --retry-unfiled",
		Short: "Render a finding as Markdown, file it, or retry the findings whose filing failed",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if retry == (len(args) == 1) {
				return usagef("give either FINDING or --retry-unfiled")
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			db, err := store.Open(cfg.Store)
			if err != nil {
				return err
			}
			defer db.Close()
			if retry {
				fs, err := db.Findings()
				if err != nil {
					return err
				}
				var todo []*record.Finding
				for i := range fs {
					if fs[i].State == record.StateUnfiled {
						todo = append(todo, &fs[i])
					}
				}
				fmt.Fprintf(g.stderr, "%d unfiled findings\n", len(todo))
				return fileWith(cmd.Context(), g, cfg, db, todo)
			}
			f, ok, err := db.Finding(args[0])
			if err != nil {
				return err
			}
			if !ok {
				return inputErr(fmt.Errorf("no finding %q (see perfbot findings)", args[0]))
			}
			if fileIssue {
				return fileWith(cmd.Context(), g, cfg, db, []*record.Finding{&f})
			}
			title, body, err := report.Render(&f)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "# %s\n\n%s", title, body)
			return nil
		},
	}
	cmd.Flags().BoolVar(&fileIssue, "file-issue", false, "file the finding (GitHub, or the issues directory)")
	cmd.Flags().BoolVar(&retry, "retry-unfiled", false, "file every finding whose filing failed before")
	return cmd
}

// fileFindings files the findings of a bisection with the bot's store.
func fileFindings(ctx context.Context, g *globals, bot *service.Bot, fs []*record.Finding) error {
	return fileWith(ctx, g, bot.Config, bot.Store, fs)
}

// fileWith files each finding and stores its new state. A finding that
// cannot be filed is kept as unfiled; the first such error is returned
// after all were tried.
func fileWith(ctx context.Context, g *globals, cfg *config.Config, db *store.DB, fs []*record.Finding) error {
	filer, err := newFiler(cfg, db, g)
	if err != nil {
		return err
	}
	var first error
	for _, f := range fs {
		err := filer.File(ctx, f)
		if perr := db.PutFinding(*f); perr != nil && first == nil {
			first = perr
		}
		switch {
		case err != nil:
			fmt.Fprintf(g.stderr, "finding %s: not filed: %v\n", short(f.ID), err)
			if first == nil {
				first = err
			}
		case f.State == record.StateFiled:
			fmt.Fprintf(g.stderr, "finding %s: issue #%d %s\n", short(f.ID), f.Issue, f.IssueURL)
		default:
			fmt.Fprintf(g.stderr, "finding %s: kept, not filed\n", short(f.ID))
		}
	}
	return first
}

func newFiler(cfg *config.Config, db *store.DB, g *globals) (*report.Filer, error) {
	var tracker report.Tracker
	if cfg.GitHub.Repo != "" {
		token := os.Getenv(cfg.GitHub.TokenEnv)
		if token == "" {
			return nil, inputErr(fmt.Errorf("github.repo is %s but $%s is empty: set it to a token with issues:write", cfg.GitHub.Repo, cfg.GitHub.TokenEnv))
		}
		gh, err := report.NewGitHub(report.GitHubOptions{Repo: cfg.GitHub.Repo, Token: token, APIURL: cfg.GitHub.APIURL, Logger: g.logger()})
		if err != nil {
			return nil, inputErr(err)
		}
		tracker = gh
	} else {
		d, err := report.NewDir(cfg.IssuesDir)
		if err != nil {
			return nil, err
		}
		tracker = d
	}
	return &report.Filer{Tracker: tracker, Index: db, Labels: cfg.GitHub.Labels, PublishConfidence: cfg.Report.PublishConfidence, Reopen: cfg.Report.Reopen, Logger: g.logger()}, nil
}

var _ = errors.New
