package bisect_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/record"
)

func changeAt(at int, factor float64) bisecttest.Change {
	return bisecttest.Change{At: at, Factor: factor}
}

// trials runs Bisect over seeds of one history and returns the results.
func trials(t *testing.T, h *bisecttest.History, opts bisect.Options, n int) []*bisect.Result {
	t.Helper()
	var out []*bisect.Result
	for seed := range n {
		res, err := bisect.Bisect(context.Background(), h.Chain(), h.Oracle(int64(seed)+1), opts)
		require.NoError(t, err, "seed %d", seed)
		out = append(out, res)
	}
	return out
}

// culpritIndices returns the indices of a result's culprits.
func culpritIndices(res *bisect.Result) []int {
	var out []int
	for _, c := range res.Culprits {
		out = append(out, c.Index)
	}
	return out
}

// TestBisectScenarios runs named histories over several seeds and states
// the accuracy and cost each must reach. The figures are far from the
// simulation's (cmd/bench-bisect) so that the test is stable, yet tight
// enough that a broken search fails them.
func TestBisectScenarios(t *testing.T) {
	tests := []struct {
		name    string
		history bisecttest.History
		opts    bisect.Options
		seeds   int
		// want is the culprit set, or nil for "not reproduced".
		want     []int
		minRight int     // seeds that must give exactly want
		maxRuns  float64 // mean values requested, at most
	}{
		{
			name:     "culprit found",
			history:  bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(40, 0.95)}},
			seeds:    20,
			want:     []int{40},
			minRight: 19,
			maxRuns:  45,
		},
		{
			name:     "regression already at the oldest commit",
			history:  bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(1, 0.95)}},
			seeds:    10,
			want:     []int{1},
			minRight: 10,
			maxRuns:  45,
		},
		{
			name:     "regression at the newest commit",
			history:  bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(64, 0.95)}},
			seeds:    10,
			want:     []int{64},
			minRight: 10,
			maxRuns:  45,
		},
		{
			name:     "two culprits in one range",
			history:  bisecttest.History{Len: 65, CV: 0.01, Changes: []bisecttest.Change{changeAt(20, 0.95), changeAt(45, 0.95)}},
			seeds:    10,
			want:     []int{20, 45},
			minRight: 9,
			maxRuns:  120,
		},
		{
			// The commits between the two drops sit at a level between
			// the ends'; the single-change search takes them for one
			// side and places its culprit where the runs hide the other
			// drop.
			name:     "two 3% drops in 256 commits at 2% noise",
			history:  bisecttest.History{Len: 257, CV: 0.02, Changes: []bisecttest.Change{changeAt(70, 0.97), changeAt(190, 0.97)}},
			seeds:    40,
			want:     []int{70, 190},
			minRight: 28,
			maxRuns:  200,
		},
		{
			name:     "not reproduced",
			history:  bisecttest.History{Len: 65, CV: 0.02},
			seeds:    10,
			want:     nil,
			minRight: 10,
			maxRuns:  90,
		},
		{
			name:     "change smaller than the minimum effect",
			history:  bisecttest.History{Len: 65, CV: 0.005, Changes: []bisecttest.Change{changeAt(30, 0.995)}},
			seeds:    5,
			want:     nil,
			minRight: 5,
			maxRuns:  60,
		},
		{
			name:     "improvement searched as improvement",
			history:  bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(17, 1.05)}},
			opts:     bisect.Options{Direction: record.Improvement},
			seeds:    10,
			want:     []int{17},
			minRight: 10,
			maxRuns:  45,
		},
		{
			name:     "improvement is not a regression",
			history:  bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(17, 1.05)}},
			seeds:    10,
			want:     nil,
			minRight: 10,
			maxRuns:  60,
		},
		{
			name:     "latency regression (lower is better)",
			history:  bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(33, 1.05)}},
			opts:     bisect.Options{Better: record.Lower},
			seeds:    10,
			want:     []int{33},
			minRight: 10,
			maxRuns:  45,
		},
		{
			name:     "K=4 parallel probes",
			history:  bisecttest.History{Len: 257, CV: 0.02, Changes: []bisecttest.Change{changeAt(100, 0.95)}},
			opts:     bisect.Options{Parallel: 4},
			seeds:    10,
			want:     []int{100},
			minRight: 10,
			maxRuns:  70,
		},
		{
			name: "5% of runs slow by 5σ",
			history: bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(23, 0.95)},
				OutlierRate: 0.05, OutlierShift: -5},
			seeds:    20,
			want:     []int{23},
			minRight: 18,
			maxRuns:  60,
		},
		{
			name: "host speed wanders (drift twice the run noise)",
			history: bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(37, 0.95)},
				DriftSD: 0.04, DriftCorr: 0.9},
			seeds:    20,
			want:     []int{37},
			minRight: 16,
			maxRuns:  200,
		},
		{
			name: "host speed wanders, 256 commits",
			history: bisecttest.History{Len: 257, CV: 0.02, Changes: []bisecttest.Change{changeAt(150, 0.95)},
				DriftSD: 0.04, DriftCorr: 0.9},
			seeds:    20,
			want:     []int{150},
			minRight: 20,
			maxRuns:  80,
		},
		{
			name:     "high noise",
			history:  bisecttest.History{Len: 65, CV: 0.05, Changes: []bisecttest.Change{changeAt(50, 0.95)}},
			seeds:    10,
			want:     []int{50},
			minRight: 9,
			maxRuns:  200,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			right, runs := 0, 0
			for _, res := range trials(t, &tt.history, tt.opts, tt.seeds) {
				runs += res.Samples
				got := culpritIndices(res)
				switch {
				case tt.want == nil && res.Verdict == record.OutcomeNotReproduced:
					right++
				case tt.want != nil && res.Verdict == record.OutcomeCulprit && assert.ObjectsAreEqual(tt.want, got):
					right++
				default:
					t.Logf("verdict %s culprits %v warnings %q", res.Verdict, got, res.Warnings)
				}
			}
			t.Logf("%d right of %d, %.1f runs", right, tt.seeds, float64(runs)/float64(tt.seeds))
			assert.GreaterOrEqual(t, right, tt.minRight, "exact answers out of %d", tt.seeds)
			assert.LessOrEqual(t, float64(runs)/float64(tt.seeds), tt.maxRuns, "mean runs")
		})
	}
}

