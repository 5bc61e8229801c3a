package testbed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func TestEditApply(t *testing.T) {
	base := tree{"a.go": "one\ntwo\nthree\ntwo\n"}
	for _, tc := range []struct {
		name    string
		e       edit
		want    string
		span    span
		wantErr string
	}{
		{"replace", replace("a.go", "one\n", "uno\n"), "uno\ntwo\nthree\ntwo\n", span{"a.go", 1, 1}, ""},
		{"insert keeps the anchor", insertAfter("a.go", "three\n", "3\n"), "one\ntwo\nthree\n3\ntwo\n", span{"a.go", 4, 1}, ""},
		{"append", appendTo("a.go", "four\n"), "one\ntwo\nthree\ntwo\nfour\n", span{"a.go", 5, 1}, ""},
		{"ambiguous", replace("a.go", "two", "2"), "", span{}, "found 2 times"},
		{"missing text", replace("a.go", "four", "4"), "", span{}, "not found"},
		{"missing file", replace("b.go", "x", "y"), "", span{}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := base.clone()
			sp, err := tc.e.apply(tr)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.Equal(t, base, tr, "a failed edit changes nothing")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, tr["a.go"])
			assert.Equal(t, tc.span, sp)
		})
	}
}

func TestTreeChanged(t *testing.T) {
	a := tree{"keep": "1", "edit": "1", "gone": "1"}
	b := tree{"keep": "1", "edit": "2", "new": "1"}
	assert.Equal(t, []string{"edit", "gone", "new"}, a.changed(b))
}

func TestEnclosingFunc(t *testing.T) {
	src := `package p

// F does things.
func F() {
	x := 1
	_ = x
}

type T struct{}

func (t *T) M() {}

func (t T) V() {
}

var v = 1
`
	for _, tc := range []struct {
		start, size int
		want        string
	}{
		{5, 1, "F"},
		{3, 2, "F"},
		{11, 1, "(*T).M"},
		{13, 2, "T.V"},
		{16, 1, ""},
	} {
		assert.Equal(t, tc.want, enclosingFunc("p.go", src, tc.start, tc.size), "lines %d+%d", tc.start, tc.size)
	}
	assert.Empty(t, enclosingFunc("README.md", src, 5, 1))
}

func TestEngineTree(t *testing.T) {
	tr, err := engineTree()
	require.NoError(t, err)
	assert.Equal(t, goMod, tr["go.mod"])
	for _, p := range []string{"bench/bench_test.go", "communicator/options.go", "docs/communicator.md", "README.md"} {
		assert.Contains(t, tr, p)
	}
	for p, content := range tr {
		assert.NotContains(t, content, enginePath, "%s keeps perfbot's import path", p)
	}
}

// TestComponentsMatchConfig checks componentOf against the component globs
// of configs/testbed.yaml, which perfbot applies to the same paths.
func TestComponentsMatchConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "configs", "testbed.yaml"))
	require.NoError(t, err)
	var cfg struct {
		Components yaml.Node `yaml:"components"`
	}
	require.NoError(t, yaml.Unmarshal(data, &cfg))
	// Decode in order: the first matching component wins.
	type component struct {
		name  string
		globs []string
	}
	var components []component
	n := cfg.Components
	require.Equal(t, yaml.MappingNode, n.Kind)
	for i := 0; i+1 < len(n.Content); i += 2 {
		var globs []string
		require.NoError(t, n.Content[i+1].Decode(&globs))
		components = append(components, component{n.Content[i].Value, globs})
	}
	tr, err := engineTree()
	require.NoError(t, err)
	matched := map[string]bool{}
	for _, p := range tr.paths() {
		want := ""
	search:
		for _, c := range components {
			for _, g := range c.globs {
				if ok, err := doublestar.Match(g, p); err == nil && ok {
					want = c.name
					break search
				}
			}
		}
		assert.Equal(t, want, componentOf(p), "component of %s", p)
		matched[want] = true
	}
	for _, c := range components {
		assert.True(t, matched[c.name], "component %s matches no file of the engine", c.name)
	}
	assert.False(t, strings.Contains(string(data), "engine/**"), "the generated repository has no engine/ directory")
}
