package service

import (
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

// The progress lines of the jobs: one per measurement step, on Progress
// and in the job's trace. Each names its phase first, so that a reader of
// a long job sees what it is doing (verify, survey, bisect, residual,
// confirm for a bisection; ends, test, confirm, effect for a set search;
// measure for plain runs).

// probeLine is the line of one measurement of a commit bisection.
func probeLine(e bisect.ProbeEvent) string {
	index := fmt.Sprintf("#%d", e.Index)
	if e.Index < 0 {
		index = "" // a confirmation's commit is off the chain's numbering
	}
	median := "-" // a broken commit, or a survey point only checked to build
	if e.Median != 0 {
		median = num.Format(e.Median)
	}
	line := fmt.Sprintf("  %-8s %s %-5s n=%-3d median=%-10s %s", e.Phase, record.ShortHash(e.Commit), index, e.N, median, e.Status)
	if e.Best != "" {
		line += fmt.Sprintf("  best %s p=%.3f", record.ShortHash(e.Best), e.Posterior)
	}
	return line
}

// confirmLine is the line of a culprit's confirmation verdict, printed
// whether or not it took fresh runs (the search's own runs of parent and
// culprit are often enough).
func confirmLine(c bisect.Confirmation) string {
	return fmt.Sprintf("  %-8s %s %s: %s", bisect.PhaseConfirm, record.ShortHash(c.Commit), c.Verdict, c)
}

// stepLine is the line of one measurement of a set search: an end, or
// one step of a test.
func stepLine(e minimize.StepEvent) string {
	what := e.End + " end"
	if e.End == "" {
		what = trim(strings.Join(e.Set, ","), 40)
	}
	line := fmt.Sprintf("  %-8s %-40s n=%-3d", e.Phase, what, e.N)
	switch {
	case e.Broken:
		line += " does not apply or build"
	case e.End != "":
		line += " median=" + num.Format(e.Median)
	default:
		line += fmt.Sprintf(" median=%-10s p(bad)=%.3f", num.Format(e.Median), e.PBad)
	}
	return line
}

// testLine is the line of a decided configuration of a set search.
func testLine(e minimize.TestEvent) string {
	return fmt.Sprintf("  decided  %-6s %-33s n=%-3d median=%-10s p(bad)=%.3f %s", e.Test.Side, trim(strings.Join(e.Test.Set, ","), 33), e.Test.N, num.Format(e.Test.Median), e.Test.PBad, e.Test.Outcome)
}

// runLine is the line of one plain run (of `perfbot measure`, of a
// night): its phase, what was run, the run's place among those asked for
// and its value of the primary metric (ok false: the run had none).
func runLine(phase, what string, n, of int, metric string, value float64, ok bool) string {
	if !ok {
		return fmt.Sprintf("  %-8s %s run %d of %d: no %s", phase, what, n, of, metric)
	}
	return fmt.Sprintf("  %-8s %s run %d of %d: %s %s", phase, what, n, of, metric, num.Format(value))
}

// stepProgress prints stepLine.
func (b *Bot) stepProgress(e minimize.StepEvent) { b.progressf("%s", stepLine(e)) }

// testProgress prints testLine.
func (b *Bot) testProgress(e minimize.TestEvent) { b.progressf("%s", testLine(e)) }