// TestBisectOtherDirection: a regression searched as an improvement (and
// the reverse) is not_reproduced, and the result says which way the ends
// do differ, by how much, and how to search for it.
func TestBisectOtherDirection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change float64
		opts   bisect.Options
		want   record.Direction
	}{
		{"an improvement searched as a regression", 1.08, bisect.Options{}, record.Improvement},
		{"a regression searched as an improvement", 0.92, bisect.Options{Direction: record.Improvement}, record.Regression},
		{"a latency regression searched as an improvement", 1.08, bisect.Options{Direction: record.Improvement, Better: record.Lower}, record.Regression},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := bisecttest.History{Len: 33, CV: 0.02, Changes: []bisecttest.Change{changeAt(17, tc.change)}}
			for _, res := range trials(t, &h, tc.opts, 3) {
				require.Equal(t, record.OutcomeNotReproduced, res.Verdict)
				var w *record.Warning
				for i := range res.Warnings {
					if res.Warnings[i].Kind == record.WarnOtherDirection {
						w = &res.Warnings[i]
					}
				}
				require.NotNil(t, w, "warnings %q", res.Warnings)
				assert.Equal(t, tc.want, w.Direction)
				assert.InDelta(t, (tc.change-1)*100, w.Pct, 3)
				// The effect comes with its interval, which holds it and
				// excludes no change.
				assert.True(t, w.LoPct <= w.Pct && w.Pct <= w.HiPct, "%+v", *w)
				assert.True(t, w.LoPct > 0 || w.HiPct < 0, "%+v", *w)
				assert.Contains(t, w.String(), "the other way: "+map[record.Direction]string{record.Regression: "a regression of ", record.Improvement: "an improvement of "}[tc.want])
				assert.Contains(t, w.String(), "--direction "+string(tc.want))
				assert.Equal(t, "perfbot bisect --good "+record.ShortHash(w.From)+" --bad "+record.ShortHash(w.To)+" --metric m --direction "+string(tc.want), w.Command("m"))
			}
		})
	}
}

