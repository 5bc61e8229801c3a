package gitops

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// The source scanners read whatever a commit holds: sources that do not
// parse, binary junk in a .go file, Python with mixed tabs. The fuzz
// targets build patches in memory (no repository, so each execution is
// cheap) and check that the scanners do not panic and that what they
// return is well formed. Seeds are the tests' sources.

var scanSeeds = []string{
	"package p\nfunc (r R) M() {\n}\n",
	"package p\nfunc (r *R[K, V]) M() {\n}\n",
	"package p\n// F does.\nfunc F() {}\n",
	"package p\ntype (\n\tA int\n\tB struct {\n\t\tx int\n\t}\n)\n",
	"package p\nfunc F() {\n\tx :=\n}\n",
	"<<<<<<< ours\n",
	"package engine\n\nimport \"fmt\"\n\nfunc Step(cfg Config) error {\n\tfmt.Println(\"step\")\n\treturn nil\n}\n\nfunc Verify() error {\n\terr := check()\n\treturn err\n}\n",
	"class A:\n    \"\"\"Doc.\n\"\"\"\n    x = 1\n\n    @staticmethod\n    def f(\n        a,\n    ) -> int:\n        if a:\n            return 1\n        # comment\n        return 2\ny = 3\nclass B:\n\tdef tabbed(self):\n\t\tpass\n",
	"import os\nfrom .comm import all_reduce, Ring\nfrom ..ops import *\n\ndef step(x):\n    return all_reduce(x)\n",
}

// sourceFile is a modified file whose new content is src, every line added,
// cut into two hunks at line cut.
func sourceFile(path, src string, cut int) *FileDiff {
	lines := strings.SplitAfter(src, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	cut = min(max(cut, 0), len(lines))
	fd := &FileDiff{OldPath: path, NewPath: path, Kind: Modified, old: []byte{}, new: []byte(src)}
	start := 1
	for i, part := range [][]string{lines[:cut], lines[cut:]} {
		frag := &gitdiff.TextFragment{NewPosition: int64(start), NewLines: int64(len(part)), LinesAdded: int64(len(part))}
		for _, l := range part {
			frag.Lines = append(frag.Lines, gitdiff.Line{Op: gitdiff.OpAdd, Line: l})
		}
		start += len(part)
		id := strings.NewReplacer("/", "_", ".", "_").Replace(path) + "-" + string(rune('1'+i))
		fd.Hunks = append(fd.Hunks, &Hunk{ID: id, File: path, frags: []*gitdiff.TextFragment{frag}})
	}
	return fd
}

// goName and pyName are the shapes functionName may return for Go (with
// receiver) and Python (a dotted path); git's hunk header is the fallback.
var (
	goName = regexp.MustCompile(`^(?:\(\*[\pL_?][\pL\pN_]*\)\.|[\pL_?][\pL\pN_]*\.)?[\pL_][\pL\pN_]*$`)
	pyName = regexp.MustCompile(`^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$`)
)

func FuzzFunctionName(f *testing.F) {
	for i, s := range scanSeeds {
		f.Add(s, uint16(i%5+1), strings.Contains(s, "def ") || strings.Contains(s, "class "))
	}
	f.Fuzz(func(t *testing.T, src string, line uint16, python bool) {
		path, name := "engine/step.go", goName
		if python {
			path, name = "engine/step.py", pyName
		}
		fd := sourceFile(path, src, int(line))
		for _, h := range fd.Hunks {
			frag := h.frags[0]
			frag.Comment = "func header()"
			got := functionName(fd, frag)
			if got != "" && got != frag.Comment && !name.MatchString(got) {
				t.Fatalf("%s: function name %q", path, got)
			}
		}
		// The scanners below functionName take any line number.
		for _, n := range []int{int(line), -int(line), 1 << 20} {
			if got, _ := goDecl([]byte(src), n); got != "" && !goName.MatchString(got) {
				t.Fatalf("goDecl(%d) = %q", n, got)
			}
			if got := pythonScope([]byte(src), n); got != "" && !pyName.MatchString(got) {
				t.Fatalf("pythonScope(%d) = %q", n, got)
			}
		}
	})
}

func FuzzDependencies(f *testing.F) {
	for i, s := range scanSeeds {
		f.Add(s, scanSeeds[(i+7)%len(scanSeeds)], uint16(i%4))
	}
	f.Fuzz(func(t *testing.T, goSrc, pySrc string, cut uint16) {
		lib := &FileDiff{NewPath: "engine/ops/x.go", Kind: Added, new: []byte("package ops\n\nfunc Step() {}\n")}
		lib.Hunks = []*Hunk{{ID: "lib-1", File: lib.NewPath, frags: []*gitdiff.TextFragment{{NewPosition: 1, NewLines: 3,
			Lines: []gitdiff.Line{{Op: gitdiff.OpAdd, Line: "package ops\n"}, {Op: gitdiff.OpAdd, Line: "\n"}, {Op: gitdiff.OpAdd, Line: "func Step() {}\n"}}}}}}
		p := &Patch{Files: []*FileDiff{
			sourceFile("engine/step.go", goSrc, int(cut)),
			sourceFile("engine/comm.py", pySrc, int(cut)),
			sourceFile("engine/ops/__init__.py", goSrc+pySrc, int(cut)/2),
			lib,
		}}
		ids := map[string]bool{}
		for _, h := range p.Hunks() {
			ids[h.ID] = true
		}
		deps := p.Dependencies()
		for from, to := range deps {
			if !ids[from] {
				t.Fatalf("dependencies of unknown hunk %q", from)
			}
			if len(to) == 0 || !slices.IsSorted(to) || len(slices.Compact(slices.Clone(to))) != len(to) {
				t.Fatalf("hunk %s needs %v: want a sorted list without repeats", from, to)
			}
			for _, d := range to {
				if !ids[d] || d == from {
					t.Fatalf("hunk %s needs %q", from, d)
				}
			}
		}
		if again := p.Dependencies(); !reflect.DeepEqual(deps, again) {
			t.Fatalf("two scans differ: %v, %v", deps, again)
		}
	})
}
