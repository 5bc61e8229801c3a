package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/views"
)

func triageCmd(g *globals) *cobra.Command {
	var (
		note   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "triage FINDING untriaged|acknowledged|invalid|fixed",
		Short: "Record what a person decided about a finding",
		Long: `triage records a decision about a finding (named by a unique prefix of its
id, see perfbot findings): acknowledged (the change is real and accepted:
intended, or an improvement), invalid (a false alarm), fixed, or back to
untriaged. Acknowledging a change perfbot placed at a culprit moves the
nightly baseline: the culprit becomes the reference later nights are
measured beside, at the level its nights have shown, so the new level
raises no further alert. The dashboard's precision counts the invalid
ones. While perfbot serve holds the store, the decision goes through it.`,
		Example: `  perfbot triage 3f2a9c1 acknowledged --note "intended: the new sampler"
  perfbot triage 3f2a invalid --note "a neighbour's job on the host"`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := service.TriageRequest{State: record.Triage(args[1]), Note: note}
			if !req.State.Valid() {
				return usagef("state %q: want one of %v", args[1], record.Triages())
			}
			f, err := g.triage(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.stdout, f)
			}
			return printTriage(g.stdout, f)
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "why (shown with the finding)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the finding as one JSON document")
	return cmd
}

// triage records the decision in the store, or through the server that
// holds it.
func (g *globals) triage(ctx context.Context, name string, req service.TriageRequest) (record.Finding, error) {
	_, bot, err := g.openRecords()
	if r, ok := g.beside(err); ok {
		var row views.FindingRow
		err := r.do(ctx, http.MethodPost, "/api/findings/"+url.PathEscape(name)+"/triage", req, &row)
		return row.Finding, err
	}
	if err != nil {
		return record.Finding{}, err
	}
	defer bot.Close()
	return bot.Triage(ctx, name, req)
}

func printTriage(w io.Writer, f record.Finding) error {
	culprit := "-"
	if len(f.Culprits) > 0 {
		culprit = f.Culprits[0].Commit.Short()
	}
	if _, err := fmt.Fprintf(w, "%s (%s at %s): %s\n", f.ID, f.Metric, culprit, f.TriageState()); err != nil {
		return err
	}
	if t := f.Triage; t != nil && t.Baseline != "" {
		_, err := fmt.Fprintln(w, t.Baseline)
		return err
	}
	return nil
}
