package record

import (
	"fmt"
	"slices"
	"strings"
)

// WarningKind names a statistical caveat of a search. The engines return
// caveats as values of these kinds, and Warning.String is the one place
// that puts them into words: nothing parses the words back.
type WarningKind string

// The kinds of warning.
const (
	// WarnOutliers: Count runs were left out of the comparisons as
	// outliers.
	WarnOutliers WarningKind = "outliers"
	// WarnStaleRuns: Count recorded runs were taken at another time with
	// no run of another commit beside them; they do not count in any
	// comparison.
	WarnStaleRuns WarningKind = "stale_runs"
	// WarnSkipped: Count commits do not build and were skipped.
	WarnSkipped WarningKind = "skipped"
	// WarnSkippedInfra: the Commits' runs failed on the infrastructure
	// more than two times in three; they were skipped, not judged.
	WarnSkippedInfra WarningKind = "skipped_infra"
	// WarnEndsUndecided: the ends From and To could not be told apart
	// within Runs runs.
	WarnEndsUndecided WarningKind = "ends_undecided"
	// WarnRangeDropped: the ends of From..To, measured more, turned out
	// not to differ; the range was dropped.
	WarnRangeDropped WarningKind = "range_dropped"
	// WarnBudgetSpent: the run budget (Runs) was spent before From..To
	// was resolved; Commit was the most probable culprit, at P.
	WarnBudgetSpent WarningKind = "budget_spent"
	// WarnNoValues: the run budget (Runs) was spent while Commits, one
	// or both ends of From..To, had no run to compare: none was a
	// positive, finite value taken beside a run of another commit and
	// kept by the outlier screen.
	WarnNoValues WarningKind = "no_values"
	// WarnSecondChange: a second change of at least the minimum effect
	// in From..To was not excluded: its check stopped after Runs more runs
	// (none, when the runs it may take could not have decided it) with
	// the probability P of such a change.
	WarnSecondChange WarningKind = "second_change_not_excluded"
	// WarnHiddenChange: a further change hides among Commits, which do
	// not build.
	WarnHiddenChange WarningKind = "hidden_change"
	// WarnUnconfirmed: runs of Commit and of its parent taken side by
	// side did not show its change: Count runs each gave Pct [LoPct,
	// HiPct].
	WarnUnconfirmed WarningKind = "unconfirmed"
	// WarnSearchedAgain: Count culprits were not confirmed and the range
	// was searched again (Runs searches in all).
	WarnSearchedAgain WarningKind = "searched_again"
	// WarnSetNotBadAlone: the minimal set applied alone to the good end
	// did not reproduce the change.
	WarnSetNotBadAlone WarningKind = "set_not_bad_alone"
	// WarnSetIncomplete: reverting the minimal set alone did not recover
	// the change: other elements contribute too.
	WarnSetIncomplete WarningKind = "set_incomplete"
	// WarnUndecidedElements: the part of Commits (hunk or variable ids)
	// could not be measured: configurations without them stayed
	// undecided after being measured again; they are not named.
	WarnUndecidedElements WarningKind = "undecided_elements"
	// WarnOtherDirection: the ends From and To do not differ in the
	// direction searched, but they do in Direction, by Pct [LoPct,
	// HiPct]: the search asked for an improvement of what is a
	// regression, or the reverse. Command is the search for it.
	WarnOtherDirection WarningKind = "other_direction"
	// WarnSetBudgetSpent: a hunk or environment search spent its run
	// budget (Runs) before it was resolved; Commits (hunk or variable
	// ids) are what it had narrowed the change down to, none of them
	// named. Count configurations did not apply or build, each counted
	// as one run.
	WarnSetBudgetSpent WarningKind = "set_budget_spent"
	// WarnHunksNotSearched: the hunks of the culprit Commit could not be
	// searched, for the reason Text (its effect too small to split, a
	// diff without hunks); the culprit stands.
	WarnHunksNotSearched WarningKind = "hunks_not_searched"
	// WarnNotDescended: the culprit Commit bumps the dependency Text
	// ("name old → new (file)"), whose own versions were not searched for
	// the reason Reasons[0] (no index configured, its repository not
	// reachable, a version that is not semantic).
	WarnNotDescended WarningKind = "not_descended"
	// WarnNote: a caveat in words (Text), as an older perfbot stored
	// every warning.
	WarnNote WarningKind = "note"
)

