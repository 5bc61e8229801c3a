package minimize_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

// drop is the simulated regression: 5% less of a higher-is-better metric.
var drop = math.Log(0.95)

// flat puts every element in one group.
func flat(ids []string) []minimize.Group {
	return []minimize.Group{{Name: "diff", Elements: ids}}
}

func TestIsolateOneCulprit(t *testing.T) {
	// Twenty seeded commits per size, the culprit hunk moving through the
	// commit. Every one must be found exactly, the bad end with it
	// reverted must measure good, and the configurations besides the two
	// ends must stay within log2(H)+2 on average (the simulation in
	// cmd/bench-ddmin gives log2(H)+1.5 on flat commits).
	for _, h := range []int{1, 8, 32} {
		t.Run(fmt.Sprintf("H=%d", h), func(t *testing.T) {
			const trials = 20
			tests := 0
			for seed := range uint64(trials) {
				culprit := int(seed*7) % h
				w := bisecttest.OneCulprit(h, culprit, drop, 0.02, seed)
				iso, err := minimize.Isolate(context.Background(), w, minimize.Options{
					Groups: flat(w.Elements),
					Better: record.Higher,
				})
				require.NoError(t, err, "seed %d", seed)
				require.Equal(t, []string{w.Elements[culprit]}, iso.Minimal, "seed %d", seed)
				assert.Equal(t, minimize.OutcomeBad, iso.AppliedOutcome, "seed %d", seed)
				assert.Equal(t, minimize.OutcomeGood, iso.RevertedOutcome, "seed %d", seed)
				assert.Equal(t, w.Configurations(), iso.Configurations, "seed %d", seed)
				assert.Equal(t, w.SamplesDrawn(), iso.Samples, "seed %d", seed)
				tests += iso.Configurations - 2
			}
			mean := float64(tests) / trials
			t.Logf("H=%d: %.2f configurations besides the ends on average", h, mean)
			assert.LessOrEqual(t, mean, math.Log2(float64(h))+2)
		})
	}
}

func TestIsolateEffects(t *testing.T) {
	w := bisecttest.OneCulprit(8, 5, drop, 0.02, 3)
	iso, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: flat(w.Elements)})
	require.NoError(t, err)
	require.Equal(t, []string{"h05"}, iso.Minimal)

	// Applying the hunk to the parent loses 5%; reverting it from the
	// culprit gains 1/0.95−1 = 5.26%. The intervals hold the true effects
	// and exclude no change.
	for _, m := range []struct {
		name string
		m    minimize.Effect
		want float64
	}{{"applied", iso.Applied, -5}, {"reverted", iso.Reverted, 100/0.95 - 100}} {
		assert.LessOrEqual(t, m.m.Lo, m.want, m.name)
		assert.GreaterOrEqual(t, m.m.Hi, m.want, m.name)
		assert.LessOrEqual(t, m.m.Lo, m.m.Pct, m.name)
		assert.GreaterOrEqual(t, m.m.Hi, m.m.Pct, m.name)
		assert.Positive(t, m.m.Lo*m.m.Hi, "%s: %+v", m.name, m.m)
	}
	assert.Positive(t, iso.Applied.N)
	assert.Positive(t, iso.Reverted.N)
}

func TestIsolatePairOnlyTogether(t *testing.T) {
	// Hunks 3 and 11 regress only together: each alone is good, so the
	// 1-minimal set is the pair, and both halves of it were measured good.
	for seed := range uint64(5) {
		w := bisecttest.Pair(16, 3, 11, drop, 0.02, seed)
		iso, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: flat(w.Elements)})
		require.NoError(t, err, "seed %d", seed)
		require.Equal(t, []string{"h03", "h11"}, iso.Minimal, "seed %d", seed)
		assert.Equal(t, minimize.OutcomeGood, iso.RevertedOutcome)
		assert.Equal(t, minimize.OutcomeGood, outcomeOf(iso, "h03"), "seed %d", seed)
		assert.Equal(t, minimize.OutcomeGood, outcomeOf(iso, "h11"), "seed %d", seed)
		assert.Equal(t, minimize.OutcomeBad, outcomeOf(iso, "h03", "h11"), "seed %d", seed)
	}
}

