package gitops

import (
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// docExts are the extensions of text written for people.
var docExts = map[string]bool{".md": true, ".markdown": true, ".rst": true, ".adoc": true}

// docNames are the names, without extension and in lower case, of the
// files every repository keeps for people: README, README.txt, LICENSE…
var docNames = map[string]bool{
	"readme": true, "license": true, "copying": true, "notice": true, "authors": true, "contributors": true,
	"contributing": true, "changelog": true, "codeowners": true,
}

// IsDoc reports whether the file at path (slash-separated, relative to the
// repository's root) is documentation, which no build or benchmark reads:
// Markdown, reStructuredText or AsciiDoc; a README, LICENSE, CHANGELOG and
// the like, with any extension; anything under a doc/ or docs/ directory;
// or a path that matches one of globs (a configured docs component's,
// doublestar syntax). A plain .txt file elsewhere is not documentation:
// requirements.txt is read by the build.
func IsDoc(p string, globs ...string) bool {
	base := strings.ToLower(path.Base(p))
	ext := path.Ext(base)
	if docExts[ext] || docNames[strings.TrimSuffix(base, ext)] || docNames[base] || hasDir(p, "doc", "docs") {
		return true
	}
	for _, g := range globs {
		if doublestar.MatchUnvalidated(g, p) {
			return true
		}
	}
	return false
}

// IsTest reports whether the file at path is a test: a Go _test.go file,
// a pytest module, or anything under a test, tests or testdata directory.
// A test can still change a benchmark (Go benchmarks live in _test.go
// files), so IsTest only ever adds a caveat; it never stops a measurement.
func IsTest(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, "_test.go"),
		strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"),
		strings.HasSuffix(base, "_test.py"),
		base == "conftest.py":
		return true
	}
	return hasDir(p, "test", "tests", "testdata")
}

// DocsOnly reports whether every one of paths is documentation (IsDoc with
// globs); false for no paths.
func DocsOnly(paths []string, globs ...string) bool {
	for _, p := range paths {
		if !IsDoc(p, globs...) {
			return false
		}
	}
	return len(paths) > 0
}

// DocsOrTestsOnly reports whether every one of paths is documentation or a
// test (IsDoc or IsTest); false for no paths.
func DocsOrTestsOnly(paths []string) bool {
	for _, p := range paths {
		if !IsDoc(p) && !IsTest(p) {
			return false
		}
	}
	return len(paths) > 0
}

// hasDir reports whether a directory of p is one of names.
func hasDir(p string, names ...string) bool {
	return slices.ContainsFunc(strings.Split(path.Dir(p), "/"), func(d string) bool { return slices.Contains(names, d) })
}