// Warning is one statistical caveat on a search's result: a value, not
// prose. The fields a kind uses are listed with the kind.
type Warning struct {
	Kind    WarningKind `json:"kind"`
	Count   int         `json:"count,omitempty"`
	From    string      `json:"from,omitempty"`
	To      string      `json:"to,omitempty"`
	Commit  string      `json:"commit,omitempty"`
	Commits []string    `json:"commits,omitempty"`
	GPU     int         `json:"gpu,omitempty"`
	MHz     float64     `json:"mhz,omitempty"`
	EndMHz  float64     `json:"end_mhz,omitempty"`
	Reasons []string    `json:"reasons,omitempty"`
	Runs    int         `json:"runs,omitempty"`
	P       float64     `json:"p,omitempty"`
	Pct     float64     `json:"pct,omitempty"`
	LoPct   float64     `json:"lo_pct,omitempty"`
	HiPct   float64     `json:"hi_pct,omitempty"`
	// Direction is the direction a WarnOtherDirection found.
	Direction Direction `json:"direction,omitempty"`
	// Text is a WarnHunksNotSearched's reason, a WarnNote's words.
	Text string `json:"text,omitempty"`
}

// String renders the warning in English.
func (w Warning) String() string {
	span := ShortHash(w.From) + ".." + ShortHash(w.To)
	switch w.Kind {
	case WarnOutliers:
		return fmt.Sprintf("%d outlier runs were left out of the comparisons", w.Count)
	case WarnStaleRuns:
		return fmt.Sprintf("%d recorded runs were taken at another time, with no run of another commit beside them, and were left out of the comparisons", w.Count)
	case WarnSkipped:
		return fmt.Sprintf("%d commits do not build and were skipped", w.Count)
	case WarnSkippedInfra:
		return fmt.Sprintf("%s skipped, not judged: their runs failed on the infrastructure more than two times in three", shortList(w.Commits))
	case WarnEndsUndecided:
		return fmt.Sprintf("the ends %s could not be told apart within %d runs", span, w.Runs)
	case WarnRangeDropped:
		return fmt.Sprintf("the ends of %s turned out not to differ; the range was dropped", span)
	case WarnBudgetSpent:
		return fmt.Sprintf("run budget (%d) spent before %s was resolved (most probable culprit %s, p=%.2f)", w.Runs, span, ShortHash(w.Commit), w.P)
	case WarnNoValues:
		ends := "the end " + shortList(w.Commits)
		if len(w.Commits) == 2 {
			ends = "the ends " + ShortHash(w.Commits[0]) + " and " + ShortHash(w.Commits[1])
		}
		return fmt.Sprintf("run budget (%d) spent while %s of %s had no run to compare (none a positive, finite value taken beside a run of another commit and kept by the outlier screen)",
			w.Runs, ends, span)
	case WarnSecondChange:
		if w.Runs == 0 {
			return fmt.Sprintf("a second change in %s was not excluded (p=%.2f on the runs at hand; its check took none more, as the runs its budget allows could not decide it)", span, w.P)
		}
		return fmt.Sprintf("a second change in %s was not excluded (p=%.2f when its check had spent its budget, %d more runs)", span, w.P, w.Runs)
	case WarnHiddenChange:
		return fmt.Sprintf("a further change hides among commits that do not build: %s", shortList(w.Commits))
	case WarnUnconfirmed:
		return fmt.Sprintf("culprit %s not confirmed: %d interleaved runs each of its parent and of it give %+.1f%% [%+.1f%%, %+.1f%%]",
			ShortHash(w.Commit), w.Count, w.Pct, w.LoPct, w.HiPct)
	case WarnSearchedAgain:
		return fmt.Sprintf("%d culprit(s) not confirmed; the range was searched %d times", w.Count, w.Runs)
	case WarnSetNotBadAlone:
		return "applying the minimal set alone to the parent does not reproduce the change: the set is not trustworthy"
	case WarnSetIncomplete:
		return "reverting the minimal set alone does not recover the change: other hunks contribute too"
	case WarnSetBudgetSpent:
		broken := ""
		if w.Count > 0 {
			broken = fmt.Sprintf(" (%d configurations did not apply or build, one run each)", w.Count)
		}
		return fmt.Sprintf("run budget (%d) spent before the search was resolved%s; the change lies in %s", w.Runs, broken, strings.Join(w.Commits, ", "))
	case WarnOtherDirection:
		return fmt.Sprintf("the ends %s do not differ in the direction searched, but they do the other way: %s of %s; search it with --direction %s (or any)",
			span, w.Direction.Indefinite(), w.effect(), w.Direction)
	case WarnUndecidedElements:
		return fmt.Sprintf("the effect of %s could not be measured (their tests stayed undecided when measured again); they are not named", strings.Join(w.Commits, ", "))
	case WarnGPUState:
		return gpuStateWarning(w)
	case WarnHunksNotSearched:
		return fmt.Sprintf("the hunks of %s were not searched: %s", ShortHash(w.Commit), w.Text)
	case WarnNotDescended:
		reason := "no reason given"
		if len(w.Reasons) > 0 {
			reason = w.Reasons[0]
		}
		return fmt.Sprintf("not descended into %s of %s: %s", w.Text, ShortHash(w.Commit), reason)
	case WarnNote:
		return w.Text
	}
	return string(w.Kind)
}