func TestIsolateNeedsDependency(t *testing.T) {
	// Hunk 5 is the culprit and does not build without hunk 12. It must be
	// reported with its dependency, and no configuration holding it
	// without hunk 12 may ever count as good.
	for _, tc := range []struct {
		name string
		deps map[string][]string
	}{
		{"dependency closure", map[string][]string{"h05": {"h12"}}},
		{"build failures only", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(5) {
				w := bisecttest.NeedsDependency(16, 5, 12, drop, 0.02, seed)
				iso, err := minimize.Isolate(context.Background(), w, minimize.Options{
					Groups: flat(w.Elements),
					Deps:   tc.deps,
				})
				require.NoError(t, err, "seed %d", seed)
				require.Equal(t, []string{"h05", "h12"}, iso.Minimal, "seed %d", seed)
				broken := 0
				for _, tt := range iso.Tests {
					if slices.Contains(tt.Set, "h05") && !slices.Contains(tt.Set, "h12") {
						assert.True(t, tt.Broken, "seed %d: %v", seed, tt.Set)
						assert.Equal(t, minimize.OutcomeUnresolved, tt.Outcome, "seed %d: %v", seed, tt.Set)
						broken++
					}
				}
				if tc.deps != nil {
					assert.Zero(t, broken, "closed configurations never leave the dependency out")
					assert.Empty(t, iso.Unresolved)
				}
			}
		})
	}
}

func TestIsolateFilesFirst(t *testing.T) {
	groups := []minimize.Group{
		{Name: "python/sglang/srt/layers/communicator.py", Elements: []string{"comm1", "comm2", "comm3"}},
		{Name: "python/sglang/srt/layers/attention/flashinfer_mla_backend.py", Elements: []string{"mla1", "mla2", "mla3", "mla4", "mla5"}},
		{Name: "python/sglang/srt/layers/moe/topk.py", Elements: []string{"topk1", "topk2"}},
		{Name: "python/sglang/srt/speculative/eagle_worker.py", Elements: []string{"eagle1", "eagle2", "eagle3", "eagle4"}},
	}
	var ids []string
	fileOf := map[string]int{}
	for g, grp := range groups {
		for _, e := range grp.Elements {
			ids = append(ids, e)
			fileOf[e] = g
		}
	}
	w := &bisecttest.SetWorld{Elements: ids, Effect: bisecttest.Shift(drop, "topk2"), CV: 0.02, Seed: 9}
	iso, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: groups})
	require.NoError(t, err)
	require.Equal(t, []string{"topk2"}, iso.Minimal)

	// The first split is along files: every file is in or out whole.
	first := iso.Tests[0].Set
	for g, grp := range groups {
		n := 0
		for _, e := range first {
			if fileOf[e] == g {
				n++
			}
		}
		assert.Contains(t, []int{0, len(grp.Elements)}, n, "file %s split in the first test %v", grp.Name, first)
	}
}

func TestIsolateEnvironment(t *testing.T) {
	good := map[string]string{
		"NCCL_PROTO":           "Simple",
		"NCCL_ALGO":            "Tree",
		"NCCL_P2P_LEVEL":       "NVL",
		"OMP_NUM_THREADS":      "8",
		"CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
	}
	bad := map[string]string{
		"NCCL_PROTO":           "LL",
		"NCCL_ALGO":            "Ring",
		"NCCL_P2P_LEVEL":       "SYS",
		"CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
	}
	names := minimize.EnvDiff(good, bad)
	require.Equal(t, []string{"NCCL_ALGO", "NCCL_P2P_LEVEL", "NCCL_PROTO", "OMP_NUM_THREADS"}, names)

	// The LL protocol costs 5% of the allreduce-bound throughput; the
	// other variables do not matter.
	w := &bisecttest.SetWorld{
		Elements: names,
		Effect: func(set map[string]bool) float64 {
			var applied []string
			for name := range set {
				applied = append(applied, name)
			}
			if minimize.EnvConfiguration(good, bad, applied)["NCCL_PROTO"] == "LL" {
				return drop
			}
			return 0
		},
		CV:   0.02,
		Seed: 4,
	}
	iso, err := minimize.Isolate(context.Background(), w, minimize.Options{
		Groups: []minimize.Group{{Name: "environment", Elements: names}},
		Better: record.Higher,
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"NCCL_PROTO"}, iso.Minimal)
	assert.Equal(t, minimize.OutcomeGood, iso.RevertedOutcome)
}

