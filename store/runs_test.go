package store_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

func TestAddRunRejects(t *testing.T) {
	for _, tc := range []struct {
		name    string
		run     *record.Run
		wantErr string
	}{
		{name: "nil run", run: nil, wantErr: "nil run"},
		{name: "no target key", run: edit(newRun(1, 0, record.StatusOK, tok(1)), func(r *record.Run) { r.TargetKey = "" }), wantErr: "no target key"},
		{name: "no spec hash", run: newRun(1, 0, record.StatusOK, tok(1), withSpec("")), wantErr: "no spec hash"},
		{name: "no commit", run: edit(newRun(1, 0, record.StatusOK, tok(1)), func(r *record.Run) { r.Target.Commit = "" }), wantErr: "no target commit"},
		{name: "NUL in a key", run: newRun(1, 0, record.StatusOK, tok(1), withSpec("a\x00b")), wantErr: "NUL byte"},
		{name: "unknown status", run: newRun(1, 0, "crashed", tok(1)), wantErr: `unknown status "crashed"`},
		{name: "no start time", run: edit(newRun(1, 0, record.StatusOK, tok(1)), func(r *record.Run) { r.Started = time.Time{} }), wantErr: "no start time"},
		{name: "start before 1970", run: edit(newRun(1, 0, record.StatusOK, tok(1)), func(r *record.Run) { r.Started = time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC) }), wantErr: "outside 1970..2262"},
		{name: "NaN value", run: newRun(1, 0, record.StatusOK, tok(math.NaN())), wantErr: "verify_tok_s value NaN is not a finite number"},
		{name: "infinite value", run: newRun(1, 0, record.StatusOK, tok(math.Inf(1))), wantErr: "is not a finite number"},
		{name: "empty metric name", run: newRun(1, 0, record.StatusOK, map[string]float64{"": 1}), wantErr: "without a metric name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := storetest.Open(t)
			id, err := db.AddRun(tc.run)
			require.ErrorContains(t, err, tc.wantErr)
			assert.Zero(t, id)
			runs, err := db.Runs(store.RunFilter{})
			require.NoError(t, err)
			assert.Empty(t, runs)
		})
	}
}

func edit(r *record.Run, fn func(*record.Run)) *record.Run { fn(r); return r }

func TestAddRunsIsAllOrNothing(t *testing.T) {
	db := storetest.Open(t)
	good := newRun(1, 0, record.StatusOK, tok(80))
	bad := newRun(2, time.Minute, record.StatusOK, tok(math.NaN()))
	require.ErrorContains(t, db.AddRuns([]*record.Run{good, bad}), "add run 2 of 2")
	assert.Zero(t, good.ID, "no id is handed out for a batch that was not stored")
	runs, err := db.Runs(store.RunFilter{})
	require.NoError(t, err)
	assert.Empty(t, runs)

	batch := []*record.Run{good, newRun(2, time.Minute, record.StatusOK, tok(81))}
	require.NoError(t, db.AddRuns(batch))
	assert.Equal(t, []uint64{1, 2}, []uint64{batch[0].ID, batch[1].ID})
	require.NoError(t, store.CheckConsistency(db))
}

