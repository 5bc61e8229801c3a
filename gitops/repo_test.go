package gitops_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
)

// open clones the repository at dir into a fresh workdir.
func open(t *testing.T, dir string) *gitops.Repo {
	t.Helper()
	r, err := gitops.Open(context.Background(), dir, t.TempDir())
	require.NoError(t, err)
	return r
}

func TestResolve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	c := b.Numbered(3)
	b.Tag("v1")
	c = append(c, b.Numbered(2)...)
	b.Branch("feature")
	feature := b.Commit("feature work", map[string]string{"f.txt": "f\n"})
	b.Switch("main")
	r := open(t, b.Dir)

	tests := []struct {
		name string
		rev  string
		want string
		err  error
	}{
		{name: "full hash", rev: c[1], want: c[1]},
		{name: "short hash", rev: c[1][:7], want: c[1]},
		{name: "upper-case short hash", rev: upper(c[2][:8]), want: c[2]},
		{name: "branch", rev: "main", want: c[4]},
		{name: "origin branch", rev: "origin/feature", want: feature},
		{name: "origin branch as local name", rev: "feature", want: feature},
		{name: "annotated tag", rev: "v1", want: c[2]},
		{name: "tag parent", rev: "v1~1", want: c[1]},
		{name: "HEAD~N", rev: "HEAD~2", want: c[2]},
		{name: "caret", rev: "main^", want: c[3]},
		{name: "short hash with suffix", rev: c[4][:8] + "~4", want: c[0]},
		{name: "unknown", rev: "nope", err: gitops.ErrUnknownRevision},
		{name: "past the root", rev: "HEAD~5", err: gitops.ErrUnknownRevision},
		{name: "empty", rev: "", err: gitops.ErrUnknownRevision},
		{name: "option-like", rev: "--all", err: gitops.ErrUnknownRevision},
		{name: "too short to be a hash", rev: c[0][:3], err: gitops.ErrUnknownRevision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Resolve(ctx, tt.rev)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				assert.Contains(t, err.Error(), `resolve "`+tt.rev+`"`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Hash)
		})
	}

	_, err := r.Resolve(ctx, "nope")
	assert.EqualError(t, err, `resolve "nope": unknown revision`)
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func TestResolveAmbiguousShortHash(t *testing.T) {
	t.Parallel()
	// The builder's hashes are deterministic; among these 200 commits two
	// share their first four hex digits.
	dir, commits := gitopstest.NewRepo(t, 200)
	byPrefix := map[string]string{}
	var a, b string
	for _, c := range commits {
		if other, ok := byPrefix[c[:4]]; ok {
			a, b = other, c
			break
		}
		byPrefix[c[:4]] = c
	}
	require.NotEmpty(t, a, "fixture lost its colliding pair")
	r := open(t, dir)

	_, err := r.Resolve(context.Background(), a[:4])
	require.ErrorIs(t, err, gitops.ErrAmbiguousRevision)
	assert.Contains(t, err.Error(), a[:10])
	assert.Contains(t, err.Error(), b[:10])

	prefix := a[:4]
	for i := 4; a[i] == b[i]; i++ {
		prefix = a[:i+1]
	}
	got, err := r.Resolve(context.Background(), a[:len(prefix)+1])
	require.NoError(t, err, "one more digit disambiguates")
	assert.Equal(t, a, got.Hash)
}

func TestCommitFields(t *testing.T) {
	t.Parallel()
	b := gitopstest.NewBuilder(t)
	first := b.Commit("init", map[string]string{"a": "a\n"})
	second := b.Commit("engine: fuse the verify step\n  into one kernel\n\nIt saves a launch.\nSecond line.", map[string]string{"a": "b\n"})
	r := open(t, b.Dir)

	c, err := r.Commit(context.Background(), second)
	require.NoError(t, err)
	assert.Equal(t, record.Commit{
		Hash:    second,
		Subject: "engine: fuse the verify step into one kernel",
		Author:  "Perf Bot Test",
		Email:   "test@perfbot.invalid",
		Date:    gitopstest.Epoch.Add(2 * time.Minute),
		Parents: []string{first},
	}, withUTC(c))
	assert.Equal(t, second[:10], c.Short())
}

func withUTC(c record.Commit) record.Commit {
	c.Date = c.Date.UTC()
	return c
}