// TestBisectHostLevels runs histories whose host jumps between two speeds
// every few runs, as a shared machine does when a neighbour's job takes it
// for a while and leaves it again (1017 and 705 tok/s in issue 19, a 31%
// drop, six times the change searched for). Runs of one commit then fall
// into two clusters, and its outlier screen once left ends without a value
// and the search without a posterior. No accuracy is claimed on such a
// host: every search must end, within its budget, with a verdict, and one
// that names no culprit must say why.
func TestBisectHostLevels(t *testing.T) {
	levels := []float64{1, 705.0 / 1017}
	tests := []struct {
		name    string
		history bisecttest.History
		opts    bisect.Options
		seeds   int
	}{
		{
			name: "jumps every 8 runs, ends at 12 runs (issue 19)",
			history: bisecttest.History{Len: 32, Base: 1017, CV: 0.005, Changes: []bisecttest.Change{changeAt(20, 0.95)},
				HostLevels: levels, HostEvery: 8},
			opts:  bisect.Options{InitialRuns: 12},
			seeds: 10,
		},
		{
			name: "four commits, jumps every 8 runs",
			history: bisecttest.History{Len: 4, Base: 1017, CV: 0.003, Changes: []bisecttest.Change{changeAt(3, 0.95)},
				HostLevels: levels, HostEvery: 8},
			opts:  bisect.Options{InitialRuns: 12},
			seeds: 10,
		},
		{
			name: "jumps every 5 runs",
			history: bisecttest.History{Len: 32, Base: 1017, CV: 0.01, Changes: []bisecttest.Change{changeAt(20, 0.95)},
				HostLevels: levels, HostEvery: 5},
			seeds: 10,
		},
		{
			name: "jumps every 3 runs, no change",
			history: bisecttest.History{Len: 32, Base: 1017, CV: 0.01,
				HostLevels: levels, HostEvery: 3},
			seeds: 10,
		},
		{
			name: "K=4 parallel probes, jumps every 8 runs",
			history: bisecttest.History{Len: 65, Base: 1017, CV: 0.005, Changes: []bisecttest.Change{changeAt(40, 0.95)},
				HostLevels: levels, HostEvery: 8},
			opts:  bisect.Options{Parallel: 4, InitialRuns: 12},
			seeds: 10,
		},
	}
	explained := []record.WarningKind{record.WarnBudgetSpent, record.WarnNoValues, record.WarnEndsUndecided}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maxRuns := cmp.Or(tt.opts.MaxRuns, bisect.DefaultMaxRuns)
			verdicts := map[string]int{}
			for _, res := range trials(t, &tt.history, tt.opts, tt.seeds) {
				verdicts[fmt.Sprint(res.Verdict, culpritIndices(res))]++
				assert.LessOrEqual(t, res.Samples, maxRuns)
				if res.Verdict == record.OutcomeInconclusive {
					assert.True(t, slices.ContainsFunc(res.Warnings, func(w record.Warning) bool { return slices.Contains(explained, w.Kind) }),
						"an inconclusive search says why: %q", res.Warnings)
				}
			}
			t.Logf("verdicts (culprits) of %d seeds: %v", tt.seeds, verdicts)
		})
	}
}

// rewriteOracle rewrites every run of one commit that another oracle
// returns.
type rewriteOracle struct {
	bisect.Oracle
	commit  string
	rewrite func(bisect.Run) bisect.Run
}

func (o rewriteOracle) Samples(ctx context.Context, commit string, n int) ([]bisect.Run, error) {
	runs, err := o.Oracle.Samples(ctx, commit, n)
	if commit == o.commit {
		for i := range runs {
			runs[i] = o.rewrite(runs[i])
		}
	}
	return runs, err
}

