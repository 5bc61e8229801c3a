package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// TestMigrateV4OneCommitRecord opens a version 3 file whose commit keeps
// its date as "time" and whose finding counts its commits' parents and
// keeps a warning in words: after the migration the commit has its date,
// the finding's commits their parents' hashes where the store knows them,
// and the warning is a value.
func TestMigrateV4OneCommitRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perfbot.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	merge, parent1, parent2, unknown := commitHash(5), commitHash(3), commitHash(4), commitHash(8)
	require.NoError(t, store.WriteRawCommit(path, merge, `{"hash":"`+merge+`","subject":"merge topic","author":"A","time":"2026-11-01T01:00:00Z","parents":["`+parent1+`","`+parent2+`"]}`, "3"))
	f := record.Finding{Metric: "verify_tok_s", Outcome: record.OutcomeCulprit, State: record.StateKept,
		Culprits: []record.Culprit{{Commit: record.Commit{Hash: merge}}}}
	f.ID = f.Fingerprint()
	raw := `{"id":"` + f.ID + `","metric":"verify_tok_s","outcome":"culprit","state":"kept",
	  "good":{"commit":{"hash":"` + unknown + `","parents":1},"n":3,"median":1,"lo":1,"hi":1},
	  "culprits":[{"commit":{"hash":"` + merge + `","parents":2},"delta_pct":-5,"ci_lo_pct":-6,"ci_hi_pct":-4}],
	  "warnings":["3 of 24 runs were retried"]}`
	require.NoError(t, store.WriteRawFinding(path, f.ID, raw, 0, "3"))

	db, err = store.Open(path)
	require.NoError(t, err)
	defer db.Close()

	c, ok, err := db.Commit(merge)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, time.Date(2026, 11, 1, 1, 0, 0, 0, time.UTC), c.Date.UTC(), "the date kept under its new name")
	assert.Equal(t, []string{parent1, parent2}, c.Parents)

	got, ok, err := db.Finding(f.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []string{parent1, parent2}, got.Culprits[0].Commit.Parents, "the parents of a known commit")
	assert.Empty(t, got.Good.Commit.Parents, "an unknown commit loses the count")
	assert.Equal(t, -5.0, got.Culprits[0].Effect.Pct, "the rest of the finding as it was")
	assert.Equal(t, []record.Warning{{Kind: record.WarnNote, Text: "3 of 24 runs were retried"}}, got.Warnings, "a warning in words is a note")
	assert.Equal(t, []record.Warning{{Kind: record.WarnNote, Text: "3 of 24 runs were retried"}}, got.Warnings, "a warning in words is a note")
}
