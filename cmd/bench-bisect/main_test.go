package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/bisect/bisecttest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunPrintsTable(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-trials", "8", "-workers", "2", "-rows", "N=64 CV=2% 5% drop"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// The plain search row with its four strategies (the known-levels
	// floor among them), the cached variant with three, and the whole
	// job; then the targets table with the whole job's row.
	require.Len(t, lines, 2+2+4+3+1+4, out.String())
	assert.Equal(t, "| scenario | strategy | accuracy | mean runs | p90 runs | mean rounds | mean builds | misses wrong/extra/short/none |", lines[2])
	for _, l := range lines[4:12] {
		assert.True(t, strings.HasPrefix(l, "| N=64 CV=2% 5% drop"), l)
	}
	assert.Contains(t, lines[5], "| plain k=10 | ")
	// Plain bisection costs k runs per probe and per end: 10 × (6+2), one
	// after another.
	assert.Contains(t, lines[5], "| 80.0 | 80 | 80.0 | 8.0 | ")
	assert.Contains(t, lines[7], "| known levels (floor) | ")
	assert.Contains(t, lines[11], ", whole job (CLI) | perfbot job | ")
	assert.Equal(t, "| scenario | perfbot | target | met |", lines[13])
	assert.Regexp(t, `^\| N=64 CV=2% 5% drop, whole job \(CLI\) \| [0-9.]+ runs, accuracy [0-9.]+ \| ≤ 18 runs \| (met|not met) \|$`, lines[15])
}

// TestTargetsNameRows: every target belongs to a row of the table, so
// that a renamed row cannot drop its target silently.
func TestTargetsNameRows(t *testing.T) {
	names := map[string]bool{}
	for _, sc := range scenarios() {
		names[sc.name] = true
	}
	for name := range targets {
		assert.True(t, names[name], "target of %q names no row", name)
	}
}

// TestTargetMet: a row meets its target only within both bounds.
func TestTargetMet(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    target
		s    summary
		want bool
	}{
		{"both within", target{maxRuns: 20, minAccuracy: 0.995}, summary{meanRuns: 19.9, accuracy: 0.996}, true},
		{"too many runs", target{maxRuns: 20, minAccuracy: 0.995}, summary{meanRuns: 20.1, accuracy: 1}, false},
		{"too few right", target{maxRuns: 20, minAccuracy: 0.995}, summary{meanRuns: 10, accuracy: 0.99}, false},
		{"runs only", target{maxRuns: 26}, summary{meanRuns: 25, accuracy: 0}, true},
		{"accuracy only", target{minAccuracy: 0.95}, summary{meanRuns: 500, accuracy: 0.94}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.t.met(tc.s))
		})
	}
}

// TestRunHostsRow: the row of four hosts of different speeds takes its
// runs in rounds of several at once.
func TestRunHostsRow(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-trials", "4", "-workers", "2", "-rows", "K=4 hosts 5% apart"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4+1, out.String())
	cells := strings.Split(lines[4], " | ")
	require.Len(t, cells, 8, lines[4])
	var runs, rounds float64
	_, err := fmt.Sscan(cells[3], &runs)
	require.NoError(t, err)
	_, err = fmt.Sscan(cells[5], &rounds)
	require.NoError(t, err)
	assert.Less(t, 2*rounds, runs, "rounds of several runs: %s", lines[4])
}

func TestRunBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-trials", "0"}, &out, &errOut))
	assert.Equal(t, 2, run(context.Background(), []string{"-nosuchflag"}, &out, &errOut))
}

func TestPinpointStatistics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	draw := func(n int, shift float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = shift + r.NormFloat64()
		}
		return out
	}
	a, b := draw(30, 0), draw(30, 2)
	assert.Less(t, ksPValue(a, b), 0.001)
	assert.Less(t, mwuPValue(a, b), 0.001)
	c := draw(30, 0)
	assert.Greater(t, ksPValue(a, c), 0.01)
	assert.Greater(t, mwuPValue(a, c), 0.01)
	assert.Equal(t, different, compare(a, b, 2))
	// The "same" threshold falls as the samples grow.
	assert.Greater(t, highThreshold(1, 10, 10), highThreshold(1, 40, 40))
}

// TestKnownLevels: told the levels and σ, the floor search finds the
// change; where every run is decisive (a 5% drop at 0.2% noise) it needs
// no more runs than halving the range, one run a probe, plus the commit
// beside the change; where runs are ambiguous it needs more.
func TestKnownLevels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cv      float64
		maxRuns int
	}{
		{"decisive runs", 0.002, 8},
		{"noisy runs", 0.02, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range int64(20) {
				at := 1 + int(seed*3)%63
				h := &bisecttest.History{Len: 65, CV: tc.cv, Changes: []bisecttest.Change{{At: at, Factor: drop5}}}
				out, err := runKnownLevels(context.Background(), h, h.Oracle(seed))
				require.NoError(t, err)
				if tc.cv < 0.01 {
					assert.Equal(t, []int{at}, out.culprits, "seed %d", seed)
				}
				assert.LessOrEqual(t, out.runs, tc.maxRuns, "seed %d", seed)
				assert.True(t, out.reproduced)
			}
		})
	}
}
