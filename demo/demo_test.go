package demo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/testbed"
)

var (
	commitA = strings.Repeat("a", 40)
	commitB = strings.Repeat("b", 40)
)

// regressionAt is a ground-truth regression at commit whose effect is
// carried by lines 40..43 of engine/attention/tiled.go.
func regressionAt(id, commit string) testbed.Change {
	return testbed.Change{ID: id, Kind: testbed.Regression, Commit: commit, Effects: map[string]float64{testbed.VerifyTokS: -8},
		Hunk: &testbed.Hunk{File: "engine/attention/tiled.go", Function: "(*tiled).Extend", Component: "attention", Start: 40, Lines: 4}}
}

// found is a finding whose culprit is commit, with one hunk at the lines.
func found(commit string, file string, start, lines int) *record.Finding {
	f := &record.Finding{Metric: testbed.VerifyTokS, Direction: record.Regression, Components: []string{"attention"},
		Culprits: []record.Culprit{{Commit: record.Commit{Hash: commit}, Confidence: 0.998, Effect: record.Effect{Pct: -7.9}}}}
	if file != "" {
		f.Culprits[0].Hunks = []record.Hunk{{File: file, Function: "(*tiled).Extend", NewStart: start, NewLines: lines}}
	}
	return f
}

func TestRows(t *testing.T) {
	tests := []struct {
		name     string
		changes  []testbed.Change
		findings []*record.Finding
		want     []string // Row.Match of each row
	}{
		{
			name:     "found with its hunk",
			changes:  []testbed.Change{regressionAt("a", commitA)},
			findings: []*record.Finding{found(commitA, "engine/attention/tiled.go", 38, 4)},
			want:     []string{MatchCommitAndHunk},
		},
		{
			name:     "found, but another hunk",
			changes:  []testbed.Change{regressionAt("a", commitA)},
			findings: []*record.Finding{found(commitA, "engine/attention/tiled.go", 90, 3)},
			want:     []string{MatchCommit},
		},
		{
			name:     "found without a hunk search",
			changes:  []testbed.Change{regressionAt("a", commitA)},
			findings: []*record.Finding{found(commitA, "", 0, 0)},
			want:     []string{MatchCommit},
		},
		{
			name:    "found, not confirmed",
			changes: []testbed.Change{regressionAt("a", commitA)},
			findings: []*record.Finding{func() *record.Finding {
				f := found(commitA, "engine/attention/tiled.go", 40, 4)
				f.Unconfirmed = "fresh runs give -0.2%"
				return f
			}()},
			want: []string{MatchCommitAndHunk + ", not confirmed: kept"},
		},
		{
			name:    "unexpected, changing no code: kept",
			changes: []testbed.Change{regressionAt("a", commitA)},
			findings: []*record.Finding{found(commitA, "", 0, 0), func() *record.Finding {
				f := found(commitB, "", 0, 0)
				f.Culprits[0].NoCodeChange = true
				return f
			}()},
			want: []string{MatchCommit, MatchUnexpected + ", no code changed: kept"},
		},
		{
			name:    "found by two metrics: the filed finding with its hunk shows",
			changes: []testbed.Change{regressionAt("a", commitA)},
			findings: []*record.Finding{func() *record.Finding {
				f := found(commitA, "engine/attention/tiled.go", 40, 4)
				f.Issue = 3
				return f
			}(), func() *record.Finding {
				f := found(commitA, "", 0, 0)
				f.Direction = record.Improvement
				return f
			}()},
			want: []string{MatchCommitAndHunk},
		},
		{
			name:    "missed",
			changes: []testbed.Change{regressionAt("a", commitA)},
			want:    []string{MatchMissed},
		},
		{
			name:    "no effect expected, none found",
			changes: []testbed.Change{{ID: "e", Kind: testbed.NonRuntime, Commit: commitA, Effects: map[string]float64{testbed.VerifyTokS: 0}}},
			want:    []string{MatchNoEffectExpected},
		},
		{
			name:     "unexpected",
			changes:  []testbed.Change{regressionAt("a", commitA)},
			findings: []*record.Finding{found(commitA, "engine/attention/tiled.go", 40, 4), found(commitB, "engine/moe/router.go", 10, 2)},
			want:     []string{MatchCommitAndHunk, MatchUnexpected},
		},
		{
			name:     "unexpected, where no effect was expected",
			changes:  []testbed.Change{{ID: "e", Kind: testbed.NonRuntime, Commit: commitA}},
			findings: []*record.Finding{found(commitB, "", 0, 0)},
			want:     []string{MatchNoEffectExpected, MatchUnexpected},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := compareWithManifest(&testbed.Manifest{Changes: tt.changes}, tt.findings, testbed.VerifyCost)
			var got []string
			for _, r := range rows {
				got = append(got, r.Match())
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// An improvement that no bisection named but that lies in the range of
// an improvement alert the nights only noted (detect.improvements: note;
// the range its job would have bisected, where the alert records one)
// says so, with the night; one outside every noted range stays missed, a
// found change is left as found, and the other changes in a noted range
// are not its.
func TestMarkNoted(t *testing.T) {
	var chain []record.Commit
	for _, c := range "0123456789" {
		chain = append(chain, record.Commit{Hash: strings.Repeat(string(c), 40)})
	}
	hash := func(i int) string { return chain[i].Hash }
	rows := []Row{
		{Change: "d", Kind: "improvement", TrueCommit: hash(5), IntendedPct: 11},
		{Change: "x", Kind: "improvement", TrueCommit: hash(2), IntendedPct: 5},
		{Change: "a", Kind: "regression", TrueCommit: hash(6), IntendedPct: -8, FoundCommit: hash(6), CommitMatch: true},
		{Change: "c", Kind: "regression", TrueCommit: hash(4), IntendedPct: -5},
		{Change: "g", Kind: "non_runtime", TrueCommit: hash(7)},
		{Change: "y", Kind: "improvement", TrueCommit: hash(9), IntendedPct: 6},
	}
	alerts := []record.Alert{
		// The range of the likeliest nights ends a commit before y's; the
		// range its job would have bisected holds it.
		{Night: 33, Direction: record.Improvement, Decision: record.DecisionNoted, Good: hash(7), Bad: hash(8),
			Unbisected: &record.Range{Good: hash(6), Bad: hash(9)}},
		{Night: 31, Direction: record.Improvement, Decision: record.DecisionNoted, Good: hash(3), Bad: hash(7)},
		{Night: 30, Direction: record.Improvement, Decision: record.DecisionNoted, Good: hash(4), Bad: hash(5)},
		// An improvement bisected, and one the nights found transient:
		// neither is a noted one.
		{Night: 20, Direction: record.Improvement, Decision: record.DecisionAct, Good: hash(1), Bad: hash(2), Job: "alert-1"},
		{Night: 21, Direction: record.Improvement, Decision: record.DecisionTransient, Good: hash(1), Bad: hash(3)},
	}
	markNoted(rows, alerts, chain)
	var got []string
	for _, r := range rows {
		got = append(got, r.Match())
	}
	// The regression and the commit meant to change nothing lie in the
	// noted range too, but an improvement alert is not about them.
	require.Equal(t, []string{MatchNoted, MatchMissed, MatchCommit, MatchMissed, MatchNoEffectExpected, MatchNoted}, got)
	require.Equal(t, uint64(30), rows[0].Night, "the earliest night that noted it")
	require.Zero(t, rows[1].Night)
	require.Equal(t, uint64(33), rows[5].Night)
}

func TestRowFields(t *testing.T) {
	f := found(commitA, "engine/attention/tiled.go", 40, 4)
	f.Issue = 3
	rows := compareWithManifest(&testbed.Manifest{Changes: []testbed.Change{regressionAt("a", commitA)}}, []*record.Finding{f}, testbed.VerifyCost)
	require.Equal(t, []Row{{
		Change: "a", Kind: "regression", TrueCommit: commitA, IntendedPct: -8, TrueHunk: "engine/attention/tiled.go::(*tiled).Extend",
		FoundCommit: commitA, FoundHunk: "engine/attention/tiled.go::(*tiled).Extend", Component: "attention",
		DeltaPct: -7.9, Confidence: 0.998, CommitMatch: true, HunkMatch: true, Issue: "#3",
	}}, rows)
}

// A missed change shows its intended effect on the metric the nights
// follow, a found one on the metric it was found by.
func TestRowIntendedEffect(t *testing.T) {
	c := regressionAt("c", commitA)
	c.Effects[testbed.VerifyCost] = 4.7
	rows := compareWithManifest(&testbed.Manifest{Changes: []testbed.Change{c}}, nil, testbed.VerifyCost)
	require.Equal(t, 4.7, rows[0].IntendedPct, "missed: the primary metric's")
	rows = compareWithManifest(&testbed.Manifest{Changes: []testbed.Change{c}}, []*record.Finding{found(commitA, "", 0, 0)}, testbed.VerifyCost)
	require.Equal(t, -8.0, rows[0].IntendedPct, "found on verify_tok_s: that metric's")
	rows = compareWithManifest(&testbed.Manifest{Changes: []testbed.Change{regressionAt("d", commitB)}}, nil, testbed.VerifyCost)
	require.Equal(t, -8.0, rows[0].IntendedPct, "no effect given on the primary metric: verify_tok_s's")
}
