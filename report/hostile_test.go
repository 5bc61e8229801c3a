package report

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// mentionRE is what GitHub turns into a notification: an @ that does not
// follow a word character, then a login.
var mentionRE = regexp.MustCompile(`(^|[^\w])@[A-Za-z0-9]`)

// TestRenderNeverMentions: commit metadata (a noreply email, a login, an
// author name, a subject) is written by whoever made the commit, so no
// part of it becomes an @-mention, in any kind of issue.
func TestRenderNeverMentions(t *testing.T) {
	forge := func(c record.Commit) record.Commit {
		c.Email = "1+octocat@users.noreply.github.com"
		c.Login = "hubot"
		c.Author = "@monalisa"
		c.Subject = "fix @defunkt's bug"
		return c
	}
	for _, tc := range []struct {
		name    string
		finding *record.Finding
	}{
		{"culprit", culpritWithHunks()},
		{"two culprits", twoCulprits()},
		{"candidates", candidates()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.finding
			for i := range f.Culprits {
				f.Culprits[i].Commit = forge(f.Culprits[i].Commit)
			}
			for i := range f.Candidates {
				f.Candidates[i] = forge(f.Candidates[i])
			}
			_, body, err := Render(f)
			require.NoError(t, err)
			assert.Empty(t, mentionRE.FindAllString(body, -1), "no mention in\n%s", body)
			assert.Contains(t, body, "hubot", "the login is still shown, as text")
		})
	}
}

// TestRenderEscapesWarnings: a warning quotes file names and benchmark
// output, which are escaped like every other field: they can open no HTML
// and no link.
func TestRenderEscapesWarnings(t *testing.T) {
	f := culpritWithHunks()
	f.Culprits[0].Commit.Files = []string{`docs/"><img src=x onerror=alert(1)>.md`, "docs/[click](http://evil.example).md"}
	f.Warnings = []record.Warning{{Kind: record.WarnNote, Text: "<script>alert(1)</script> and @octocat"}}
	_, body, err := Render(f)
	require.NoError(t, err)
	for _, raw := range []string{`<img`, `<script`, `[click](`} {
		assert.NotRegexp(t, `(^|[^\\])`+regexp.QuoteMeta(raw), body, "%s unescaped", raw)
	}
	assert.Empty(t, mentionRE.FindAllString(body, -1))
	assert.Contains(t, body, `docs/"\>\<img src=x onerror=alert(1)\>.md`, "the name is still shown, escaped")
}
