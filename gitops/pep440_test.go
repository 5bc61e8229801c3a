package gitops_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
)

// Python versions order as PEP 440 says, on the spellings real torch and
// flashinfer wheels use.
func TestComparePythonVersions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{"release segments are numbers", "2.10.0", "2.9.1", 1},
		{"patch release", "2.4.1", "2.4.0", 1},
		{"trailing zeros do not count", "2.4", "2.4.0", 0},
		{"a release candidate before its final", "2.5.0rc1", "2.5.0", -1},
		{"a release candidate after the release before", "2.5.0rc1", "2.4.1", 1},
		{"alpha before beta before rc", "1.0a2", "1.0b1", -1},
		{"beta before rc", "1.0b3", "1.0rc1", -1},
		{"pre-release numbers", "2.5.0rc10", "2.5.0rc2", 1},
		{"a post release after its final", "0.2.14.post1", "0.2.14", 1},
		{"a post release before the next", "0.2.14.post1", "0.2.15", -1},
		{"post releases by number", "0.2.14.post2", "0.2.14.post1", 1},
		{"a dev release before its pre-releases", "1.0.dev1", "1.0a1", -1},
		{"a dev release of a pre-release before it", "1.0rc1.dev2", "1.0rc1", -1},
		{"a dev release of a post release before it", "1.0.post1.dev0", "1.0.post1", -1},
		{"a dev release of a post release after the final", "1.0.post1.dev0", "1.0", 1},
		{"a local label after its version", "2.5.0+cu128", "2.5.0", 1},
		{"a local label before the next version", "2.5.0+cu128", "2.5.1", -1},
		{"local labels compare", "2.5.0+cu128", "2.5.0+cu124", 1},
		{"numbers after words in a label", "1.0+1", "1.0+abc", 1},
		{"spellings normalize", "1.0-RC1", "1.0rc1", 0},
		{"a post release spelled with a dash", "1.0-1", "1.0.post1", 0},
		{"epochs first", "1!0.1", "2.0", 1},
		{"not a version sorts first", "latest", "0.1", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, gitops.ComparePythonVersions(tt.a, tt.b), "%s vs %s", tt.a, tt.b)
			assert.Equal(t, -tt.want, gitops.ComparePythonVersions(tt.b, tt.a), "%s vs %s", tt.b, tt.a)
		})
	}
}

// A wheel's file name gives its package, normalized, and version.
func TestWheelVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, name, version string
		ok                  bool
	}{
		{"torch-2.5.0+cu128-cp312-cp312-linux_x86_64.whl", "torch", "2.5.0+cu128", true},
		{"flashinfer_python-0.2.14.post1-cp39-abi3-linux_x86_64.whl", "flashinfer-python", "0.2.14.post1", true},
		{"Kern.Ops-1.3.0-1build-py3-none-any.whl", "kern-ops", "1.3.0", true},
		{"kern-1.3.0.tar.gz", "", "", false},
		{"kern-1.3.0-py3-any.whl", "", "", false},
		{"kern-latest-py3-none-any.whl", "", "", false},
	}
	for _, tt := range tests {
		name, version, ok := gitops.WheelVersion(tt.file)
		assert.Equal(t, tt.ok, ok, tt.file)
		assert.Equal(t, tt.name, name, tt.file)
		assert.Equal(t, tt.version, version, tt.file)
	}
}

// The versions between two pins are the directory's wheels of the
// package, in PEP 440 order (from new to old for a downgrade), each once,
// the ends spelled as the pins spell them; an end without a wheel is an
// error that names it.
func TestWheelVersions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{
		"kern-0.9.0-py3-none-any.whl", "kern-1.0.0-py3-none-any.whl", "kern-1.3.0-py3-none-any.whl",
		"kern-1.3.0-cp312-cp312-linux_x86_64.whl", "kern-1.10.0-py3-none-any.whl", "kern-1.2.0rc1-py3-none-any.whl",
		"kern-1.2.0-py3-none-any.whl", "kern-1.4-py3-none-any.whl", "kern-1.1.0.post1-py3-none-any.whl",
		"other-1.1.0-py3-none-any.whl", "kern-1.1.5.tar.gz",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	tests := []struct {
		name, pkg, old, new string
		want                []string
		err                 string
	}{
		{name: "an upgrade", pkg: "kern", old: "1.0.0", new: "1.4.0",
			want: []string{"1.0.0", "1.1.0.post1", "1.2.0rc1", "1.2.0", "1.3.0", "1.4.0"}},
		{name: "a downgrade", pkg: "Kern", old: "1.3.0", new: "1.1.0.post1",
			want: []string{"1.3.0", "1.2.0", "1.2.0rc1", "1.1.0.post1"}},
		{name: "an end without a wheel", pkg: "kern", old: "1.0.0", new: "1.5.0",
			err: "holds no wheel of kern 1.5.0"},
		{name: "not versions", pkg: "kern", old: "main", new: "1.4.0",
			err: `"main".."1.4.0" are not PEP 440 versions`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gitops.WheelVersions(dir, tt.pkg, tt.old, tt.new)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := gitops.WheelVersions(filepath.Join(dir, "absent"), "kern", "1.0.0", "1.4.0")
	require.ErrorContains(t, err, "read the wheels directory")
}

// A Python version swapped into a commit rewrites the package's pin, and
// only its, in the same syntax, to exactly that version.
func TestSwapPythonPin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	b.Commit("app", map[string]string{
		"requirements.txt": "# kern==0.1 is too old\nnumpy==1.26.4\nKern_Ops[cuda] >= 1.4.0 ; python_version >= '3.10'\n",
		"pyproject.toml":   "[project]\ndependencies = [\n  \"numpy==1.26.4\",\n  \"kern-ops==1.4.0\",\n]\n\n[tool.poetry.dependencies]\nkern-ops = \"^1.4.0\"\n",
	})
	r := open(t, b.Dir)
	base, err := r.Resolve(ctx, "HEAD")
	require.NoError(t, err)
	tests := []struct {
		name, file, want string
	}{
		{"requirements", "requirements.txt", "# kern==0.1 is too old\nnumpy==1.26.4\nKern_Ops[cuda] == 1.3.0 ; python_version >= '3.10'\n"},
		{"pyproject", "pyproject.toml", "[project]\ndependencies = [\n  \"numpy==1.26.4\",\n  \"kern-ops==1.3.0\",\n]\n\n[tool.poetry.dependencies]\nkern-ops = \"1.3.0\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			swap := gitops.DependencySwap{Pins: tt.file, Package: "kern.ops", Version: "1.3.0"}
			h, err := r.SwapDependency(ctx, base, base, swap, "kern 1.3.0")
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSuffix(tt.want, "\n"), b.Git("--git-dir", r.Dir(), "show", h+":"+tt.file))
		})
	}
	_, err = r.SwapDependency(ctx, base, base, gitops.DependencySwap{Pins: "requirements.txt", Package: "torch", Version: "2.5.0"}, "x")
	require.ErrorContains(t, err, "requirements.txt pins no version of torch")
}
