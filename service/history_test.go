package service

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// seedHistory stores three runs, an hour apart: commit 1 (known, two
// metrics), commit 2 (known) and commit 3 (whose subject the store never
// learnt). It returns the hashes and the start of the first run.
func seedHistory(t *testing.T, db *store.DB) ([]string, time.Time) {
	t.Helper()
	t0 := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	hashes := []string{strings.Repeat("1", 40), strings.Repeat("2", 40), strings.Repeat("3", 40)}
	require.NoError(t, db.PutCommit(record.Commit{Hash: hashes[0], Subject: "engine: baseline"}))
	require.NoError(t, db.PutCommit(record.Commit{Hash: hashes[1], Subject: "communicator: symmetric memory first"}))
	for i, v := range []map[string]float64{
		{"verify_tok_s": 100, "decode_tok_s": 50},
		{"verify_tok_s": 90},
		{"verify_tok_s": 95},
	} {
		tg := record.Target{Commit: hashes[i]}
		_, err := db.AddRun(&record.Run{TargetKey: tg.Key(), SpecHash: "spec", Target: tg, Host: "gpu1", Status: record.StatusOK,
			Started: t0.Add(time.Duration(i) * time.Hour), Values: v,
			Fingerprint: record.Fingerprint{Host: "gpu1", CPUs: 8, Env: map[string]string{"NCCL_PROTO": "LL"}}})
		require.NoError(t, err)
	}
	return hashes, t0
}

func TestHistory(t *testing.T) {
	type want struct {
		commit  int // index into the seeded hashes
		metric  string
		value   float64
		subject string
	}
	tests := []struct {
		name      string
		q         HistoryQuery
		want      []want
		wantInput string // an input error naming this
	}{
		{
			name: "everything, newest first, joined with subjects",
			q:    HistoryQuery{},
			want: []want{
				{2, "verify_tok_s", 95, ""},
				{1, "verify_tok_s", 90, "communicator: symmetric memory first"},
				{0, "decode_tok_s", 50, "engine: baseline"},
				{0, "verify_tok_s", 100, "engine: baseline"},
			},
		},
		{
			name: "one metric",
			q:    HistoryQuery{Metric: "decode_tok_s"},
			want: []want{{0, "decode_tok_s", 50, "engine: baseline"}},
		},
		{
			name: "since the second run",
			q:    HistoryQuery{Metric: "verify_tok_s", Since: time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)},
			want: []want{{2, "verify_tok_s", 95, ""}, {1, "verify_tok_s", 90, "communicator: symmetric memory first"}},
		},
		{
			name: "limited, with fingerprints",
			q:    HistoryQuery{Limit: 1, Fingerprints: true},
			want: []want{{2, "verify_tok_s", 95, ""}},
		},
		{
			name: "a configured metric never measured",
			q:    HistoryQuery{Metric: "allreduce_gbps"},
			want: []want{},
		},
		{
			name:      "a metric that is not configured",
			q:         HistoryQuery{Metric: "tok_s"},
			wantInput: `"tok_s"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openRecords(t, false)
			hashes, _ := seedHistory(t, w.bot.Store)
			rows, err := w.bot.History(context.Background(), tt.q)
			if tt.wantInput != "" {
				var ie *InputError
				require.True(t, errors.As(err, &ie), "input error: %v", err)
				require.ErrorContains(t, err, tt.wantInput)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, rows, "none is an empty list")
			index := map[string]int{}
			for i, h := range hashes {
				index[h] = i
			}
			var got []want
			for _, r := range rows {
				got = append(got, want{commit: index[r.Commit], metric: r.Metric, value: r.Value, subject: r.Subject})
				require.Equal(t, "tok/s", r.Unit, "the unit comes from the configuration")
				require.Equal(t, "gpu1", r.Host)
				require.Equal(t, "ok", r.Status)
				if tt.q.Fingerprints {
					require.NotNil(t, r.Fingerprint)
					require.Equal(t, "LL", r.Fingerprint.Env["NCCL_PROTO"])
				} else {
					require.Nil(t, r.Fingerprint, "fingerprints only when asked")
				}
			}
			if len(tt.want) == 0 {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tt.want, got)
		})
	}
}