func TestOpenFetch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	b.Numbered(2)
	b.Branch("doomed")
	b.Commit("doomed", map[string]string{"d.txt": "d\n"})
	b.Switch("main")
	workdir := t.TempDir()
	r, err := gitops.Open(ctx, b.Dir, workdir)
	require.NoError(t, err)
	assert.Equal(t, b.Dir, r.Origin())
	_, err = r.Resolve(ctx, "doomed")
	require.NoError(t, err)

	tip := b.Numbered(1)[0]
	b.Tag("v2")
	b.Branch("fresh")
	fresh := b.Commit("fresh", map[string]string{"x": "x\n"})
	b.Git("branch", "-D", "doomed")
	b.Switch("main")

	_, err = r.Resolve(ctx, tip)
	require.ErrorIs(t, err, gitops.ErrUnknownRevision, "not fetched yet")
	require.NoError(t, r.Fetch(ctx))

	for rev, want := range map[string]string{"main": tip, "origin/main": tip, "v2": tip, "fresh": fresh} {
		got, err := r.Resolve(ctx, rev)
		require.NoError(t, err, rev)
		assert.Equal(t, want, got.Hash, rev)
	}
	for _, rev := range []string{"doomed", "origin/doomed"} {
		_, err := r.Resolve(ctx, rev)
		assert.ErrorIs(t, err, gitops.ErrUnknownRevision, "%s was pruned", rev)
	}

	// Opening again reuses the clone and fetches.
	more := b.Numbered(1)[0]
	again, err := gitops.Open(ctx, b.Dir, workdir)
	require.NoError(t, err)
	got, err := again.Resolve(ctx, "main")
	require.NoError(t, err)
	assert.Equal(t, more, got.Hash)
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	empty := gitopstest.NewBuilder(t)
	tests := []struct {
		name, url, want string
	}{
		{name: "empty url", url: "", want: "empty url"},
		{name: "missing path", url: filepath.Join(t.TempDir(), "nothing"), want: "clone"},
		{name: "no commits", url: empty.Dir, want: "no commits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gitops.Open(ctx, tt.url, t.TempDir())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	a := b.Commit("a", map[string]string{"m": "a\n"})
	bb := b.Commit("b", map[string]string{"m": "b\n"})
	b.Branch("side")
	f1 := b.Commit("f1", map[string]string{"s": "1\n"})
	f2 := b.Commit("f2", map[string]string{"s": "2\n"})
	b.Switch("main")
	c := b.Commit("c", map[string]string{"m": "c\n"})
	merge := b.Merge("side", "merge side")
	d := b.Commit("d", map[string]string{"m": "d\n"})
	r := open(t, b.Dir)

	tests := []struct {
		name      string
		good, bad string
		want      []string
		err       error
	}{
		{name: "linear", good: a, bad: c, want: []string{a, bb, c}},
		{name: "one commit", good: c, bad: c, want: []string{c}},
		{name: "across a merge", good: a, bad: d, want: []string{a, bb, c, merge, d}},
		{name: "side branch", good: bb, bad: f2, want: []string{bb, f1, f2}},
		{name: "good on the merged branch", good: f1, bad: d, err: gitops.ErrNotOnChain},
		{name: "good after bad", good: d, bad: a, err: gitops.ErrNotOnChain},
		{name: "unknown good", good: "nope", bad: d, err: gitops.ErrUnknownRevision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain, err := r.Chain(ctx, tt.good, tt.bad)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, c := range chain {
				got = append(got, c.Hash)
			}
			assert.Equal(t, tt.want, got)
		})
	}

	_, err := r.Chain(ctx, f1, d)
	assert.EqualError(t, err, "chain "+f1+".."+d+": good "+f1[:10]+" is not on the first-parent chain of bad "+d[:10])

	chain, err := r.Chain(ctx, c, merge)
	require.NoError(t, err)
	assert.Equal(t, "merge side", chain[1].Subject)
	assert.Equal(t, []string{c, f2}, chain[1].Parents)
}

func TestIsLocalPath(t *testing.T) {
	tests := []struct {
		name string
		url  string
		want bool
	}{
		{name: "an absolute path", url: "/srv/git/infer", want: true},
		{name: "a relative path", url: "../infer", want: true},
		{name: "a bare name", url: "infer", want: true},
		{name: "a colon after a slash", url: "./a:b", want: true},
		{name: "https", url: "https://github.com/example/infer.git"},
		{name: "ssh", url: "ssh://git@github.com/example/infer.git"},
		{name: "file", url: "file:///srv/git/infer"},
		{name: "scp-like", url: "git@github.com:example/infer.git"},
		{name: "scp-like without a user", url: "github.com:example/infer"},
		{name: "a colon before any slash", url: "a:b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, gitops.IsLocalPath(tt.url))
		})
	}
}
