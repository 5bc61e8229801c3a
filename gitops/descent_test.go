package gitops_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
)

func depModule(speed string) map[string]string {
	return map[string]string{
		"go.mod":  "module example.com/kern\n\ngo 1.21\n",
		"kern.go": "package kern\n\nconst Speed = " + speed + "\n",
	}
}

// The versions between two pins come from the proxy's list, in semver
// order (not the list's), ends included even when the list leaves them
// out, pre-releases where semver puts them, other versions left out; a
// GOPROXY without a proxy to ask is an error that says so.
func TestGoModuleVersions(t *testing.T) {
	t.Parallel()
	proxy := gitopstest.GoProxy(t, "example.com/kern", map[string]map[string]string{
		"v1.2.0": depModule("1"), "v1.10.0": depModule("1"), "v1.3.0-rc.1": depModule("1"), "v1.3.0": depModule("1"),
		"v1.9.1": depModule("1"), "v2.0.0": depModule("1"),
	})
	url := "file://" + proxy
	tests := []struct {
		name, goproxy, old, new string
		want                    []string
		err                     string
	}{
		{name: "between two pins", goproxy: url, old: "v1.2.0", new: "v1.10.0",
			want: []string{"v1.2.0", "v1.3.0-rc.1", "v1.3.0", "v1.9.1", "v1.10.0"}},
		{name: "a downgrade lists newest first", goproxy: url, old: "v1.9.1", new: "v1.3.0",
			want: []string{"v1.9.1", "v1.3.0"}},
		{name: "an unlisted end is kept", goproxy: url, old: "v1.1.0", new: "v1.3.0",
			want: []string{"v1.1.0", "v1.2.0", "v1.3.0-rc.1", "v1.3.0"}},
		{name: "direct is skipped for the next proxy", goproxy: "direct|" + url, old: "v1.9.1", new: "v2.0.0",
			want: []string{"v1.9.1", "v1.10.0", "v2.0.0"}},
		{name: "no proxy to ask", goproxy: "direct", old: "v1.2.0", new: "v1.3.0", err: "names no module proxy"},
		{name: "not a semantic version", goproxy: url, old: "1.2", new: "v1.3.0", err: "not semantic versions"},
		{name: "module the proxy lacks", goproxy: "file://" + t.TempDir(), old: "v1.2.0", new: "v1.3.0", err: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gitops.GoModuleVersions(context.Background(), tt.goproxy, "example.com/kern", tt.old, tt.new)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCompareSemver(t *testing.T) {
	t.Parallel()
	ordered := []string{"v0.0.0-20260101000000-abcdefabcdef", "v0.1.0", "v1.0.0-alpha", "v1.0.0-alpha.1", "v1.0.0-alpha.beta",
		"v1.0.0-beta.2", "v1.0.0-beta.11", "v1.0.0-rc.1", "v1.0.0", "v1.0.1", "v1.2.0", "v1.10.0", "v10.0.0"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			assert.Equal(t, want, gitops.CompareSemver(ordered[i], ordered[j]), "%s vs %s", ordered[i], ordered[j])
		}
	}
	assert.Equal(t, 0, gitops.CompareSemver("v1.0.0+build.1", "v1.0.0"), "build metadata does not count")
	assert.False(t, gitops.IsSemver("v1.0"))
}

func TestGoPseudoVersion(t *testing.T) {
	t.Parallel()
	c := record.Commit{Hash: "0123456789abcdef0123456789abcdef01234567", Date: gitopstest.Epoch}
	assert.Equal(t, "v1.2.4-0.20260101000000-0123456789ab", gitops.GoPseudoVersion("v1.2.3", c))
	assert.Equal(t, "v1.2.10-0.20260101000000-0123456789ab", gitops.GoPseudoVersion("v1.2.9", c))
	assert.Equal(t, "v1.3.0-rc.1.0.20260101000000-0123456789ab", gitops.GoPseudoVersion("v1.3.0-rc.1", c))
}

// A module's version swapped into a commit changes go.mod's requirement
// and adds the version's sums to go.sum through the proxy; the commit is
// a child of the parent given and is the same commit when made again.
func TestSwapGoModuleVersion(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	ctx := context.Background()
	proxy := gitopstest.GoProxy(t, "example.com/kern", map[string]map[string]string{"v1.0.0": depModule("100"), "v1.1.0": depModule("90")})
	t.Setenv("GOPROXY", "file://"+proxy)
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOTOOLCHAIN", "local")
	b := gitopstest.NewBuilder(t)
	b.Commit("app", map[string]string{"go.mod": "module example.com/app\n\ngo 1.21\n\nrequire example.com/kern v1.1.0\n", "main.go": "package main\n"})
	r := open(t, b.Dir)
	base, err := r.Resolve(ctx, "HEAD")
	require.NoError(t, err)
	swap := gitops.DependencySwap{GoMod: "go.mod", Module: "example.com/kern", Version: "v1.0.0"}
	h, err := r.SwapDependency(ctx, base, base, swap, "kern v1.0.0")
	require.NoError(t, err)
	again, err := r.SwapDependency(ctx, base, base, swap, "kern v1.0.0")
	require.NoError(t, err)
	assert.Equal(t, h, again, "the same swap is the same commit")
	c, err := r.Commit(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, []string{base.Hash}, c.Parents)
	mod := b.Git("--git-dir", r.Dir(), "show", h+":go.mod")
	assert.Contains(t, mod, "require example.com/kern v1.0.0")
	sum := b.Git("--git-dir", r.Dir(), "show", h+":go.sum")
	assert.Contains(t, sum, "example.com/kern v1.0.0 h1:")
	assert.Equal(t, "package main", strings.TrimSpace(b.Git("--git-dir", r.Dir(), "show", h+":main.go")), "the rest of the tree stays")

	_, err = r.SwapDependency(ctx, base, base, gitops.DependencySwap{GoMod: "go.mod", Module: "example.com/kern", Version: "v9.9.9"}, "x")
	require.ErrorContains(t, err, "go mod download")
}

// A dependency's commit swapped in for a submodule puts its tree at the
// submodule's path, in place of the gitlink; with a module named, go.mod
// points the module at that path.
func TestSwapDependencyTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dep := gitopstest.NewBuilder(t)
	dep.Commit("kern 1", map[string]string{"kern.txt": "fast\n", "go.mod": "module example.com/kern\n\ngo 1.21\n"})
	dep.Tag("v1.0.0")
	slow := dep.Commit("kern 2: slow", map[string]string{"kern.txt": "slow\n"})

	b := gitopstest.NewBuilder(t)
	b.Commit("app", map[string]string{"go.mod": "module example.com/app\n\ngo 1.21\n\nrequire example.com/kern v1.0.0\n"})
	b.Git("update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",third_party/kern")
	b.Git("commit", "-q", "-m", "add kern")
	r := open(t, b.Dir)
	require.NoError(t, r.FetchDependency(ctx, "example.com/kern", dep.Dir))
	tag, err := r.DependencyTag(ctx, "example.com/kern", "v1.0.0")
	require.NoError(t, err)
	assert.Equal(t, "kern 1", tag.Subject)
	base, err := r.Resolve(ctx, "HEAD")
	require.NoError(t, err)

	h, err := r.SwapDependency(ctx, base, base, gitops.DependencySwap{Path: "third_party/kern", Tree: slow}, "kern 2")
	require.NoError(t, err)
	assert.Equal(t, "slow", strings.TrimSpace(b.Git("--git-dir", r.Dir(), "show", h+":third_party/kern/kern.txt")))
	assert.Equal(t, "blob", b.Git("--git-dir", r.Dir(), "cat-file", "-t", h+":third_party/kern/go.mod"), "the gitlink is gone")

	if _, err := exec.LookPath("go"); err != nil {
		return
	}
	h, err = r.SwapDependency(ctx, base, base, gitops.DependencySwap{GoMod: "go.mod", Module: "example.com/kern", Path: "third_party/kern", Tree: slow}, "kern 2")
	require.NoError(t, err)
	assert.Contains(t, b.Git("--git-dir", r.Dir(), "show", h+":go.mod"), "replace example.com/kern => ./third_party/kern")
}
