package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

func TestHistory(t *testing.T) {
	db := storetest.Open(t)
	for _, r := range []*record.Run{
		newRun(1, 1*time.Hour, record.StatusOK, map[string]float64{"verify_tok_s": 88.8, "decode_tok_s": 140}), // 1
		newRun(2, 2*time.Hour, record.StatusOK, map[string]float64{"verify_tok_s": 88.1, "decode_tok_s": 141}), // 2
		newRun(3, 3*time.Hour, record.StatusBuildFailed, tok(1)),                                               // 3
		newRun(4, 4*time.Hour, record.StatusOK, tok(82.2), withHost("gpu1")),                                   // 4
		newRun(4, 5*time.Hour, record.StatusOK, tok(60), withHunks("p", "h1")),                                 // 5
		newRun(4, 6*time.Hour, record.StatusOK, tok(94), withEnv(map[string]string{"NCCL_PROTO": "Simple"})),   // 6
		newRun(4, 7*time.Hour, record.StatusInfraError, tok(2)),                                                // 7
		newRun(1, 8*time.Hour, record.StatusOK, tok(88.5), withSpec(specB)),                                    // 8
		newRun(4, 30*time.Minute, record.StatusOK, tok(82.0)),                                                  // 9, imported late
	} {
		_, err := db.AddRun(r)
		require.NoError(t, err)
	}
	type row struct {
		metric string
		run    uint64
		value  float64
	}
	for _, tc := range []struct {
		name string
		q    store.HistoryQuery
		want []row
	}{
		{
			name: "one metric, newest first, plain commits only",
			q:    store.HistoryQuery{Metric: "verify_tok_s"},
			want: []row{{"verify_tok_s", 8, 88.5}, {"verify_tok_s", 4, 82.2}, {"verify_tok_s", 2, 88.1}, {"verify_tok_s", 1, 88.8}, {"verify_tok_s", 9, 82.0}},
		},
		{
			name: "limit",
			q:    store.HistoryQuery{Metric: "verify_tok_s", Limit: 2},
			want: []row{{"verify_tok_s", 8, 88.5}, {"verify_tok_s", 4, 82.2}},
		},
		{
			name: "since is inclusive",
			q:    store.HistoryQuery{Metric: "verify_tok_s", Since: t0.Add(2 * time.Hour)},
			want: []row{{"verify_tok_s", 8, 88.5}, {"verify_tok_s", 4, 82.2}, {"verify_tok_s", 2, 88.1}},
		},
		{
			name: "every metric merged, one run's metrics by name",
			q:    store.HistoryQuery{Since: t0.Add(time.Hour), Limit: 5},
			want: []row{{"verify_tok_s", 8, 88.5}, {"verify_tok_s", 4, 82.2}, {"decode_tok_s", 2, 141}, {"verify_tok_s", 2, 88.1}, {"decode_tok_s", 1, 140}},
		},
		{
			name: "with hunks and environment overrides",
			q:    store.HistoryQuery{Metric: "verify_tok_s", All: true, Since: t0.Add(4 * time.Hour)},
			want: []row{{"verify_tok_s", 8, 88.5}, {"verify_tok_s", 6, 94}, {"verify_tok_s", 5, 60}, {"verify_tok_s", 4, 82.2}},
		},
		{
			name: "one commit",
			q:    store.HistoryQuery{Commit: commitHash(4)},
			want: []row{{"verify_tok_s", 4, 82.2}, {"verify_tok_s", 9, 82.0}},
		},
		{
			name: "one commit with every target, since and limit",
			q:    store.HistoryQuery{Commit: commitHash(4), All: true, Since: t0.Add(time.Hour), Limit: 2},
			want: []row{{"verify_tok_s", 6, 94}, {"verify_tok_s", 5, 60}},
		},
		{
			name: "one commit, every metric",
			q:    store.HistoryQuery{Commit: commitHash(2)},
			want: []row{{"decode_tok_s", 2, 141}, {"verify_tok_s", 2, 88.1}},
		},
		{
			name: "failed and infrastructure runs have no samples",
			q:    store.HistoryQuery{Commit: commitHash(3), All: true},
		},
		{
			name: "unknown metric",
			q:    store.HistoryQuery{Metric: "allreduce_us"},
		},
		{
			name: "since after everything",
			q:    store.HistoryQuery{Since: t0.Add(24 * time.Hour)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := db.History(tc.q)
			require.NoError(t, err)
			var got []row
			for _, r := range rows {
				got = append(got, row{r.Metric, r.RunID, r.Value})
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestHistoryRowFields(t *testing.T) {
	db := storetest.Open(t)
	r := newRun(4, time.Hour, record.StatusOK, tok(82.2), withHost("gpu1"))
	_, err := db.AddRun(r)
	require.NoError(t, err)
	rows, err := db.History(store.HistoryQuery{})
	require.NoError(t, err)
	assert.Equal(t, []store.HistoryRow{{
		Metric: "verify_tok_s", Commit: commitHash(4), Time: t0.Add(time.Hour), RunID: 1, Host: "gpu1",
		Status: "ok", Value: 82.2, SpecHash: specA, TargetKey: r.TargetKey,
	}}, rows)
}
