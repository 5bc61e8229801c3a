package report

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// Secrets as a benchmark can print them, built by concatenation so that no
// scanner takes this file for a leak.
var (
	leakGitHub  = "ghp_" + strings.Repeat("Zq7Lm2Np4R", 4)[:36]
	leakHF      = "hf_" + strings.Repeat("kLmNoPqRsT", 4)[:34]
	leakWebhook = "https://hooks.slack.com/services/T0" + "LEAK000/B0LEAK000/" + strings.Repeat("w", 24)
	leakDBPass  = "pg-Pass-for-perf-db"
	leakProxy   = "pr0xy-Pass-42"
)

// leakingFinding is a culprit whose logs, environment, warnings and diff
// hold secrets.
func leakingFinding() *record.Finding {
	f := culpritWithHunks()
	f.Logs = "HF login with " + leakHF + "\n" +
		"notify " + leakWebhook + "\n" +
		"connect postgres://perf:" + leakDBPass + "@db/perf\n" +
		"DB password is " + leakDBPass + "\n" +
		"git push https://x-access-token:" + leakGitHub + "@github.com/o/r\n" + "PASS\n"
	f.EnvGood["GOPROXY"] = "https://bot:" + leakProxy + "@goproxy.corp.example,direct"
	f.EnvGood["HF_TOKEN"] = leakHF
	f.EnvGood["DB_PASSWORD"] = leakDBPass
	f.EnvDiffs = []record.EnvDiff{{Name: "SLACK_WEBHOOK_URL", Good: leakWebhook, Bad: ""}}
	f.Warnings = []record.Warning{{Kind: record.WarnNote, Text: "the benchmark printed " + leakGitHub}}
	f.Culprits[0].Hunks[0].Diff += "+const token = \"" + leakGitHub + "\"\n"
	f.ID = f.DerivedID()
	return f
}

// TestFilerScrubsSecrets files a leaking finding and its re-detection, and
// looks for every secret in what reached GitHub: the issue's title and
// body and the comment. The DB password has no shape: only Filer.Secrets
// names it.
func TestFilerScrubsSecrets(t *testing.T) {
	ctx := context.Background()
	fake := newFakeGitHub(t)
	filer := newTestFiler(t, fake, nil)
	filer.Secrets = []string{leakDBPass}
	f := leakingFinding()
	require.NoError(t, filer.File(ctx, f))
	require.NoError(t, filer.File(ctx, redetect(f)))

	iss := fake.Issue(1)
	require.Len(t, iss.Comments, 1)
	for _, text := range []string{iss.Title, iss.Body, iss.Comments[0]} {
		for _, s := range []string{leakGitHub, leakHF, leakWebhook, leakDBPass, leakProxy} {
			assert.NotContains(t, text, s)
		}
	}
	body := iss.Body
	assert.Contains(t, body, "HF login with REDACTED")
	assert.Contains(t, body, "notify https://hooks.slack.com/services/REDACTED")
	assert.Contains(t, body, "DB password is REDACTED")
	assert.Contains(t, body, "GOPROXY=https://bot:REDACTED@goproxy.corp.example,direct")
	assert.Contains(t, body, "DB_PASSWORD=REDACTED")
	assert.Contains(t, body, "HF_TOKEN=REDACTED")
	got, ok := fingerprintIn(body)
	require.True(t, ok, "the marker survives")
	assert.Equal(t, f.Fingerprint(), got)
}

// TestRenderScrubsTokenShapes: Render, with no secrets given, still masks
// what looks like a credential.
func TestRenderScrubsTokenShapes(t *testing.T) {
	_, body, err := Render(leakingFinding())
	require.NoError(t, err)
	for _, s := range []string{leakGitHub, leakHF, leakWebhook, leakProxy} {
		assert.NotContains(t, body, s)
	}
	assert.Contains(t, body, "DB password is "+leakDBPass, "a bare password is found only by value")
	assert.Contains(t, body, "DB_PASSWORD=REDACTED", "an environment entry is redacted by its name")
}

// TestRenderScrubbedKeepsBodyUnderGitHubLimit: masking short secrets makes
// the logs longer; the body still fits.
func TestRenderScrubbedKeepsBodyUnderGitHubLimit(t *testing.T) {
	f := culpritWithHunks()
	f.Logs = strings.Repeat("tok=abcdef ", 20000)
	_, body, err := RenderScrubbed(f, []string{"abcdef"})
	require.NoError(t, err)
	assert.LessOrEqual(t, len([]rune(body)), MaxBodyRunes)
	assert.NotContains(t, body, "abcdef")
}
