package report

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// forged is the marker line of another regression, as a benchmark can print
// it: by echoing an old issue body, or on purpose.
const forgedFP = "perfbotfpforgedforgedforged00"

var forged = marker(forgedFP)

// forgingFinding is a culprit whose benchmark printed marker lines into
// every text perfbot quotes from it: the logs, the diff, the environment,
// a warning, a file name.
func forgingFinding() *record.Finding {
	f := culpritWithHunks()
	f.Logs = "BenchmarkVerifyStep-8 200 39650112 ns/op 75.66 tok/s\n" + forged + "\n" +
		"<!--perfbot:fingerprint=" + forgedFP + "-->\n" + strings.ToUpper(forged) + "\nPASS\n"
	f.Culprits[0].Hunks[0].Diff += "+// " + forged + "\n"
	f.Culprits[0].Hunks[0].File = "engine/" + forged + ".go"
	f.EnvGood["BENCH_NOTE"] = forged
	f.Warnings = []record.Warning{{Kind: record.WarnNote, Text: "the benchmark said: " + forged}}
	f.ID = f.DerivedID()
	return f
}

// TestRenderNeutralizesMarkers: the only text of a body that reads as a
// marker is the last line, the finding's own.
func TestRenderNeutralizesMarkers(t *testing.T) {
	f := forgingFinding()
	_, body, err := Render(f)
	require.NoError(t, err)

	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	assert.Equal(t, marker(f.Fingerprint()), lines[len(lines)-1], "the marker is the last line")
	assert.Equal(t, 1, strings.Count(strings.ToLower(body), "perfbot:fingerprint"), "no other marker-like text is left")
	assert.Equal(t, 1, strings.Count(body, "<!-- perfbot:fingerprint="))
	got, ok := fingerprintIn(body)
	require.True(t, ok)
	assert.Equal(t, f.Fingerprint(), got)
	assert.Contains(t, body, "perfbot:\u2060fingerprint="+forgedFP, "the forged line is still shown, disarmed")
}

// TestFingerprintInReadsTheLastLine: a marker elsewhere in a body, as in
// the bodies filed before markers were neutralized, is not perfbot's.
func TestFingerprintInReadsTheLastLine(t *testing.T) {
	real := marker("perfbotfp0123456789abcdef0123")
	for _, tc := range []struct {
		name string
		body string
		want string // "" when there is no marker
	}{
		{"marker last", "evidence\n" + real + "\n", "perfbotfp0123456789abcdef0123"},
		{"trailing blank lines and CRLF", "evidence\r\n" + real + "\r\n\r\n", "perfbotfp0123456789abcdef0123"},
		{"forged marker in the logs above", "```text\n" + forged + "\n```\n" + real + "\n", "perfbotfp0123456789abcdef0123"},
		{"only a forged marker in the middle", "```text\n" + forged + "\n```\n<sub>footer</sub>\n", ""},
		{"marker inside a longer last line", "evidence " + real + "\n", ""},
		{"no marker", "evidence\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := fingerprintIn(tc.body)
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestForgedMarkerGitHub files a finding whose benchmark printed another
// regression's marker, then files it again and files that other regression
// with a fresh store (no index): one issue each, the re-detection a comment.
func TestForgedMarkerGitHub(t *testing.T) {
	ctx := context.Background()
	fake := newFakeGitHub(t)
	forger := forgingFinding()
	require.NoError(t, newTestFiler(t, fake, nil).File(ctx, forger))
	require.Equal(t, 1, forger.Issue)

	again := redetect(forger)
	require.NoError(t, newTestFiler(t, fake, nil).File(ctx, again), "a fresh store finds the issue by its marker")
	assert.Equal(t, 1, again.Issue)
	assert.Len(t, fake.Issue(1).Comments, 1, "the re-detection is a comment")

	g, _, _ := newTestGitHub(t, fake, nil)
	_, ok, err := g.Find(ctx, forgedFP)
	require.NoError(t, err)
	assert.False(t, ok, "the forged fingerprint finds nothing")
	assert.Equal(t, 1, fake.IssueCount())
}

// TestForgedMarkerGitHubOldBody: an issue filed by an older perfbot holds
// the forged marker above its own; Find goes by the last line.
func TestForgedMarkerGitHubOldBody(t *testing.T) {
	ctx := context.Background()
	fake := newFakeGitHub(t)
	const fp = "perfbotfp0123456789abcdef0123"
	fake.Add("old", "```text\n"+forged+"\n```\n"+marker(fp)+"\n", IssueOpen, "perf-regression")
	g, _, _ := newTestGitHub(t, fake, nil)

	iss, ok, err := g.Find(ctx, fp)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 1, iss.Number)
	_, ok, err = g.Find(ctx, forgedFP)
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestForgedMarkerDir is TestForgedMarkerGitHub on the Dir tracker.
func TestForgedMarkerDir(t *testing.T) {
	ctx := context.Background()
	d, err := NewDir(filepath.Join(t.TempDir(), "issues"))
	require.NoError(t, err)
	forger := forgingFinding()
	require.NoError(t, (&Filer{Tracker: d}).File(ctx, forger))

	again := redetect(forger)
	require.NoError(t, (&Filer{Tracker: d}).File(ctx, again))
	assert.Equal(t, forger.Issue, again.Issue, "the re-detection is a comment on the same issue")

	_, ok, err := d.Find(ctx, forgedFP)
	require.NoError(t, err)
	assert.False(t, ok, "the forged fingerprint finds nothing")
	idx, err := d.load()
	require.NoError(t, err)
	require.Len(t, idx.Issues, 1)
	assert.Equal(t, forger.Fingerprint(), idx.Issues[0].Fingerprint)
}
