package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
)

// historySpeculative prints the breakdown of the commits in rows.
func historySpeculative(g *globals, rows []service.HistoryRow, limit int, asJSON bool) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	spec, err := service.SpeculativeHistory(cfg, rows, limit)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(g.stdout, spec)
	}
	unit := "ms"
	if m, err := cfg.Metric(cfg.Speculative.DecodeMs); err == nil && record.SpecTimeUnit(m.Unit) != "" {
		unit = m.Unit
	}
	return printSpecHistory(g.stdout, spec, cfg.Speculative.Tokens, unit, time.Local)
}

// printSpecHistory prints one line per commit, newest first: the
// expected speed-up of speculation over plain decoding and the break-even
// acceptance with their intervals, the terms' medians (in unit, ms unless
// the configured metrics say otherwise) and the verdict.
func printSpecHistory(w io.Writer, rows []service.SpecHistoryRow, tokens int, unit string, loc *time.Location) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	u := strings.ToUpper(unit)
	fmt.Fprintf(tw, "TIME\tCOMMIT\tRUNS\tSPEED-UP\tBREAK-EVEN\tACCEPT\tVERIFY %s\tDRAFT %s\tDECODE %s\tTOK/S\tSPECULATION\tSUBJECT\n", u, u, u)
	for _, r := range rows {
		b := r.Breakdown
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\t%s\t%s\n", r.Time.In(loc).Format("2006-01-02 15:04:05"), record.ShortHash(r.Commit), r.Error, r.Subject)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.2f%s\t%.2f\t%.2f\t%.2f\t%.4g\t%s\t%s\n",
			r.Time.In(loc).Format("2006-01-02 15:04:05"), record.ShortHash(r.Commit), b.N,
			specInterval(b.SpeedUp), specInterval(b.BreakEven), b.Accept.Median, ofTokens(tokens),
			b.VerifyMs.Median, b.DraftMs.Median, b.DecodeMs.Median, r.TokS.Median, verdict(b), r.Subject)
	}
	return tw.Flush()
}

func specInterval(e record.SpecEstimate) string {
	return fmt.Sprintf("%.2f [%.2f, %.2f]", e.Median, e.Lo, e.Hi)
}

func ofTokens(tokens int) string {
	if tokens <= 0 {
		return ""
	}
	return fmt.Sprintf(" of %d", tokens)
}

// verdict says whether speculation pays: only an interval of the speed-up
// wholly on one side of 1 decides.
func verdict(b record.SpecBreakdown) string {
	switch {
	case b.Slower():
		return fmt.Sprintf("costs %.0f%%", b.CostPct())
	case b.SpeedUp.Lo > 1:
		return fmt.Sprintf("pays %.2fx", b.SpeedUp.Median)
	}
	return "undecided"
}
