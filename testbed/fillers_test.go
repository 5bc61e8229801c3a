package testbed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ordinary commits are data (fillers/*.txt): an edit of those files
// that an editor made by the way (a trailing blank stripped, a final
// newline added) changes every commit after it. Seed 1's heads are the
// histories the commits had when they were Go strings.
func TestFillersKeepTheHistory(t *testing.T) {
	_, m := repo(t)
	assert.Equal(t, "1f39cf297a8c3b871ad4ebca36b6fd772d53fd97", m.Head, "the Go engine's history of seed 1")
	_, gm := gpuRepo(t)
	assert.Equal(t, "5a50dfe61538045f08c4482f5a859567191ec663", gm.Head, "the GPU testbed's history of seed 1")
}

func TestParseFillers(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want [][]step
		err  string
	}{
		{
			name: "threads and every kind of edit",
			text: "# a comment\n-- commit: docs: a --\n-- write a.md --\n# A\n" +
				"-- then: docs: more a --\n-- append a.md --\n\nmore\n" +
				"-- commit: code: b --\n-- replace b.go --\nold\n\\ No newline at end of file\n-- with --\nnew\n\\ No newline at end of file\n" +
				"-- insert b.go --\nfunc f() {\n-- after it --\n\t// why\n",
			want: [][]step{
				{
					{subject: "docs: a", author: anyone, edits: []edit{write("a.md", "# A\n")}},
					{subject: "docs: more a", author: anyone, edits: []edit{appendTo("a.md", "\nmore\n")}},
				},
				{{subject: "code: b", author: anyone, edits: []edit{replace("b.go", "old", "new"), insertAfter("b.go", "func f() {\n", "\t// why\n")}}},
			},
		},
		{name: "an empty block", text: "-- commit: c --\n-- write empty --\n", want: [][]step{{{subject: "c", author: anyone, edits: []edit{write("empty", "")}}}}},
		{name: "an edit before a commit", text: "-- write a --\nx\n", err: "line 1: an edit before the first commit"},
		{name: "a replace without its new text", text: "-- commit: c --\n-- replace a --\nx\n", err: `line 2: replace without its "with" block`},
		{name: "an unknown marker", text: "-- commit: c --\n-- remove a --\n", err: `line 2: unknown marker "remove a"`},
		{name: "text after a subject", text: "-- commit: c --\nbody\n", err: "line 1: text after a commit's subject"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFillers(tc.text)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