// TestBisectNoValues gives an end runs none of which can be compared: the
// search measures the ends until the budget is spent and ends
// inconclusive, naming the ends that had no value. Runs of the bad end
// without a time leave the good end's runs with nothing beside them too.
func TestBisectNoValues(t *testing.T) {
	value := func(v float64) func(bisect.Run) bisect.Run {
		return func(r bisect.Run) bisect.Run { r.Value = v; return r }
	}
	tests := []struct {
		name    string
		commit  string
		rewrite func(bisect.Run) bisect.Run
		want    []string // the ends named
	}{
		{"the good end measures zero", "c0000", value(0), []string{"c0000"}},
		{"the good end measures a negative value", "c0000", value(-3), []string{"c0000"}},
		{"the bad end measures NaN", "c0016", value(math.NaN()), []string{"c0016"}},
		{"the bad end measures +Inf", "c0016", value(math.Inf(1)), []string{"c0016"}},
		{"the bad end's runs have no time", "c0016", func(r bisect.Run) bisect.Run { r.Seq = 0; return r }, []string{"c0000", "c0016"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &bisecttest.History{Len: 17, CV: 0.02, Changes: []bisecttest.Change{changeAt(9, 0.95)}}
			o := rewriteOracle{Oracle: h.Oracle(1), commit: tt.commit, rewrite: tt.rewrite}
			res, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{MaxRuns: 60})
			require.NoError(t, err)
			assert.Equal(t, record.OutcomeInconclusive, res.Verdict)
			assert.Equal(t, 60, res.Samples)
			assert.Contains(t, res.Warnings, record.Warning{Kind: record.WarnNoValues, From: "c0000", To: "c0016", Runs: 60, Commits: tt.want})
		})
	}
}

func TestBisectBrokenCommits(t *testing.T) {
	t.Run("culprit inside a broken block gives candidates", func(t *testing.T) {
		h := &bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(32, 0.95)},
			Broken: []bisecttest.Range{{From: 30, To: 33}}}
		res, err := bisect.Bisect(context.Background(), h.Chain(), h.Oracle(7), bisect.Options{})
		require.NoError(t, err)
		require.Equal(t, record.OutcomeCandidates, res.Verdict, "warnings %q", res.Warnings)
		assert.Equal(t, []string{"c0030", "c0031", "c0032", "c0033", "c0034"}, res.Candidates)
		assert.Empty(t, res.Culprits)
		assert.Equal(t, []string{"c0030", "c0031", "c0032", "c0033"}, res.Skipped, "every broken commit of the block was tried")
		for _, p := range res.Probes {
			if h.IsBroken(p.Index) {
				assert.Equal(t, bisect.StatusBroken, p.Status)
			}
		}
	})
	t.Run("broken commits away from the culprit are skipped", func(t *testing.T) {
		h := &bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(45, 0.95)},
			Broken: []bisecttest.Range{{From: 30, To: 34}}}
		res, err := bisect.Bisect(context.Background(), h.Chain(), h.Oracle(3), bisect.Options{})
		require.NoError(t, err)
		require.Equal(t, record.OutcomeCulprit, res.Verdict)
		assert.Equal(t, []int{45}, culpritIndices(res))
		for _, c := range res.Skipped {
			assert.Contains(t, []string{"c0030", "c0031", "c0032", "c0033", "c0034"}, c)
		}
	})
	t.Run("broken end", func(t *testing.T) {
		h := &bisecttest.History{Len: 9, CV: 0.02, Broken: []bisecttest.Range{{From: 8, To: 8}}}
		_, err := bisect.Bisect(context.Background(), h.Chain(), h.Oracle(1), bisect.Options{})
		require.ErrorIs(t, err, record.ErrBroken)
		assert.False(t, record.IsInfra(err))
	})
}

