package gitops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
)

// A dependency bump is named with its two versions, for every kind of
// file that pins one; other lines of those files are not taken for pins.
func TestDependencyChanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		old, new map[string]string
		want     []record.DependencyChange
	}{
		{name: "go module in a require block",
			old:  map[string]string{"go.mod": "module x\n\ngo 1.22\n\nrequire (\n\tgolang.org/x/sync v0.6.0\n\texample.com/kern v1.2.0\n)\n"},
			new:  map[string]string{"go.mod": "module x\n\ngo 1.23\n\nrequire (\n\tgolang.org/x/sync v0.6.0\n\texample.com/kern v1.4.1\n)\n"},
			want: []record.DependencyChange{{Kind: "go", Name: "example.com/kern", File: "go.mod", Old: "v1.2.0", New: "v1.4.1"}}},
		{name: "requirements pin",
			old: map[string]string{"requirements.txt": "numpy==1.26.4\n# torch==2.3.0\ntorch==2.3.0\n"},
			new: map[string]string{"requirements.txt": "numpy==1.26.4\n# torch==2.3.0\ntorch==2.4.1\nflashinfer-python==0.2.14\n"},
			want: []record.DependencyChange{
				{Kind: "python", Name: "flashinfer-python", File: "requirements.txt", New: "0.2.14"},
				{Kind: "python", Name: "torch", File: "requirements.txt", Old: "2.3.0", New: "2.4.1"},
			}},
		{name: "pyproject dependencies",
			old:  map[string]string{"pyproject.toml": "[project]\nname = \"engine\"\ndependencies = [\n  \"sgl-kernel==0.1.0\",\n]\n"},
			new:  map[string]string{"pyproject.toml": "[project]\nname = \"engine\"\ndependencies = [\n  \"sgl-kernel==0.1.4\",\n]\n"},
			want: []record.DependencyChange{{Kind: "python", Name: "sgl-kernel", File: "pyproject.toml", Old: "0.1.0", New: "0.1.4"}}},
		{name: "no dependency file", old: map[string]string{"a.go": "package a\n"}, new: map[string]string{"a.go": "package a // v2\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := gitopstest.NewBuilder(t)
			parent := b.Commit("old", tt.old)
			child := b.Commit("bump", tt.new)
			r := open(t, b.Dir)
			p, err := r.Diff(context.Background(), parent, child)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.DependencyChanges())
		})
	}
}

// A submodule's commit change is read from the trees, which patches
// leave out.
func TestSubmoduleChanges(t *testing.T) {
	t.Parallel()
	b := gitopstest.NewBuilder(t)
	oldSHA, newSHA := strings.Repeat("1", 40), strings.Repeat("2", 40)
	b.Commit("base", map[string]string{"README": "r\n"})
	b.Git("update-index", "--add", "--cacheinfo", "160000,"+oldSHA+",third_party/nccl")
	b.Git("commit", "-q", "-m", "add nccl")
	parent := b.Head()
	b.Git("update-index", "--cacheinfo", "160000,"+newSHA+",third_party/nccl")
	b.Git("commit", "-q", "-m", "bump nccl")
	r := open(t, b.Dir)
	got, err := r.SubmoduleChanges(context.Background(), parent, b.Head())
	require.NoError(t, err)
	assert.Equal(t, []record.DependencyChange{{Kind: "submodule", Name: "third_party/nccl", File: "third_party/nccl", Old: oldSHA, New: newSHA}}, got)
	assert.Equal(t, "third_party/nccl 1111111111 → 2222222222 (third_party/nccl)", got[0].String())
}