func TestRunRoundTrip(t *testing.T) {
	db := storetest.Open(t)
	in := newRun(1, 0, record.StatusOK, map[string]float64{"verify_tok_s": 60, "verify_ms": 30.1},
		withEnv(map[string]string{"NCCL_ALGO": "Ring"}))
	in.Logs = []record.Log{{Step: "build", Output: "ok\n", ExitCode: 0}}
	in.ID = 99 // replaced by the store
	id, err := db.AddRun(in)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), id)
	assert.Equal(t, id, in.ID)

	got, ok, err := db.Run(id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, *in, got)

	_, ok, err = db.Run(2)
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestRuns(t *testing.T) {
	db := storetest.Open(t)
	// Ids follow insertion; start times do not (run 4 is an import of an
	// older run), so "newest first" is by start time.
	for _, r := range []*record.Run{
		newRun(1, 10*time.Minute, record.StatusOK, tok(88)),                       // 1
		newRun(2, 20*time.Minute, record.StatusBuildFailed, nil),                  // 2
		newRun(1, 30*time.Minute, record.StatusOK, tok(87), withSpec(specB)),      // 3
		newRun(1, 5*time.Minute, record.StatusInfraError, nil),                    // 4
		newRun(1, 40*time.Minute, record.StatusOK, tok(70), withHunks("p", "h2")), // 5
	} {
		_, err := db.AddRun(r)
		require.NoError(t, err)
	}
	plain1 := record.Target{Commit: commitHash(1)}.Key()
	for _, tc := range []struct {
		name   string
		filter store.RunFilter
		want   []uint64
	}{
		{name: "all", filter: store.RunFilter{}, want: []uint64{5, 3, 2, 1, 4}},
		{name: "limit", filter: store.RunFilter{Limit: 2}, want: []uint64{5, 3}},
		{name: "target", filter: store.RunFilter{TargetKey: plain1}, want: []uint64{3, 1, 4}},
		{name: "target and spec", filter: store.RunFilter{TargetKey: plain1, SpecHash: specA}, want: []uint64{1, 4}},
		{name: "spec", filter: store.RunFilter{SpecHash: specB}, want: []uint64{3}},
		{name: "commit covers targets with hunks", filter: store.RunFilter{Commit: commitHash(1)}, want: []uint64{5, 3, 1, 4}},
		{name: "commit and spec with limit", filter: store.RunFilter{Commit: commitHash(1), SpecHash: specA, Limit: 2}, want: []uint64{5, 1}},
		{name: "failed build is listed", filter: store.RunFilter{Commit: commitHash(2)}, want: []uint64{2}},
		{name: "abbreviated commit matches nothing", filter: store.RunFilter{Commit: commitHash(1)[:8]}},
		{name: "unknown target", filter: store.RunFilter{TargetKey: "nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := db.Runs(tc.filter)
			require.NoError(t, err)
			var ids []uint64
			for _, r := range runs {
				ids = append(ids, r.ID)
			}
			assert.Equal(t, tc.want, ids)
		})
	}
}