// TestBisectInfraError: a commit whose runs fail on the infrastructure
// more than two times in three is skipped, not judged (as syzbot skips
// it); one that fails less often is tried again and judged; an end that
// fails so, or a failure of no known kind, ends the search.
func TestBisectInfraError(t *testing.T) {
	base := bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(40, 0.95)}}
	for _, tc := range []struct {
		name        string
		infraAt     []int
		flaky       []bisecttest.FlakyInfra
		skipped     []string // skipped for infrastructure; nil: none
		culprit     string   // "": no single culprit
		candidates  []string
		errContains string // the search ends with an InfraError naming this
	}{
		{name: "middle commit always fails", infraAt: []int{32}, skipped: []string{"c0032"}, culprit: "c0040"},
		{name: "culprit fails one time in three", flaky: []bisecttest.FlakyInfra{{At: 40, Fail: 1, Of: 3}}, culprit: "c0040"},
		{name: "culprit fails one time in two", flaky: []bisecttest.FlakyInfra{{At: 40, Fail: 1, Of: 2}}, culprit: "c0040"},
		{name: "culprit fails three times in four", flaky: []bisecttest.FlakyInfra{{At: 40, Fail: 3, Of: 4}},
			skipped: []string{"c0040"}, candidates: []string{"c0040", "c0041"}},
		{name: "end always fails", infraAt: []int{64}, errContains: "c0064"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := base
			h.InfraAt, h.FlakyInfra = tc.infraAt, tc.flaky
			res, err := bisect.Bisect(context.Background(), h.Chain(), h.Oracle(1), bisect.Options{})
			if tc.errContains != "" {
				var infra *record.InfraError
				require.ErrorAs(t, err, &infra)
				assert.Contains(t, err.Error(), tc.errContains)
				assert.ErrorIs(t, err, bisecttest.ErrInfra)
				assert.NotErrorIs(t, err, record.ErrBroken)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.skipped, res.SkippedInfra)
			for _, c := range tc.skipped {
				assert.Contains(t, res.Skipped, c)
				i := slices.IndexFunc(res.Probes, func(p bisect.Probe) bool { return p.Commit == c })
				require.GreaterOrEqual(t, i, 0)
				assert.Equal(t, bisect.StatusInfra, res.Probes[i].Status)
			}
			kinds := warningKinds(res.Warnings)
			assert.Equal(t, len(tc.skipped) > 0, slices.Contains(kinds, record.WarnSkippedInfra), "warnings %v", res.Warnings)
			assert.NotContains(t, kinds, record.WarnSkipped, "nothing failed to build")
			if tc.culprit != "" {
				require.Equal(t, record.OutcomeCulprit, res.Verdict, "warnings %v", res.Warnings)
				assert.Equal(t, []int{40}, culpritIndices(res))
			}
			if tc.candidates != nil {
				assert.Equal(t, record.OutcomeCandidates, res.Verdict, "warnings %v", res.Warnings)
				assert.Equal(t, tc.candidates, res.Candidates)
			}
		})
	}
	t.Run("failure of no known kind", func(t *testing.T) {
		h := base
		o := failingOracle{Oracle: h.Oracle(1), commit: "c0032", err: errors.New("disk full")}
		_, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{})
		var infra *record.InfraError
		require.ErrorAs(t, err, &infra)
		assert.Contains(t, infra.Op, "c0032")
	})
}

// failingOracle fails every measurement of one commit with err.
type failingOracle struct {
	*bisecttest.Oracle
	commit string
	err    error
}

func (f failingOracle) Samples(ctx context.Context, commit string, n int) ([]bisect.Run, error) {
	if commit == f.commit {
		return nil, f.err
	}
	return f.Oracle.Samples(ctx, commit, n)
}

func warningKinds(ws []record.Warning) []record.WarningKind {
	var out []record.WarningKind
	for _, w := range ws {
		out = append(out, w.Kind)
	}
	return out
}

