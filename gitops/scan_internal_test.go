package gitops

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPythonScope(t *testing.T) {
	src := `class A:
    """Doc.
"""
    x = 1

    @staticmethod
    def f(
        a,
    ) -> int:
        if a:
            return 1
        # comment at a lower depth
# comment at column 0
        return 2
y = 3
class B:
	def tabbed(self):
		pass
`
	tests := []struct {
		name string
		line int
		want string
	}{
		{name: "class body after a docstring", line: 4, want: "A"},
		{name: "decorator names the def", line: 6, want: "A.f"},
		{name: "def line", line: 7, want: "A.f"},
		{name: "inside if after wrapped signature", line: 11, want: "A.f"},
		{name: "after comments at lower depth", line: 14, want: "A.f"},
		{name: "module level", line: 15, want: ""},
		{name: "tab indentation", line: 18, want: "B.tabbed"},
		{name: "out of range", line: 99, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pythonScope([]byte(src), tt.line))
		})
	}
}

func TestGoDecl(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		line   int
		want   string
		parsed bool
	}{
		{name: "value receiver", src: "package p\nfunc (r R) M() {\n}\n", line: 3, want: "R.M", parsed: true},
		{name: "generic pointer receiver", src: "package p\nfunc (r *R[K, V]) M() {\n}\n", line: 2, want: "(*R).M", parsed: true},
		{name: "doc comment", src: "package p\n// F does.\nfunc F() {}\n", line: 2, want: "F", parsed: true},
		{name: "type group", src: "package p\ntype (\n\tA int\n\tB struct {\n\t\tx int\n\t}\n)\n", line: 5, want: "B", parsed: true},
		{name: "var is not named", src: "package p\nvar v = 1\n", line: 2, want: "", parsed: true},
		{name: "does not parse", src: "package p\nfunc F() {\n\tx :=\n}\n", line: 3, want: "F", parsed: false},
		{name: "not Go at all", src: "<<<<<<< ours\n", line: 1, want: "", parsed: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, parsed := goDecl([]byte(tt.src), tt.line)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.parsed, parsed)
		})
	}
}

func TestProvides(t *testing.T) {
	tests := []struct {
		name    string
		file    string // the importing file
		line    string // its import line
		newPath string // the new file
		want    bool
	}{
		{name: "go import path suffix", line: "", newPath: "engine/spec/d.go", want: true},
		{name: "python absolute", file: "a/x.py", line: "import sglang.srt.topk", newPath: "python/sglang/srt/topk.py", want: true},
		{name: "python from package import module", file: "a/x.py", line: "from sglang.srt import topk", newPath: "python/sglang/srt/topk.py", want: true},
		{name: "python package init", file: "a/x.py", line: "import sglang.srt", newPath: "python/sglang/srt/__init__.py", want: true},
		{name: "python relative sibling", file: "pkg/comm/x.py", line: "from .topk import f", newPath: "pkg/comm/topk.py", want: true},
		{name: "python relative parent", file: "pkg/comm/x.py", line: "from ..layers import topk", newPath: "pkg/layers/topk.py", want: true},
		{name: "python relative elsewhere", file: "pkg/comm/x.py", line: "from .topk import f", newPath: "other/topk.py", want: false},
		{name: "python unrelated", file: "a/x.py", line: "import numpy as np", newPath: "python/sglang/srt/topk.py", want: false},
		{name: "python suffix must align on a dot", file: "a/x.py", line: "import k", newPath: "python/topk.py", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			imp := importRef{lang: "go", modules: []string{"example.com/infer/engine/spec"}}
			if tt.file != "" {
				imp = importRef{lang: "py", modules: pythonImports(tt.file, tt.line)}
			}
			assert.Equal(t, tt.want, provides(tt.newPath, imp), "modules %q", imp.modules)
		})
	}
}
