package report

import (
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/record"
)

// Warnings returns the reasons to doubt f that a reader should see before
// blaming anyone: a merge commit, a commit that changes only files named
// like documentation or tests, a build identical to its parent's, a
// confidence below the publish cut-off, and environments or GPU and NCCL
// states that differ between the two ends. Like syzbot's
// unreliable-bisection flags, they come from the result, not from the
// measurements. A file name is only a guess at what a build or benchmark
// reads, so it never explains a measured effect away: the warning says
// that the files are not code and that the effect is measured all the
// same. Render shows them after f.Warnings.
func Warnings(f *record.Finding) []string {
	var ws []string
	for _, c := range f.Culprits {
		short := c.Commit.Short()
		if n := len(c.Commit.Parents); n > 1 {
			ws = append(ws, fmt.Sprintf("%s is a merge commit (%d parents): the change may come from the merged branch, which the first-parent bisection did not enter.", short, n))
		}
		if gitops.DocsOrTestsOnly(c.Commit.Files) {
			ws = append(ws, notCodeWarning(c))
		}
		if c.NoCodeChange {
			ws = append(ws, fmt.Sprintf("%s changes only comments and blank lines: the change must come from noise or the environment.", short))
		}
		if c.BuildIdentical {
			ws = append(ws, fmt.Sprintf("%s builds to the same output as its parent: the change must come from noise or the environment.", short))
		}
	}
	cut := f.PublishCutOff()
	if f.Outcome != record.OutcomeNotReproduced && f.Confidence < cut {
		ws = append(ws, fmt.Sprintf("Confidence %s is below the publish cut-off %s.", num.Confidence(f.Confidence), num.Confidence(cut)))
	}
	if len(f.EnvDiffs) > 0 {
		names := make([]string, len(f.EnvDiffs))
		for i, d := range f.EnvDiffs {
			names[i] = d.Name
		}
		ws = append(ws, fmt.Sprintf("The two ends ran in different environments (%s): the change may come from the environment rather than the code.", strings.Join(names, ", ")))
	}
	if len(f.StateDiffs) > 0 {
		ws = append(ws, fmt.Sprintf("The GPUs, NCCL or software of the two ends were in different states (%s): the change may come from the machine rather than the code.", strings.Join(stateLabels(f.StateDiffs), ", ")))
	}
	return ws
}

// notCodeWarning is the caveat of a culprit whose files are all named like
// documentation or tests: they are not the program's code, and its
// effect is measured all the same, so a build or benchmark that reads
// them (a data file, a benchmark in a test file) is where to look.
func notCodeWarning(c record.Culprit) string {
	s := fmt.Sprintf("%s changes no program code, only files named like documentation or tests (%s); its effect is measured all the same", c.Commit.Short(), strings.Join(c.Commit.Files, ", "))
	if c.Confirmation != nil && c.Confirmation.Confirmed {
		return s + ", and confirmed: the build or the benchmark reads them."
	}
	return s + ": if it holds, the build or the benchmark reads them."
}