func TestBisectAnyDirection(t *testing.T) {
	h := &bisecttest.History{Len: 65, CV: 0.01, Changes: []bisecttest.Change{changeAt(15, 0.90), changeAt(50, 1.05)}}
	res, err := bisect.Bisect(context.Background(), h.Chain(), h.Oracle(2), bisect.Options{Direction: record.Any})
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, res.Verdict, "warnings %q", res.Warnings)
	require.Equal(t, []int{15, 50}, culpritIndices(res))
	assert.Equal(t, record.Regression, res.Culprits[0].Direction)
	assert.Equal(t, record.Improvement, res.Culprits[1].Direction)
	assert.InDelta(t, -10, res.Culprits[0].Effect.Pct, 1.5)
	assert.InDelta(t, 5, res.Culprits[1].Effect.Pct, 1.5)
}

func TestBisectResult(t *testing.T) {
	h := &bisecttest.History{Len: 33, CV: 0.02, Changes: []bisecttest.Change{changeAt(20, 0.95)}}
	o := h.Oracle(11)
	var events []bisect.ProbeEvent
	// The fields of a result, at a stricter confidence than the default.
	res, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{Confidence: 0.99, InitialRuns: 3, OnProbe: func(e bisect.ProbeEvent) {
		events = append(events, e)
	}})
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, res.Verdict)
	c := res.Culprits[0]
	assert.Equal(t, "c0020", c.Commit)
	assert.GreaterOrEqual(t, c.Confidence, 0.99)
	assert.InDelta(t, -5, c.Effect.Pct, 1.5)
	assert.Less(t, c.Effect.Lo, c.Effect.Pct)
	assert.Greater(t, c.Effect.Hi, c.Effect.Pct)
	assert.Equal(t, record.Regression, c.Direction)

	assert.Equal(t, "c0000", res.Good.Commit)
	assert.Equal(t, "c0032", res.Bad.Commit)
	assert.InDelta(t, 100, res.Good.Median, 2)
	assert.InDelta(t, 95, res.Bad.Median, 2)
	assert.Less(t, res.Good.Lo, res.Good.Median)
	assert.Greater(t, res.Good.Hi, res.Good.Median)

	assert.Equal(t, o.Runs(), res.Samples, "a fresh oracle measures exactly what was requested")
	require.NotEmpty(t, events)
	assert.Equal(t, res.Samples, events[len(events)-1].Samples)
	assert.Equal(t, bisect.PhaseVerify, events[0].Phase)
	for i, p := range res.Probes {
		if i > 0 {
			assert.Less(t, res.Probes[i-1].Index, p.Index, "probes are in chain order")
		}
		switch {
		case p.Index < 20:
			assert.Equal(t, "good", p.Side, p.Commit)
		default:
			assert.Equal(t, "bad", p.Side, p.Commit)
		}
	}
}

// TestBisectCachedRuns states which recorded runs count. Runs the oracle
// holds from an earlier search that took them side by side (a rerun of the
// same job) count and cost nothing; runs taken at another time with no run
// of another commit beside them — here 55 runs of the good end taken in a
// row while the host was 28% slower, or runs of unknown time — count in no
// comparison, and the search measures both ends again, interleaved.
func TestBisectCachedRuns(t *testing.T) {
	t.Run("a rerun costs nothing", func(t *testing.T) {
		h := &bisecttest.History{Len: 17, CV: 0.02, Changes: []bisecttest.Change{changeAt(9, 0.95)}}
		o := h.Oracle(5)
		first, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{})
		require.NoError(t, err)
		runs := o.Runs()
		again, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{})
		require.NoError(t, err)
		assert.Equal(t, culpritIndices(first), culpritIndices(again))
		assert.Equal(t, runs, o.Runs(), "every run the second search needs is recorded")
	})
	tests := []struct {
		name   string
		cached []bisecttest.Cached
		record []float64 // runs of the good end of unknown time
	}{
		{name: "good end cached in another host state", cached: []bisecttest.Cached{{At: 0, Runs: 55, Host: 0.72}}},
		{name: "bad end cached in another host state", cached: []bisecttest.Cached{{At: 32, Runs: 40, Host: 1.3}}},
		{name: "runs of unknown time", record: []float64{70, 71, 69, 70.5, 69.5, 70.2, 69.8, 70.1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			right := 0
			for seed := range int64(10) {
				h := &bisecttest.History{Len: 33, CV: 0.02, Changes: []bisecttest.Change{changeAt(20, 0.95)}, Cached: tt.cached}
				o := h.Oracle(seed)
				require.NoError(t, o.Record("c0000", tt.record...))
				res, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{})
				require.NoError(t, err)
				if assert.ObjectsAreEqual([]int{20}, culpritIndices(res)) {
					right++
				}
				stale := len(tt.record)
				for _, c := range tt.cached {
					stale += c.Runs
				}
				assert.Contains(t, res.Warnings, record.Warning{Kind: record.WarnStaleRuns, Count: stale}, "seed %d", seed)
				assert.Equal(t, o.Runs(), res.Samples)
				assert.InDelta(t, 100, res.Good.Median, 2.5, "the good end's summary holds the runs that count")
				assert.Less(t, res.Good.N, 20)
			}
			assert.GreaterOrEqual(t, right, 9)
		})
	}
}

