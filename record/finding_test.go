package record_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/perfbot/perfbot/record"
)

func TestFingerprint(t *testing.T) {
	culprit := func(hash string, hunks ...string) record.Culprit {
		c := record.Culprit{Commit: record.Commit{Hash: hash}}
		for _, h := range hunks {
			c.Hunks = append(c.Hunks, record.Hunk{ID: h})
		}
		return c
	}
	base := record.Finding{Metric: "verify_tok_s", Culprits: []record.Culprit{culprit("aaaa")}}
	withHunks := record.Finding{Metric: "verify_tok_s", Culprits: []record.Culprit{culprit("aaaa", "h1", "h2")}}
	otherMetric := record.Finding{Metric: "decode_tok_s", Culprits: []record.Culprit{culprit("aaaa")}}
	otherCommit := record.Finding{Metric: "verify_tok_s", Culprits: []record.Culprit{culprit("bbbb")}}
	candidates := record.Finding{Metric: "verify_tok_s", Candidates: []record.Commit{{Hash: "aaaa"}, {Hash: "bbbb"}}}

	assert.Equal(t, base.Fingerprint(), withHunks.Fingerprint(), "a hunk search does not make a second regression")
	assert.NotEqual(t, base.Fingerprint(), otherMetric.Fingerprint())
	assert.NotEqual(t, base.Fingerprint(), otherCommit.Fingerprint())
	assert.NotEqual(t, base.Fingerprint(), candidates.Fingerprint())
	assert.Regexp(t, `^perfbotfp[0-9a-f]{20}$`, base.Fingerprint())
	assert.Equal(t, []record.Hunk{{ID: "h1"}, {ID: "h2"}}, withHunks.Hunks())
}

func TestHunkLineCounts(t *testing.T) {
	for _, tc := range []struct {
		name           string
		diff           string
		added, removed int
	}{
		{"a fragment", "@@ -41,3 +41,4 @@ func f() {\n \ta\n-\tb\n+\tc\n+\td\n \te\n", 2, 1},
		{"two fragments", "@@ -1,2 +1,2 @@\n-a\n+b\n@@ -9,2 +9,1 @@\n-x\n-y\n+z\n", 2, 3},
		{"a whole file: its header is not counted", "diff --git a/f b/f\nnew file mode 100644\n--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n", 2, 0},
		{"no fragment", "Binary files differ\n", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := record.Hunk{Diff: tc.diff}
			added, removed := h.LineCounts()
			assert.Equal(t, [2]int{tc.added, tc.removed}, [2]int{added, removed})
			assert.Equal(t, fmt.Sprintf("+%d −%d", tc.added, tc.removed), h.Size())
		})
	}
}

// TestDerivedID: one short id names a finding everywhere; a culprit's is
// the start of the fingerprint its issue's marker carries, and findings
// of other outcomes with the same fingerprint have ids of their own.
func TestDerivedID(t *testing.T) {
	culprit := record.Finding{Metric: "verify_tok_s", Outcome: record.OutcomeCulprit, Culprits: []record.Culprit{{Commit: record.Commit{Hash: "c1"}}}}
	candidates := record.Finding{Metric: "verify_tok_s", Outcome: record.OutcomeCandidates, Candidates: []record.Commit{{Hash: "c1"}}}
	broken := candidates
	broken.Outcome = record.OutcomeBuildBroken
	nr := func(good, bad string) record.Finding {
		return record.Finding{Metric: "verify_tok_s", Outcome: record.OutcomeNotReproduced, Good: record.End{Commit: record.Commit{Hash: good}}, Bad: record.End{Commit: record.Commit{Hash: bad}}}
	}
	for _, tc := range []struct {
		name string
		f    record.Finding
		want string // "" when it is not the fingerprint's start
	}{
		{"a culprit's", culprit, culprit.Fingerprint()[len(record.FindingMarker):][:record.IDDigits]},
		{"candidates'", candidates, candidates.Fingerprint()[len(record.FindingMarker):][:record.IDDigits]},
		{"a nightly build broken, with the candidates' fingerprint", broken, ""},
		{"not reproduced", nr("g1", "b1"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.f.DerivedID()
			assert.Regexp(t, `^[0-9a-f]{10}$`, id)
			if tc.want != "" {
				assert.Equal(t, tc.want, id)
			}
			assert.Equal(t, id, tc.f.DerivedID(), "the same finding, the same id")
		})
	}
	assert.NotEqual(t, candidates.DerivedID(), broken.DerivedID(), "one fingerprint, two outcomes: two findings")
	nr1, nr2 := nr("g1", "b1"), nr("g2", "b2")
	assert.NotEqual(t, nr1.DerivedID(), nr2.DerivedID(), "two ranges not reproduced: two findings")

	// An older perfbot's ids.
	assert.Equal(t, culprit.DerivedID(), record.FindingID(culprit.Fingerprint()))
	assert.Equal(t, broken.DerivedID(), record.FindingID(broken.Fingerprint()+"-build_broken"))
	assert.Equal(t, "3f2a9c", record.FindingID("perfbotfp3f2a9c"), "an abbreviated fingerprint is a prefix of the id")
}
