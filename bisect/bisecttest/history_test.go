package bisecttest_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/record"
)

func TestHistoryOracle(t *testing.T) {
	ctx := context.Background()
	h := &bisecttest.History{Len: 10, CV: 0.02, Changes: []bisecttest.Change{{At: 4, Factor: 0.9}},
		Broken: []bisecttest.Range{{From: 6, To: 7}}, InfraAt: []int{8}}
	assert.Equal(t, "c0004", h.Chain()[4])
	assert.Equal(t, []int{4}, h.Culprits())
	assert.InDelta(t, 90, h.Level(9), 1e-9)

	o := h.Oracle(1)
	v, err := o.Samples(ctx, "c0009", 40)
	require.NoError(t, err)
	require.Len(t, v, 40)
	var logs float64
	for k, x := range v {
		logs += math.Log(x.Value)
		assert.Equal(t, uint64(k+1), x.Seq, "runs are stamped with the oracle's clock")
	}
	assert.InDelta(t, math.Log(90), logs/40, 0.01)

	again, err := o.Samples(ctx, "c0009", 0)
	require.NoError(t, err)
	assert.Equal(t, v, again, "values are recorded")
	assert.Equal(t, 40, o.Runs())
	assert.Equal(t, 1, o.Builds())

	_, err = o.Samples(ctx, "c0006", 1)
	assert.ErrorIs(t, err, record.ErrBroken)
	_, err = o.Samples(ctx, "c0008", 1)
	assert.ErrorIs(t, err, bisecttest.ErrInfra)
	_, err = o.Samples(ctx, "c0099", 1)
	assert.ErrorContains(t, err, "unknown commit")
	assert.Equal(t, 2, o.Builds(), "the broken build counts; the unreachable host does not")
}

// TestHistoryOracleOrder checks that a commit's values do not depend on the
// order in which commits are asked for: concurrent probes stay
// reproducible.
func TestHistoryOracleOrder(t *testing.T) {
	ctx := context.Background()
	h := &bisecttest.History{Len: 4, CV: 0.05}
	a, b := h.Oracle(3), h.Oracle(3)
	_, err := a.Samples(ctx, "c0001", 3)
	require.NoError(t, err)
	x, err := a.Samples(ctx, "c0002", 3)
	require.NoError(t, err)
	y, err := b.Samples(ctx, "c0002", 3)
	require.NoError(t, err)
	assert.Equal(t, bisect.Values(x), bisect.Values(y), "the values do not depend on the order; their places in time do")
}

func TestHistoryOutliers(t *testing.T) {
	h := &bisecttest.History{Len: 2, CV: 0.02, OutlierRate: 1, OutlierShift: -5}
	v, err := h.Oracle(1).Samples(context.Background(), "c0000", 50)
	require.NoError(t, err)
	var logs float64
	for _, x := range v {
		logs += math.Log(x.Value)
	}
	assert.InDelta(t, math.Log(100)-5*0.02, logs/50, 0.01)
}

// TestHistoryCached checks that cached runs are recorded at another time
// and in another host state, and cost no runs.
func TestHistoryCached(t *testing.T) {
	h := &bisecttest.History{Len: 4, CV: 0.01, Cached: []bisecttest.Cached{{At: 0, Runs: 20, Host: 0.7}}}
	o := h.Oracle(1)
	cached, err := o.Samples(context.Background(), "c0000", 0)
	require.NoError(t, err)
	require.Len(t, cached, 20)
	var logs float64
	for k, r := range cached {
		logs += math.Log(r.Value)
		assert.Equal(t, uint64(k+1), r.Seq)
	}
	assert.InDelta(t, math.Log(70), logs/20, 0.01)
	fresh, err := o.Samples(context.Background(), "c0003", 1)
	require.NoError(t, err)
	assert.Greater(t, fresh[0].Seq, uint64(20+100), "the search's runs come long after the cache")
	assert.InDelta(t, 100, fresh[0].Value, 5)
	assert.Equal(t, 1, o.Runs())
}

