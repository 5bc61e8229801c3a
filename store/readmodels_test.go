package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

func TestFindCommit(t *testing.T) {
	db := storetest.Open(t)
	for _, h := range []string{"abc1230000", "abc4560000", "def0000000"} {
		require.NoError(t, db.PutCommit(record.Commit{Hash: h, Subject: "subject of " + h}))
	}
	for _, tt := range []struct {
		name, rev, want string
		ambiguous       bool
	}{
		{name: "full hash", rev: "abc1230000", want: "abc1230000"},
		{name: "unique prefix", rev: "abc4", want: "abc4560000"},
		{name: "shared prefix", rev: "abc", ambiguous: true},
		{name: "unknown", rev: "fff"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, ok, err := db.FindCommit(tt.rev)
			if tt.ambiguous {
				require.ErrorIs(t, err, store.ErrAmbiguous)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want != "", ok)
			require.Equal(t, tt.want, c.Hash)
		})
	}
}

func TestCommits(t *testing.T) {
	db := storetest.Open(t)
	require.NoError(t, db.PutCommit(record.Commit{Hash: "abc", Subject: "one"}))
	require.NoError(t, db.PutCommit(record.Commit{Hash: "def", Subject: "two"}))
	got, err := db.Commits([]string{"abc", "abc", "fff", "def", ""})
	require.NoError(t, err)
	require.Len(t, got, 2, "unknown and empty hashes are left out")
	require.Equal(t, "one", got["abc"].Subject)
	require.Equal(t, "two", got["def"].Subject)
}

// RunTotals counts each run once: a second call adds only the runs
// recorded since the first.
func TestRunTotals(t *testing.T) {
	db := storetest.Open(t)
	for i := 0; i < 3; i++ {
		_, err := db.AddRun(newRun(i, time.Duration(i)*time.Minute, record.StatusOK, tok(100)))
		require.NoError(t, err)
	}
	_, err := db.AddRun(newRun(3, 3*time.Minute, record.StatusBuildFailed, nil, withHost("gpu1")))
	require.NoError(t, err)
	totals, last, err := db.RunTotals(0, nil)
	require.NoError(t, err)
	require.Equal(t, uint64(4), last)
	require.Equal(t, map[store.RunKey]store.RunTotal{
		{Host: "gpu0", Status: record.StatusOK}:          {Runs: 3, Seconds: 270},
		{Host: "gpu1", Status: record.StatusBuildFailed}: {Runs: 1, Seconds: 90},
	}, totals)

	_, err = db.AddRun(newRun(4, 4*time.Minute, record.StatusOK, tok(100)))
	require.NoError(t, err)
	totals, last, err = db.RunTotals(last, totals)
	require.NoError(t, err)
	require.Equal(t, uint64(5), last)
	require.Equal(t, 4, totals[store.RunKey{Host: "gpu0", Status: record.StatusOK}].Runs)
}

// A triage whose decision fails stores nothing; one that succeeds stores
// the finding and the nightly state together.
func TestTriageOneTransaction(t *testing.T) {
	db := storetest.Open(t)
	f := record.Finding{ID: "perfbotfp0123", Metric: "verify_tok_s", Outcome: record.OutcomeCulprit}
	require.NoError(t, db.PutFinding(f))
	require.NoError(t, db.AddNight(&record.Night{Tip: commitHash(1), Status: record.StatusOK, Time: t0},
		record.NightlyState{Reference: commitHash(1), Levels: map[string]float64{"verify_tok_s": 100}}))

	boom := errors.New("boom")
	_, _, err := db.Triage("perfbotfp01", func(f *record.Finding, nights []record.Night, s *record.NightlyState) error {
		f.Triage = &record.TriageNote{State: record.TriageAcknowledged}
		s.Reference = commitHash(2)
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, _, err := db.Finding(f.ID)
	require.NoError(t, err)
	require.Nil(t, got.Triage, "nothing of a failed triage is stored")
	s, err := db.NightlyState()
	require.NoError(t, err)
	require.Equal(t, commitHash(1), s.Reference)

	got, ok, err := db.Triage("perfbotfp01", func(f *record.Finding, nights []record.Night, s *record.NightlyState) error {
		require.Len(t, nights, 1)
		f.Triage = &record.TriageNote{State: record.TriageAcknowledged}
		s.Reference = commitHash(2)
		return nil
	})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, record.TriageAcknowledged, got.TriageState())
	s, err = db.NightlyState()
	require.NoError(t, err)
	require.Equal(t, commitHash(2), s.Reference)

	// A re-detection that stores the finding again keeps the decision.
	require.NoError(t, db.PutFinding(f))
	got, _, err = db.Finding(f.ID)
	require.NoError(t, err)
	require.Equal(t, record.TriageAcknowledged, got.TriageState())

	_, ok, err = db.Triage("perfbotfp9", func(*record.Finding, []record.Night, *record.NightlyState) error { return nil })
	require.NoError(t, err)
	require.False(t, ok)
}
