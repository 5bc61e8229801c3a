package record

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWarningString(t *testing.T) {
	const a, b = "0123456789abcdef0123", "fedcba9876543210fedc"
	tests := []struct {
		w    Warning
		want string
	}{
		{Warning{Kind: WarnOutliers, Count: 3}, "3 outlier runs were left out of the comparisons"},
		{Warning{Kind: WarnStaleRuns, Count: 55}, "55 recorded runs were taken at another time, with no run of another commit beside them, and were left out of the comparisons"},
		{Warning{Kind: WarnSkipped, Count: 2}, "2 commits do not build and were skipped"},
		{Warning{Kind: WarnEndsUndecided, From: a, To: b, Runs: 400}, "the ends 0123456789..fedcba9876 could not be told apart within 400 runs"},
		{Warning{Kind: WarnRangeDropped, From: a, To: b}, "the ends of 0123456789..fedcba9876 turned out not to differ; the range was dropped"},
		{Warning{Kind: WarnBudgetSpent, From: a, To: b, Runs: 400, Commit: b, P: 0.5}, "run budget (400) spent before 0123456789..fedcba9876 was resolved (most probable culprit fedcba9876, p=0.50)"},
		{Warning{Kind: WarnNoValues, From: a, To: b, Runs: 400, Commits: []string{a}}, "run budget (400) spent while the end 0123456789 of 0123456789..fedcba9876 had no run to compare (none a positive, finite value taken beside a run of another commit and kept by the outlier screen)"},
		{Warning{Kind: WarnNoValues, From: a, To: b, Runs: 60, Commits: []string{a, b}}, "run budget (60) spent while the ends 0123456789 and fedcba9876 of 0123456789..fedcba9876 had no run to compare (none a positive, finite value taken beside a run of another commit and kept by the outlier screen)"},
		{Warning{Kind: WarnSecondChange, From: a, To: b, Runs: 4, P: 0.42}, "a second change in 0123456789..fedcba9876 was not excluded (p=0.42 when its check had spent its budget, 4 more runs)"},
		{Warning{Kind: WarnSecondChange, From: a, To: b, Runs: 0, P: 0.63}, "a second change in 0123456789..fedcba9876 was not excluded (p=0.63 on the runs at hand; its check took none more, as the runs its budget allows could not decide it)"},
		{Warning{Kind: WarnHiddenChange, Commits: []string{a, b}}, "a further change hides among commits that do not build: 0123456789 fedcba9876"},
		{Warning{Kind: WarnHunksNotSearched, Commit: a, Text: "good and bad ends cannot be told apart"}, "the hunks of 0123456789 were not searched: good and bad ends cannot be told apart"},
		{Warning{Kind: WarnNote, Text: "3 of 24 runs were retried"}, "3 of 24 runs were retried"},
		{Warning{Kind: WarnUnconfirmed, Commit: b, Count: 6, Pct: -0.4, LoPct: -2.1, HiPct: 1.3},
			"culprit fedcba9876 not confirmed: 6 interleaved runs each of its parent and of it give -0.4% [-2.1%, +1.3%]"},
		{Warning{Kind: WarnOtherDirection, From: a, To: b, Direction: Regression, Pct: -21.0, LoPct: -21.9, HiPct: -20.1},
			"the ends 0123456789..fedcba9876 do not differ in the direction searched, but they do the other way: a regression of -21.0% [-21.9%, -20.1%]; search it with --direction regression (or any)"},
		{Warning{Kind: WarnOtherDirection, From: a, To: b, Direction: Improvement, Pct: 6.1},
			"the ends 0123456789..fedcba9876 do not differ in the direction searched, but they do the other way: an improvement of +6.1%; search it with --direction improvement (or any)"},
		{Warning{Kind: WarnSearchedAgain, Count: 1, Runs: 2}, "1 culprit(s) not confirmed; the range was searched 2 times"},
		{Warning{Kind: WarnUndecidedElements, Commits: []string{"h03"}}, "the effect of h03 could not be measured (their tests stayed undecided when measured again); they are not named"},
		{Warning{Kind: WarnGPUState, Commit: a, GPU: 3, MHz: 1410, EndMHz: 1980, Pct: -28.8, Reasons: []string{"HW slowdown"}},
			"probe 0123456789 met GPU 3 at 1410 MHz (HW slowdown) against 1980 MHz at the ends (-28.8%): its values may be the machine's, not the code's"},
		{Warning{Kind: WarnGPUState, Commit: a, MHz: 1420, EndMHz: 1980, Pct: -28.3},
			"probe 0123456789 met GPU 0 at 1420 MHz against 1980 MHz at the ends (-28.3%): its values may be the machine's, not the code's"},
		{Warning{Kind: WarnGPUState, Commit: a, MHz: 1965, Reasons: []string{"SW power cap"}},
			"probe 0123456789 met GPU 0 throttled (SW power cap), which neither end was: its values may be the machine's, not the code's"},
	}
	for _, tt := range tests {
		t.Run(string(tt.w.Kind), func(t *testing.T) {
			assert.Equal(t, tt.want, tt.w.String())
		})
	}
}

// TestMergeWarnings checks that counted kinds add up and other repeats go,
// without reading any text.
func TestMergeWarnings(t *testing.T) {
	second := Warning{Kind: WarnSecondChange, From: "a", To: "b", Runs: 3, P: 0.4}
	got := MergeWarnings(
		[]Warning{{Kind: WarnOutliers, Count: 2}, second},
		[]Warning{{Kind: WarnOutliers, Count: 3}, second, {Kind: WarnStaleRuns, Count: 55}},
		[]Warning{{Kind: WarnStaleRuns, Count: 5}},
	)
	assert.Equal(t, []Warning{{Kind: WarnOutliers, Count: 5}, second, {Kind: WarnStaleRuns, Count: 60}}, got)
	assert.Nil(t, MergeWarnings())
	assert.Nil(t, WarningStrings(nil))
	assert.Equal(t, []string{"5 outlier runs were left out of the comparisons"}, WarningStrings(got[:1]))
}