func shortList(hashes []string) string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = ShortHash(h)
	}
	return strings.Join(out, " ")
}

// counted are the kinds whose Count adds up when warnings are merged.
var counted = []WarningKind{WarnOutliers, WarnStaleRuns, WarnSkipped}

// MergeWarnings joins lists of warnings: warnings of a counted kind
// (outliers, stale runs, skipped commits) become one with the total count,
// in the place of the first; other repeats are dropped.
func MergeWarnings(lists ...[]Warning) []Warning {
	var out []Warning
	at := map[WarningKind]int{}
	for _, ws := range lists {
		for _, w := range ws {
			if slices.Contains(counted, w.Kind) {
				if i, ok := at[w.Kind]; ok {
					out[i].Count += w.Count
					continue
				}
				at[w.Kind] = len(out)
				out = append(out, w)
				continue
			}
			if !slices.ContainsFunc(out, func(o Warning) bool { return equalWarnings(o, w) }) {
				out = append(out, w)
			}
		}
	}
	return out
}

func equalWarnings(a, b Warning) bool {
	return a.Kind == b.Kind && a.Count == b.Count && a.From == b.From && a.To == b.To && a.Commit == b.Commit &&
		slices.Equal(a.Commits, b.Commits) && a.Runs == b.Runs && a.P == b.P && a.Pct == b.Pct &&
		a.LoPct == b.LoPct && a.HiPct == b.HiPct && a.GPU == b.GPU && a.MHz == b.MHz && a.EndMHz == b.EndMHz &&
		slices.Equal(a.Reasons, b.Reasons) && a.Direction == b.Direction && a.Text == b.Text
}

// WarningStrings renders warnings in English, one line each.
func WarningStrings(ws []Warning) []string {
	if len(ws) == 0 {
		return nil
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

func gpuStateWarning(w Warning) string {
	s := fmt.Sprintf("probe %s met GPU %d ", ShortHash(w.Commit), w.GPU)
	switch {
	case w.Pct != 0 && len(w.Reasons) > 0:
		s += fmt.Sprintf("at %.0f MHz (%s) against %.0f MHz at the ends (%+.1f%%)", w.MHz, strings.Join(w.Reasons, ", "), w.EndMHz, w.Pct)
	case w.Pct != 0:
		s += fmt.Sprintf("at %.0f MHz against %.0f MHz at the ends (%+.1f%%)", w.MHz, w.EndMHz, w.Pct)
	default:
		s += fmt.Sprintf("throttled (%s), which neither end was", strings.Join(w.Reasons, ", "))
	}
	return s + ": its values may be the machine's, not the code's"
}

// Change is the effect the warning states: Pct [LoPct, HiPct].
func (w Warning) Change() Effect {
	return Effect{Pct: w.Pct, Interval: Interval{Lo: w.LoPct, Hi: w.HiPct}}
}

// effect is the warning's Change ("-21.0% [-23.4%, -18.6%]"), or Pct
// alone when an older perfbot stored no interval.
func (w Warning) effect() string {
	if w.LoPct == 0 && w.HiPct == 0 {
		return fmt.Sprintf("%+.1f%%", w.Pct)
	}
	return w.Change().String()
}

// Command is the perfbot command line that searches what a
// WarnOtherDirection found: the same ends, metric in the other direction
// ("perfbot bisect --good a1b2c3d4e5 --bad 9e8d7c6b5a --metric
// verify_tok_s --direction regression"); "" for another kind.
func (w Warning) Command(metric string) string {
	if w.Kind != WarnOtherDirection {
		return ""
	}
	return fmt.Sprintf("perfbot bisect --good %s --bad %s --metric %s --direction %s", ShortHash(w.From), ShortHash(w.To), metric, w.Direction)
}

// OtherDirection returns the WarnOtherDirection among ws, and false when
// there is none.
func OtherDirection(ws []Warning) (Warning, bool) {
	for _, w := range ws {
		if w.Kind == WarnOtherDirection {
			return w, true
		}
	}
	return Warning{}, false
}