func TestCache(t *testing.T) {
	plain := record.Target{Commit: commitHash(1)}.Key()
	withH := record.Target{Commit: commitHash(1), Patch: "p", Hunks: []string{"h1"}}.Key()
	type want struct {
		ok, failed []uint64
		values     []float64 // of verify_tok_s
		status     record.Status
		attempted  bool
	}
	for _, tc := range []struct {
		name   string
		runs   []*record.Run
		spec   string
		target string
		want   want
	}{
		{
			name: "never measured",
			spec: specA, target: plain,
		},
		{
			name: "ok runs with their values, oldest first",
			runs: []*record.Run{
				newRun(1, 2*time.Minute, record.StatusOK, tok(87)),
				newRun(1, time.Minute, record.StatusOK, tok(88)),
			},
			spec: specA, target: plain,
			want: want{ok: []uint64{2, 1}, values: []float64{88, 87}, status: record.StatusOK, attempted: true},
		},
		{
			name: "another spec hash is another cache",
			runs: []*record.Run{
				newRun(1, 0, record.StatusOK, tok(88)),
				newRun(1, time.Minute, record.StatusOK, tok(95), withSpec(specB)),
			},
			spec: specB, target: plain,
			want: want{ok: []uint64{2}, values: []float64{95}, status: record.StatusOK, attempted: true},
		},
		{
			name: "hunks on the commit are another target",
			runs: []*record.Run{
				newRun(1, 0, record.StatusOK, tok(88)),
				newRun(1, time.Minute, record.StatusOK, tok(75), withHunks("p", "h1")),
			},
			spec: specA, target: withH,
			want: want{ok: []uint64{2}, values: []float64{75}, status: record.StatusOK, attempted: true},
		},
		{
			name: "latest attempt failed to build",
			runs: []*record.Run{
				newRun(1, 0, record.StatusOK, tok(88)),
				newRun(1, time.Minute, record.StatusBuildFailed, nil),
			},
			spec: specA, target: plain,
			want: want{ok: []uint64{1}, failed: []uint64{2}, values: []float64{88}, status: record.StatusBuildFailed, attempted: true},
		},
		{
			name: "build fixed after a failure",
			runs: []*record.Run{
				newRun(1, 0, record.StatusBuildFailed, nil),
				newRun(1, time.Minute, record.StatusOK, tok(88)),
			},
			spec: specA, target: plain,
			want: want{ok: []uint64{2}, failed: []uint64{1}, values: []float64{88}, status: record.StatusOK, attempted: true},
		},
		{
			name: "benchmark failure is a failed attempt",
			runs: []*record.Run{newRun(1, 0, record.StatusBenchFailed, nil)},
			spec: specA, target: plain,
			want: want{failed: []uint64{1}, status: record.StatusBenchFailed, attempted: true},
		},
		{
			name: "infrastructure errors are not attempts",
			runs: []*record.Run{
				newRun(1, 0, record.StatusOK, tok(88)),
				newRun(1, time.Minute, record.StatusInfraError, nil),
			},
			spec: specA, target: plain,
			want: want{ok: []uint64{1}, values: []float64{88}, status: record.StatusOK, attempted: true},
		},
		{
			name: "runs without the metric add no value",
			runs: []*record.Run{
				newRun(1, 0, record.StatusOK, map[string]float64{"decode_tok_s": 140}),
				newRun(1, time.Minute, record.StatusOK, tok(88)),
			},
			spec: specA, target: plain,
			want: want{ok: []uint64{1, 2}, values: []float64{88}, status: record.StatusOK, attempted: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := storetest.Open(t)
			require.NoError(t, db.AddRuns(tc.runs))

			e, err := db.Cached(tc.spec, tc.target)
			require.NoError(t, err)
			assert.Equal(t, tc.want.ok, refIDs(e.OK), "ok runs")
			assert.Equal(t, tc.want.failed, refIDs(e.Failed), "failed runs")

			values, err := db.Values(tc.spec, tc.target, "verify_tok_s")
			require.NoError(t, err)
			assert.Equal(t, tc.want.values, values)

			status, attempted, err := db.Status(tc.spec, tc.target)
			require.NoError(t, err)
			assert.Equal(t, tc.want.attempted, attempted)
			assert.Equal(t, tc.want.status, status)
		})
	}
}

func TestCacheEntryCarriesRunTimes(t *testing.T) {
	db := storetest.Open(t)
	r := newRun(1, 42*time.Second, record.StatusOK, map[string]float64{"verify_tok_s": 88, "verify_ms": 12})
	r.Node = "gpu-a01"
	_, err := db.AddRun(r)
	require.NoError(t, err)
	e, err := db.Cached(specA, r.TargetKey)
	require.NoError(t, err)
	require.Len(t, e.OK, 1)
	assert.Equal(t, store.RunRef{ID: 1, Started: t0.Add(42 * time.Second), Status: record.StatusOK, Values: r.Values, Host: r.Host, Node: "gpu-a01"}, e.OK[0],
		"the run's node goes with it to the bisection's model of machines")
	assert.NotEmpty(t, r.Host, "the run names its host")
}

func refIDs(refs []store.RunRef) []uint64 {
	var ids []uint64
	for _, r := range refs {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestAddRunEntryIsTheCacheAsRecorded: the entry AddRunEntry returns is the
// one Cached would read right after, the new run included, for ok and
// failed runs alike.
func TestAddRunEntryIsTheCacheAsRecorded(t *testing.T) {
	db := storetest.Open(t)
	for i, r := range []*record.Run{
		newRun(1, 0, record.StatusOK, tok(100)),
		newRun(1, time.Minute, record.StatusBenchFailed, nil),
		newRun(1, 2*time.Minute, record.StatusOK, tok(101)),
	} {
		got, err := db.AddRunEntry(r)
		require.NoError(t, err)
		want, err := db.Cached(specA, r.TargetKey)
		require.NoError(t, err)
		assert.Equal(t, want, got, "run %d", i+1)
		assert.Equal(t, uint64(i+1), r.ID, "the run has its id")
	}
}