func TestIsolateOutliers(t *testing.T) {
	// One sample in twenty is 30% slow (a disturbed run); the comparison
	// screens them, so the culprit is still found exactly.
	for seed := range uint64(5) {
		w := bisecttest.OneCulprit(16, 9, drop, 0.02, seed)
		w.OutlierRate = 0.05
		iso, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: flat(w.Elements)})
		require.NoError(t, err, "seed %d", seed)
		assert.Equal(t, []string{"h09"}, iso.Minimal, "seed %d", seed)
	}
}

func TestIsolateReportsProgress(t *testing.T) {
	w := bisecttest.OneCulprit(8, 2, drop, 0.02, 1)
	var events []minimize.TestEvent
	iso, err := minimize.Isolate(context.Background(), w, minimize.Options{
		Groups: flat(w.Elements),
		OnTest: func(ev minimize.TestEvent) { events = append(events, ev) },
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(events), len(iso.Tests))
	for i := 1; i < len(events); i++ {
		assert.GreaterOrEqual(t, events[i].Samples, events[i-1].Samples)
	}
	last := events[len(events)-1]
	assert.Equal(t, iso.Configurations, last.Configurations)
	assert.Equal(t, iso.Samples, last.Samples)
	assert.Equal(t, iso.Tests[len(iso.Tests)-1], last.Test)
}

// flukeOracle makes the first runs of one configuration come out at the
// bad end's level, as a disturbed host would: a sequential test stops on
// them.
type flukeOracle struct {
	w     *bisecttest.SetWorld
	set   []string
	first int
}

var _ minimize.Oracle = flukeOracle{}

func (o flukeOracle) Samples(ctx context.Context, set []string, n int) ([]float64, error) {
	xs, err := o.w.Samples(ctx, set, n)
	if err == nil && slices.Equal(set, o.set) {
		for i := range min(o.first, len(xs)) {
			xs[i] = 95 + 0.1*float64(i)
		}
	}
	return xs, err
}

func TestIsolateOverturnsAFluke(t *testing.T) {
	// The first half of the commit is good, but its first three runs are
	// slow: its test says bad and the search narrows into it. Before the
	// search rests on that verdict, a replication on fresh runs overturns
	// it, and the search starts over and finds the real culprit.
	w := bisecttest.OneCulprit(8, 5, drop, 0.02, 1)
	half := w.Elements[:4]
	var log bytes.Buffer
	iso, err := minimize.Isolate(context.Background(), flukeOracle{w: w, set: half, first: 3},
		minimize.Options{Groups: flat(w.Elements), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	require.NoError(t, err)
	assert.Contains(t, log.String(), "verdict changed on confirmation")
	assert.Equal(t, []string{"h05"}, iso.Minimal)
	assert.Equal(t, minimize.OutcomeGood, outcomeOf(iso, half...))
	require.Equal(t, half, iso.Tests[0].Set)
	assert.Greater(t, iso.Tests[0].N, 3, "the verdict on the half was replicated")
}

// infraOracle fails with an infrastructure error once a configuration
// other than the ends is asked for.
type infraOracle struct{ w *bisecttest.SetWorld }

var _ minimize.Oracle = infraOracle{}

func (o infraOracle) Samples(ctx context.Context, set []string, n int) ([]float64, error) {
	if len(set) > 0 && len(set) < len(o.w.Elements) {
		return nil, &record.InfraError{Host: "gpu-3", Op: "measure parent+" + fmt.Sprint(set), Err: errors.New("unreachable")}
	}
	return o.w.Samples(ctx, set, n)
}

func TestIsolateErrors(t *testing.T) {
	ids := bisecttest.Hunks(4)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		oracle  minimize.Oracle
		opts    minimize.Options
		wantIs  error
		wantMsg string
	}{
		{
			name:   "ends alike",
			oracle: &bisecttest.SetWorld{Elements: ids, CV: 0.02, Seed: 1},
			opts:   minimize.Options{Groups: flat(ids)},
			wantIs: minimize.ErrEndsAlike,
		},
		{
			name:    "bad end better",
			oracle:  bisecttest.OneCulprit(4, 1, drop, 0.02, 1),
			opts:    minimize.Options{Groups: flat(ids), Better: record.Lower},
			wantIs:  minimize.ErrNotWorse,
			wantMsg: "not worse than the good end",
		},
		{
			name:   "infrastructure",
			oracle: infraOracle{bisecttest.OneCulprit(4, 1, drop, 0.02, 1)},
			opts:   minimize.Options{Groups: flat(ids)},
		},
		{
			name:   "good end broken",
			oracle: &bisecttest.SetWorld{Elements: ids, Broken: func(map[string]bool) bool { return true }},
			opts:   minimize.Options{Groups: flat(ids)},
			wantIs: record.ErrBroken,
		},
		{
			name:   "cancelled",
			ctx:    cancelled,
			oracle: bisecttest.OneCulprit(4, 1, drop, 0.02, 1),
			opts:   minimize.Options{Groups: flat(ids)},
			wantIs: context.Canceled,
		},
		{
			name:    "no elements",
			oracle:  bisecttest.OneCulprit(4, 1, drop, 0.02, 1),
			wantMsg: "Options.Groups is empty",
		},
		{
			name:    "element twice",
			oracle:  bisecttest.OneCulprit(4, 1, drop, 0.02, 1),
			opts:    minimize.Options{Groups: []minimize.Group{{Name: "a.go", Elements: ids}, {Name: "b.go", Elements: ids[:1]}}},
			wantMsg: `element "h00" appears twice`,
		},
		{
			name:    "unknown dependency",
			oracle:  bisecttest.OneCulprit(4, 1, drop, 0.02, 1),
			opts:    minimize.Options{Groups: flat(ids), Deps: map[string][]string{"h01": {"h09"}}},
			wantMsg: `element "h01" needs unknown element "h09"`,
		},
		{
			name:    "confidence",
			oracle:  bisecttest.OneCulprit(4, 1, drop, 0.02, 1),
			opts:    minimize.Options{Groups: flat(ids), Confidence: 1.5},
			wantMsg: "Confidence 1.5",
		},
		{
			name:    "direction",
			oracle:  bisecttest.OneCulprit(4, 1, drop, 0.02, 1),
			opts:    minimize.Options{Groups: flat(ids), Better: "faster"},
			wantMsg: `Better "faster"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			iso, err := minimize.Isolate(ctx, tc.oracle, tc.opts)
			require.Error(t, err)
			assert.Nil(t, iso)
			if tc.wantIs != nil {
				assert.ErrorIs(t, err, tc.wantIs)
			}
			if tc.wantMsg != "" {
				assert.ErrorContains(t, err, tc.wantMsg)
			}
			if tc.name == "infrastructure" {
				var infra *record.InfraError
				assert.ErrorAs(t, err, &infra)
				assert.NotErrorIs(t, err, record.ErrBroken)
			}
		})
	}
}

// outcomeOf returns the outcome of the test of exactly the given set, or ""
// when that configuration was not tested.
func outcomeOf(iso *minimize.Isolation, set ...string) string {
	sort.Strings(set)
	for _, t := range iso.Tests {
		s := slices.Clone(t.Set)
		sort.Strings(s)
		if slices.Equal(s, set) {
			return t.Outcome
		}
	}
	return ""
}

// TestIsolateBusyMachine is the held-out working-copy case: one harmful
// hunk among eight files, measured on a machine that is busy half of the
// time (20 of every 40 samples with three times the noise). A configuration whose
// test comes out undecided in a busy stretch is measured again, so it
// counts against none of its hunks: the harmful hunk alone is named, and an
// element whose part stays unmeasured is reported as undecided rather than
// named.
func TestIsolateBusyMachine(t *testing.T) {
	var groups []minimize.Group
	var ids []string
	for f := range 8 {
		g := minimize.Group{Name: fmt.Sprintf("file%d.py", f)}
		for h := range 1 + f%3 {
			id := fmt.Sprintf("f%dh%d", f, h)
			g.Elements = append(g.Elements, id)
			ids = append(ids, id)
		}
		groups = append(groups, g)
	}
	const culprit = "f5h1"
	exact, undecided, extra, retestsTotal := 0, 0, 0, 0
	world := func(seed uint64) *bisecttest.SetWorld {
		return &bisecttest.SetWorld{
			Elements: ids,
			Effect:   bisecttest.Shift(drop, culprit),
			CV:       0.02,
			Busy:     bisecttest.Busy{Every: 40, For: 20, CV: 0.06},
			Seed:     seed,
		}
	}
	for seed := range uint64(12) {
		w := world(seed)
		// A test gets 20 samples: on a busy machine some stay undecided.
		iso, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: groups, Better: record.Higher, InitialRuns: 8, MaxRunsPerTest: 20})
		require.NoError(t, err, "seed %d", seed)
		for _, e := range iso.Minimal {
			assert.Equal(t, culprit, e, "seed %d: only the harmful hunk is named (%v, undecided %v)", seed, iso.Minimal, iso.Undecided)
		}
		if slices.Equal(iso.Minimal, []string{culprit}) {
			exact++
		}
		if len(iso.Undecided) > 0 {
			undecided++
			assert.Contains(t, iso.Warnings, record.Warning{Kind: record.WarnUndecidedElements, Commits: iso.Undecided})
		}
		retested := 0
		for _, tt := range iso.Tests {
			retested += tt.Retests
		}
		retestsTotal += retested
		t.Logf("seed %d: minimal %v undecided %v, %d configurations, %d samples, %d retests", seed, iso.Minimal, iso.Undecided, iso.Configurations, iso.Samples, retested)

		// The same world with undecided tests taken as they are: the
		// configuration without a harmless hunk stays undecided in a busy
		// stretch, and the hunk is kept.
		old, err := minimize.Isolate(context.Background(), world(seed), minimize.Options{Groups: groups, Better: record.Higher, InitialRuns: 8, MaxRunsPerTest: 20, Retests: -1})
		require.NoError(t, err)
		if len(old.Minimal)+len(old.Undecided) > 1 {
			extra++
		}
	}
	assert.GreaterOrEqual(t, exact, 11)
	assert.LessOrEqual(t, undecided, 1)
	assert.Positive(t, retestsTotal, "busy stretches leave tests undecided")
	assert.Positive(t, extra, "without retests an undecided test keeps a harmless hunk now and then")
	t.Logf("without retests, %d of 12 searches keep an extra element", extra)
}

// Two hunks that each cost half the effect: a configuration with one of
// them measures between the ends, apart from both, and is left unresolved
// once that shows instead of being measured to MaxRunsPerTest and again.
// Without that, these five seeds took 121–236 samples and three of them
// named a harmless hunk.
func TestIsolateHalfEffects(t *testing.T) {
	for seed := range uint64(5) {
		ids := bisecttest.Hunks(8)
		w := &bisecttest.SetWorld{Elements: ids, CV: 0.02, Seed: seed,
			Effect: func(set map[string]bool) float64 {
				var s float64
				for _, e := range []string{"h02", "h06"} {
					if set[e] {
						s += math.Log(0.9) / 2
					}
				}
				return s
			}}
		iso, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: flat(w.Elements)})
		require.NoError(t, err, "seed %d", seed)
		t.Logf("seed %d: minimal %v unresolved %v, %d configurations, %d samples", seed, iso.Minimal, iso.Unresolved, iso.Configurations, iso.Samples)
		named := slices.Concat(iso.Minimal, slices.Concat(iso.Unresolved...))
		assert.Subset(t, named, []string{"h02", "h06"}, "seed %d: both halves are named", seed)
		assert.Subset(t, []string{"h02", "h06"}, iso.Minimal, "seed %d: no harmless hunk is named as a cause", seed)
		assert.LessOrEqual(t, iso.Samples, 130, "seed %d", seed)
	}
}

// MaxRuns bounds the whole search: once it is spent the search stops and
// reports the narrowest difference it reached, unresolved, rather than
// naming a set it did not measure; a minimal set already confirmed bad
// stands.
func TestIsolateRunBudget(t *testing.T) {
	for seed := range uint64(5) {
		w := bisecttest.OneCulprit(32, 7, drop, 0.02, seed)
		iso, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: flat(w.Elements), MaxRuns: 16})
		require.NoError(t, err, "seed %d", seed)
		t.Logf("seed %d: unresolved %v, %d configurations, %d samples", seed, iso.Unresolved, iso.Configurations, iso.Samples)
		tested := 0
		for _, x := range iso.Tests {
			tested += x.N
		}
		assert.LessOrEqual(t, tested, 16+2, "seed %d: at most one test's step past the budget", seed)
		require.NotEmpty(t, iso.Warnings)
		assert.Equal(t, record.WarnSetBudgetSpent, iso.Warnings[0].Kind)
		if len(iso.Minimal) > 0 {
			// Spent after the minimal set was confirmed: it stands, and
			// what reverting it does is unmeasured.
			assert.Equal(t, []string{"h07"}, iso.Minimal, "seed %d", seed)
			assert.Equal(t, minimize.OutcomeUnresolved, iso.RevertedOutcome, "seed %d", seed)
			assert.False(t, iso.Reverted.Measured(), "seed %d", seed)
			continue
		}
		require.Len(t, iso.Unresolved, 1, "seed %d", seed)
		assert.Contains(t, iso.Unresolved[0], "h07", "seed %d: the culprit is in what is left", seed)
		assert.Less(t, len(iso.Unresolved[0]), 32, "seed %d: the search narrowed before it stopped", seed)

		full, err := minimize.Isolate(context.Background(), bisecttest.OneCulprit(32, 7, drop, 0.02, seed), minimize.Options{Groups: flat(w.Elements)})
		require.NoError(t, err)
		t.Logf("seed %d unbounded: %d samples", seed, full.Samples)
		require.Equal(t, []string{"h07"}, full.Minimal, "seed %d: unbounded, the same world is solved", seed)
		require.Greater(t, full.Samples, iso.Samples, "seed %d: the budget bound the search", seed)
	}
}

// flipOracle measures one configuration at either end's level from one
// sample to the next, as a build whose code layout lands either way does
// (one of the demo testbed's hunks): no number of samples decides it.
type flipOracle struct {
	w   *bisecttest.SetWorld
	set []string
}

var _ minimize.Oracle = flipOracle{}

func (o flipOracle) Samples(ctx context.Context, set []string, n int) ([]float64, error) {
	xs, err := o.w.Samples(ctx, set, n)
	if err == nil && slices.Equal(set, o.set) {
		for i := range xs {
			if i%2 == 1 {
				xs[i] *= 0.92
			}
		}
	}
	return xs, err
}

// The check of the bad end with the minimal set reverted has a budget in
// proportion to what the minimal set took: a rest that cannot be decided
// is reported as not excluded, not measured to MaxRunsPerTest and again.
func TestIsolateRevertCheckBudget(t *testing.T) {
	for seed := range uint64(5) {
		w := &bisecttest.SetWorld{Elements: []string{"h00", "h01"}, CV: 0.02, Seed: seed,
			Effect: func(set map[string]bool) float64 {
				if set["h00"] {
					return math.Log(0.92) // the change
				}
				return 0
			}}
		opts := minimize.Options{Groups: flat(w.Elements), InitialRuns: 8}
		iso, err := minimize.Isolate(context.Background(), flipOracle{w: w, set: []string{"h01"}}, opts)
		require.NoError(t, err, "seed %d", seed)
		var applied, reverted *minimize.Test
		for i, x := range iso.Tests {
			switch {
			case slices.Equal(x.Set, []string{"h00"}):
				applied = &iso.Tests[i]
			case slices.Equal(x.Set, []string{"h01"}) && x.Side == minimize.SideRevert:
				reverted = &iso.Tests[i]
			}
		}
		require.NotNil(t, applied, "seed %d: %+v", seed, iso.Tests)
		require.NotNil(t, reverted, "seed %d: %+v", seed, iso.Tests)
		t.Logf("seed %d: minimal %v, applied n=%d, reverted n=%d %s, %d samples", seed, iso.Minimal, applied.N, reverted.N, reverted.Outcome, iso.Samples)
		assert.Equal(t, []string{"h00"}, iso.Minimal, "seed %d", seed)
		assert.LessOrEqual(t, reverted.N, max(2*opts.InitialRuns, 3*applied.N), "seed %d", seed)
		assert.Zero(t, reverted.Retests, "seed %d: a check with its own budget is not repeated", seed)
		assert.Equal(t, minimize.OutcomeUnresolved, iso.RevertedOutcome, "seed %d", seed)
		assert.Contains(t, kinds(iso.Warnings), record.WarnSetIncomplete, "seed %d", seed)
	}
}

func kinds(ws []record.Warning) []record.WarningKind {
	var out []record.WarningKind
	for _, w := range ws {
		out = append(out, w.Kind)
	}
	return out
}

// TestIsolateUnmeasuredEffect: an effect whose configuration was never
// measured (it did not build, or the budget ran out first) is the zero
// Effect, which says so (Measured, Record), never an effect of zero.
func TestIsolateUnmeasuredEffect(t *testing.T) {
	elements := []string{"h00", "h01", "h02", "h03"}
	slow := func(set map[string]bool) float64 {
		if set["h01"] {
			return math.Log(0.92)
		}
		return 0
	}
	for _, tc := range []struct {
		name   string
		broken func(set map[string]bool) bool
	}{
		// h02 needs h01, which no dependency says: reverting h01 alone
		// breaks the build.
		{"the bad end with the set reverted does not build", func(set map[string]bool) bool { return set["h02"] && !set["h01"] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(3) {
				w := &bisecttest.SetWorld{Elements: elements, CV: 0.02, Effect: slow, Broken: tc.broken, Seed: seed}
				iso, err := minimize.Isolate(context.Background(), w, minimize.Options{Groups: flat(elements)})
				require.NoError(t, err, "seed %d", seed)
				require.Equal(t, []string{"h01"}, iso.Minimal, "seed %d", seed)
				assert.True(t, iso.Applied.Measured(), "seed %d", seed)
				assert.Less(t, iso.Applied.Hi, 0.0, "seed %d", seed)
				assert.False(t, iso.Reverted.Measured(), "seed %d: %+v", seed, iso.Reverted)
				assert.Nil(t, iso.Reverted.Record(), "seed %d", seed)
				assert.Contains(t, kinds(iso.Warnings), record.WarnSetIncomplete, "seed %d", seed)
			}
		})
	}
}

// TestIsolateNothingBuildsApart is a commit whose hunks build only all
// together or not at all (a release's diff, whose removed lines the
// dependency scan cannot see): every configuration between the ends fails
// to build. Each failed build costs what a run does, so the search stops
// at its budget, with a warning that says how many did not build, instead
// of building its way through every subset the search can reach.
func TestIsolateNothingBuildsApart(t *testing.T) {
	const h, budget = 64, 40
	tests := []struct {
		name    string
		options minimize.Options
	}{
		{name: "files of hunks", options: minimize.Options{MaxRuns: budget}},
		{name: "hunks alone", options: minimize.Options{MaxRuns: budget}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := bisecttest.OneCulprit(h, 7, drop, 0.02, 1)
			w.Broken = func(set map[string]bool) bool { return len(set) > 0 && len(set) < h }
			opts := tc.options
			opts.Groups = flat(w.Elements)
			if i == 0 {
				opts.Groups = nil
				for f := 0; f < h; f += 8 {
					opts.Groups = append(opts.Groups, minimize.Group{Name: fmt.Sprintf("f%d.go", f/8), Elements: w.Elements[f : f+8]})
				}
			}
			iso, err := minimize.Isolate(context.Background(), w, opts)
			require.NoError(t, err)
			assert.Empty(t, iso.Minimal, "nothing can be named")
			assert.LessOrEqual(t, w.Configurations(), budget+2, "builds beyond the ends")
			require.NotEmpty(t, iso.Warnings)
			spent := iso.Warnings[len(iso.Warnings)-1]
			require.Equal(t, record.WarnSetBudgetSpent, spent.Kind, "%v", iso.Warnings)
			assert.Equal(t, w.Configurations()-2, spent.Count, "configurations that did not build")
			assert.Contains(t, spent.String(), "did not apply or build")
		})
	}
}
