package store_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// TestMigrateV2AttachesHunks opens a version 1 file whose finding keeps its
// hunks beside two culprits and its hunk effect as half-widths: after the
// migration each hunk hangs on its culprit, the effect has bounds, and the
// finding and its issue are found under the fingerprint without hunks.
func TestMigrateV2AttachesHunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perfbot.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	c1, c2 := commitHash(4), commitHash(6)
	raw := `{"id":"perfbotfpold","metric":"verify_tok_s","outcome":"culprit","state":"filed","issue":7,
	  "culprits":[{"commit":{"hash":"` + c1 + `"}},{"commit":{"hash":"` + c2 + `"}}],
	  "hunks":[{"id":"h1","file":"a.go"},{"id":"h2","file":"b.go","commit":"` + c2 + `"}],
	  "hunk_effect":{"applied_pct":-5,"applied_ci_pct":1,"reverted_pct":5,"reverted_ci_pct":2}}`
	require.NoError(t, store.WriteRawFinding(path, "perfbotfpold", raw, 7, "1"))

	db, err = store.Open(path)
	require.NoError(t, err)
	defer db.Close()

	fs, err := db.Findings()
	require.NoError(t, err)
	require.Len(t, fs, 1)
	f := fs[0]
	assert.Equal(t, f.DerivedID(), f.ID, "re-keyed under the fingerprint, and then its id (version 5)")
	require.Len(t, f.Culprits, 2)
	assert.Equal(t, []record.Hunk{{ID: "h1", File: "a.go"}}, f.Culprits[0].Hunks, "a hunk without a commit is the first culprit's")
	assert.Equal(t, []record.Hunk{{ID: "h2", File: "b.go"}}, f.Culprits[1].Hunks)
	assert.Nil(t, f.Culprits[0].HunkEffect, "an effect of several culprits' hunks belongs to none")

	n, ok, err := db.IssueFor(f.Fingerprint())
	require.NoError(t, err)
	require.True(t, ok, "the issue follows the finding to its new key")
	assert.Equal(t, 7, n)
	_, ok, err = db.Finding("perfbotfpold")
	require.NoError(t, err)
	assert.False(t, ok)
}
