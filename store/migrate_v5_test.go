package store_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// TestMigrateV5OneShortID opens a version 4 file whose findings are kept
// under their fingerprints (with a suffix for the outcomes that share one):
// after the migration each has its short id, which every view shows; its
// old id still names it, its issue is still found by the fingerprint its
// issue's marker carries, and the nightly state's record of the findings
// it commented on follows them.
func TestMigrateV5OneShortID(t *testing.T) {
	culprit := record.Finding{Metric: "verify_tok_s", Outcome: record.OutcomeCulprit, State: record.StateFiled, Issue: 7,
		Culprits: []record.Culprit{{Commit: record.Commit{Hash: commitHash(4)}}}}
	broken := record.Finding{Metric: "verify_tok_s", Outcome: record.OutcomeBuildBroken, State: record.StateKept,
		Candidates: []record.Commit{{Hash: commitHash(4)}}}
	notReproduced := record.Finding{Metric: "verify_tok_s", Outcome: record.OutcomeNotReproduced, State: record.StateKept}
	for _, tc := range []struct {
		name    string
		finding record.Finding
		oldID   string
		issue   int
	}{
		{name: "a culprit's, filed", finding: culprit, oldID: culprit.Fingerprint(), issue: 7},
		{name: "a nightly one's, with its outcome", finding: broken, oldID: broken.Fingerprint() + "-build_broken"},
		{name: "a not reproduced one's", finding: notReproduced, oldID: notReproduced.Fingerprint() + "-nr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "perfbot.db")
			db, err := store.Open(path)
			require.NoError(t, err)
			require.NoError(t, db.Close())
			raw := `{"id":"` + tc.oldID + `","metric":"verify_tok_s","outcome":"` + string(tc.finding.Outcome) + `","state":"` + string(tc.finding.State) + `",
			  "culprits":[{"commit":{"hash":"` + commitHash(4) + `"}}]}`
			if len(tc.finding.Culprits) == 0 {
				raw = `{"id":"` + tc.oldID + `","metric":"verify_tok_s","outcome":"` + string(tc.finding.Outcome) + `","state":"` + string(tc.finding.State) + `",
				  "candidates":[{"hash":"` + commitHash(4) + `"}]}`
			}
			if tc.finding.Outcome == record.OutcomeNotReproduced {
				raw = `{"id":"` + tc.oldID + `","metric":"verify_tok_s","outcome":"not_reproduced","state":"kept"}`
			}
			require.NoError(t, store.WriteRawFinding(path, tc.oldID, raw, 0, "4"))
			if tc.issue != 0 {
				require.NoError(t, store.WriteRawFinding(path, tc.oldID, raw, tc.issue, "4"))
			}
			require.NoError(t, store.WriteRawNightlyState(path, `{"reference":"`+commitHash(1)+`","noted":{"`+tc.oldID+`":12}}`))

			db, err = store.Open(path)
			require.NoError(t, err)
			defer db.Close()
			fs, err := db.Findings()
			require.NoError(t, err)
			require.Len(t, fs, 1)
			id := record.FindingID(tc.oldID)
			assert.Equal(t, id, fs[0].ID)
			assert.Len(t, id, record.IDDigits)
			if tc.finding.Outcome != record.OutcomeNotReproduced {
				assert.Equal(t, id, tc.finding.DerivedID(), "found again, it is the same finding")
			}

			f, ok, err := db.Finding(tc.oldID)
			require.NoError(t, err)
			require.True(t, ok, "the old id names the finding")
			assert.Equal(t, id, f.ID)
			f, ok, err = db.Finding(id[:5])
			require.NoError(t, err)
			require.True(t, ok, "so does a prefix of its id")
			assert.Equal(t, id, f.ID)

			if tc.issue != 0 {
				assert.Equal(t, id, fs[0].DerivedID(), "a culprit's id is the start of its fingerprint")
				n, ok, err := db.IssueFor(fs[0].Fingerprint())
				require.NoError(t, err)
				require.True(t, ok, "the issue stays under the fingerprint its marker carries")
				assert.Equal(t, tc.issue, n)
			}
			s, err := db.NightlyState()
			require.NoError(t, err)
			assert.Equal(t, map[string]uint64{id: 12}, s.Noted)
			assert.Equal(t, commitHash(1), s.Reference, "the rest of the state as it was")
		})
	}
}