// concurrentOracle records how many requests were in flight at once.
type concurrentOracle struct {
	bisect.Oracle
	inFlight, most atomic.Int32
	mu             sync.Mutex
	active         map[string]bool
	sameCommit     bool
}

func (o *concurrentOracle) Samples(ctx context.Context, commit string, n int) ([]bisect.Run, error) {
	o.mu.Lock()
	if o.active[commit] {
		o.sameCommit = true
	}
	o.active[commit] = true
	o.mu.Unlock()
	cur := o.inFlight.Add(1)
	for {
		m := o.most.Load()
		if cur <= m || o.most.CompareAndSwap(m, cur) {
			break
		}
	}
	v, err := o.Oracle.Samples(ctx, commit, n)
	o.inFlight.Add(-1)
	o.mu.Lock()
	delete(o.active, commit)
	o.mu.Unlock()
	return v, err
}

func TestBisectParallel(t *testing.T) {
	h := &bisecttest.History{Len: 257, CV: 0.02, Changes: []bisecttest.Change{changeAt(77, 0.95)}}
	o := &concurrentOracle{Oracle: h.Oracle(9), active: map[string]bool{}}
	res, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{Parallel: 4})
	require.NoError(t, err)
	assert.Equal(t, []int{77}, culpritIndices(res))
	assert.False(t, o.sameCommit, "one commit is never measured twice at once")
	// Every request may finish before the next starts; the rounds still
	// ask for distinct commits, which is what sameCommit checks.
	assert.LessOrEqual(t, o.most.Load(), int32(4))
}

