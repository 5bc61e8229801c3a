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