// TestHistoryHostLevels checks that the host's speed jumps between its
// levels in blocks of runs, in the order the runs are made, whichever
// commit they are of.
func TestHistoryHostLevels(t *testing.T) {
	h := &bisecttest.History{Len: 2, Base: 1017, CV: 0.001, HostLevels: []float64{1, 705.0 / 1017}, HostEvery: 3}
	o := h.Oracle(1)
	ctx := context.Background()
	for k := range 12 {
		commit := bisecttest.CommitID(k % 2)
		v, err := o.Samples(ctx, commit, k/2+1)
		require.NoError(t, err)
		want := 1017.0
		if k/3%2 == 1 {
			want = 705
		}
		assert.InDelta(t, want, v[len(v)-1].Value, 5, "run %d", k)
	}
}

func TestHistoryOracleHosts(t *testing.T) {
	ctx := context.Background()
	h := &bisecttest.History{Len: 4, CV: 0.01, Hosts: []float64{1, 0.9},
		FlakyInfra: []bisecttest.FlakyInfra{{At: 2, Fail: 1, Of: 2}}}
	o := h.Oracle(1)
	_, err := o.SamplesOn(ctx, "c0001", "h0", 30)
	require.NoError(t, err)
	runs, err := o.SamplesOn(ctx, "c0001", "h1", 30)
	require.NoError(t, err)
	require.Len(t, runs, 60, "every host's runs")
	var logs [2]float64
	for _, r := range runs {
		switch r.Host {
		case "h0":
			logs[0] += math.Log(r.Value) / 30
		case "h1":
			logs[1] += math.Log(r.Value) / 30
		default:
			t.Fatalf("run on host %q", r.Host)
		}
	}
	assert.InDelta(t, math.Log(0.9), logs[1]-logs[0], 0.01, "h1 runs 10% slower")
	again, err := o.SamplesOn(ctx, "c0001", "h1", 30)
	require.NoError(t, err)
	assert.Equal(t, runs, again, "h1 holds 30 runs: nothing more is made")
	assert.Equal(t, 2, o.Builds(), "one build on each host")

	_, err = o.SamplesOn(ctx, "c0001", "h9", 1)
	assert.ErrorContains(t, err, "unknown host")

	// One try in two fails on the infrastructure, the first of each two.
	for k, fails := range []bool{true, false, true, false} {
		_, err := o.SamplesOn(ctx, "c0002", "h0", k/2+1)
		if fails {
			var infra *record.InfraError
			require.ErrorAs(t, err, &infra, "try %d", k)
			assert.ErrorIs(t, err, bisecttest.ErrInfra)
		} else {
			require.NoError(t, err, "try %d", k)
		}
	}
}

// TestHistoryTrees checks the builds of a host that keeps a few trees: a
// commit measured again while its tree is kept costs no build, one whose
// tree was given up for others is built again.
func TestHistoryTrees(t *testing.T) {
	tests := []struct {
		name       string
		trees      int
		order      []int // commits measured, one run each
		wantBuilds int
		wantTree   int
	}{
		{name: "every build kept", trees: 0, order: []int{1, 2, 3, 1, 2, 3}, wantBuilds: 3, wantTree: 3},
		{name: "two trees, back to a kept one", trees: 2, order: []int{1, 2, 1, 2, 1}, wantBuilds: 2, wantTree: 2},
		{name: "two trees, a third commit gives the oldest up", trees: 2, order: []int{1, 2, 3, 1}, wantBuilds: 3, wantTree: 4},
		{name: "a kept tree measured again stays kept", trees: 2, order: []int{1, 2, 1, 3, 1, 2}, wantBuilds: 3, wantTree: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &bisecttest.History{Len: 5, CV: 0.02, Trees: tt.trees}
			o := h.Oracle(1)
			n := map[int]int{}
			for _, i := range tt.order {
				n[i]++
				_, err := o.Samples(context.Background(), bisecttest.CommitID(i), n[i])
				require.NoError(t, err)
			}
			_, err := o.Samples(context.Background(), bisecttest.CommitID(tt.order[0]), 0)
			require.NoError(t, err)
			assert.Equal(t, tt.wantBuilds, o.Builds())
			assert.Equal(t, tt.wantTree, o.TreeBuilds(), "asking for recorded runs builds nothing")
		})
	}
}