func TestBisectCancelled(t *testing.T) {
	h := &bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(40, 0.95)}}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := bisect.Bisect(ctx, h.Chain(), h.Oracle(1), bisect.Options{OnProbe: func(bisect.ProbeEvent) {
		if calls++; calls == 15 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, record.IsInfra(err), "a cancelled job is not an infrastructure failure")
}

func TestBisectBudget(t *testing.T) {
	h := &bisecttest.History{Len: 1025, CV: 0.05, Changes: []bisecttest.Change{changeAt(600, 0.95)}}
	res, err := bisect.Bisect(context.Background(), h.Chain(), h.Oracle(1), bisect.Options{MaxRuns: 40})
	require.NoError(t, err)
	assert.Equal(t, record.OutcomeInconclusive, res.Verdict)
	assert.LessOrEqual(t, res.Samples, 40)
	assert.NotEmpty(t, res.Warnings)
}

func TestBisectBadInput(t *testing.T) {
	h := &bisecttest.History{Len: 5, CV: 0.02}
	o := h.Oracle(1)
	tests := []struct {
		name  string
		chain []string
		opts  bisect.Options
		msg   string
	}{
		{"one commit", []string{"c0000"}, bisect.Options{}, "good and a bad"},
		{"duplicate commit", []string{"c0000", "c0001", "c0000"}, bisect.Options{}, "twice"},
		{"empty commit", []string{"c0000", ""}, bisect.Options{}, "empty"},
		{"confidence", h.Chain(), bisect.Options{Confidence: 1.5}, "confidence"},
		{"metric direction", h.Chain(), bisect.Options{Better: "up"}, "metric direction"},
		{"search direction", h.Chain(), bisect.Options{Direction: "sideways"}, "search direction"},
		{"initial runs", h.Chain(), bisect.Options{InitialRuns: 1}, "initial runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bisect.Bisect(context.Background(), tt.chain, o, tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	assert.Zero(t, o.Runs(), "bad input measures nothing")
}

// TestBisectDelta checks the effect estimate and its interval against the
// truth over a few seeds.
func TestBisectDelta(t *testing.T) {
	h := &bisecttest.History{Len: 33, CV: 0.02, Changes: []bisecttest.Change{changeAt(12, 0.9)}}
	want := 100 * (0.9 - 1)
	covered := 0
	for seed := range 10 {
		res, err := bisect.Bisect(context.Background(), h.Chain(), h.Oracle(int64(seed)), bisect.Options{})
		require.NoError(t, err)
		require.Len(t, res.Culprits, 1)
		c := res.Culprits[0]
		assert.InDelta(t, want, c.Effect.Pct, 3, "seed %d", seed)
		assert.Less(t, c.Effect.Lo, c.Effect.Pct)
		assert.Greater(t, c.Effect.Hi, c.Effect.Pct)
		if c.Effect.Lo <= want && want <= c.Effect.Hi {
			covered++
		}
	}
	// A 95% interval misses now and then; with adaptive sampling a little
	// more often.
	assert.GreaterOrEqual(t, covered, 8)
}

// Ends that differ by a little (1.5% at 6% noise a run, below MinEffect)
// take many runs to be called the same; expecting a change of 9% (a
// nightly alert's), they are called the same once half of it is excluded:
// over 10 seeds 344 runs instead of 567.
func TestExpectedEffectEndsTheVerifySooner(t *testing.T) {
	runs := func(seed int64, expected float64) (record.Outcome, int) {
		h := bisecttest.History{Len: 9, CV: 0.06, Changes: []bisecttest.Change{changeAt(4, 1.015)}}
		o := h.Oracle(seed)
		res, err := bisect.Locate(context.Background(), h.Chain(), o, bisect.Options{Confidence: 0.95, MaxRuns: 150, Expected: expected})
		require.NoError(t, err)
		return res.Verdict, o.Runs()
	}
	var plain, expected int
	for seed := range int64(10) {
		_, n := runs(seed, 0)
		v, m := runs(seed, 0.09)
		require.Equal(t, record.OutcomeNotReproduced, v, "seed %d", seed)
		plain, expected = plain+n, expected+m
	}
	t.Logf("10 seeds: %d runs without Expected, %d expecting 9%%", plain, expected)
	require.Less(t, 10*expected, 7*plain)
}

// TestChanceDifferenceStartsNoSearch: on a quiet host with nothing
// changed, the ends now and then differ by chance by about the minimum
// effect; shown only to exceed zero, such a difference starts a search
// that ends only once the ends are measured enough to be called the same.
// The end verification asks for the change beyond half the minimum effect.
func TestChanceDifferenceStartsNoSearch(t *testing.T) {
	h := bisecttest.History{Len: 257, CV: 0.02}
	runs, searched := 0, 0
	for _, res := range trials(t, &h, bisect.Options{}, 100) {
		require.Equal(t, record.OutcomeNotReproduced, res.Verdict)
		runs += res.Samples
		if len(res.Probes) > 2 {
			searched++
		}
	}
	t.Logf("100 seeds: %d runs, %d searches started", runs, searched)
	assert.LessOrEqual(t, searched, 10, "searches started for nothing")
	assert.LessOrEqual(t, runs, 2600, "runs")
}
