package record_test

import (
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
