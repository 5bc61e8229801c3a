package bisect_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/record"
)

// TestLocateRealCaseShape runs the whole job over histories shaped like
// the real case of scripts/realbisect: 47 released versions of a
// compression module, an improvement that multiplies the decoder's MB/s
// by about 2.9 at version 18, and a later release that takes a third of
// it back (the other direction: no second culprit), searched with
// --direction improvement and the case's max_runs. The host keeps eight
// built trees per slot, as the pool does by default, so a commit measured
// again after eight others is built again; builds cost as much as runs in
// such a job's wall time (a build takes about half a second with the build
// cache warm, a run 0.3 to 1 s).
//
// git bisect run with 5 runs a step costs 10 runs for the ends and 5 for
// each of its 5 or 6 steps here: 35 to 40 runs and 7 or 8 builds. On a
// quiet host the whole job must cost at most half those runs; on a host
// loaded several times over (the noise of one run 30%, the speed
// wandering by 20%, one run in twenty far slower) it must still be right.
func TestLocateRealCaseShape(t *testing.T) {
	later := bisecttest.Change{At: 26, Factor: 0.7}
	tests := []struct {
		name     string
		history  bisecttest.History
		minRight int // of 20 seeds
		// maxRuns and maxBuilds bound the mean runs and builds (rebuilds
		// of given-up trees included) of the whole job.
		maxRuns, maxBuilds float64
	}{
		{
			name: "quiet host",
			history: bisecttest.History{Len: 47, Base: 180, CV: 0.08, Trees: 8,
				Changes: []bisecttest.Change{{At: 18, Factor: 2.9}, later}},
			minRight: 20, maxRuns: 17, maxBuilds: 8,
		},
		{
			name: "loaded host",
			history: bisecttest.History{Len: 47, Base: 150, CV: 0.3, Trees: 8,
				DriftSD: 0.2, DriftCorr: 0.8, OutlierRate: 0.05, OutlierShift: -3,
				Changes: []bisecttest.Change{{At: 18, Factor: 2}, {At: 26, Factor: 0.85}}},
			minRight: 19, maxRuns: 60, maxBuilds: 12,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			right, runs, builds := 0, 0, 0
			phases := map[string]int{}
			for seed := range int64(20) {
				o := tt.history.Oracle(seed + 1)
				last := 0
				res, err := bisect.Locate(context.Background(), tt.history.Chain(), o, bisect.Options{
					Direction: record.Improvement, MaxRuns: 200,
					OnProbe: func(e bisect.ProbeEvent) {
						phases[e.Phase] += e.Samples - last
						last = e.Samples
					},
				})
				require.NoError(t, err)
				assert.Equal(t, o.Runs(), res.Samples, "seed %d: every run counted", seed)
				if len(res.Culprits) == 1 && res.Culprits[0].Index == 18 && res.Culprits[0].Confirmation.Confirmed {
					right++
				} else {
					t.Logf("seed %d: %v %q", seed, culpritIndices(res), record.WarningStrings(res.Warnings))
				}
				runs += o.Runs()
				builds += o.TreeBuilds()
				assert.GreaterOrEqual(t, o.TreeBuilds(), o.Builds(), "seed %d", seed)
			}
			t.Logf("right %d of 20, %.1f runs (by phase %v), %.1f builds", right, float64(runs)/20, phases, float64(builds)/20)
			assert.GreaterOrEqual(t, right, tt.minRight)
			assert.LessOrEqual(t, float64(runs)/20, tt.maxRuns, "mean runs of the whole job")
			assert.LessOrEqual(t, float64(builds)/20, tt.maxBuilds, "mean builds of the whole job")
		})
	}
}
