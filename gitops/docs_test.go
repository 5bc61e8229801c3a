package gitops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/perfbot/perfbot/gitops"
)

func TestDocsOnly(t *testing.T) {
	docsComponent := []string{"site/**"}
	tests := []struct {
		name      string
		paths     []string
		globs     []string
		docs      bool // DocsOnly
		docsTests bool // DocsOrTestsOnly
	}{
		{name: "markdown and docs/", paths: []string{"README.md", "docs/guide.txt", "python/sglang/README.md"}, docs: true, docsTests: true},
		{name: "the files people read, any case and extension", paths: []string{"LICENSE", "NOTICE", "CODEOWNERS", "Changelog.txt", "readme", "CONTRIBUTING.rst", "guide.markdown", "api.adoc"}, docs: true, docsTests: true},
		{name: "the configured docs component", paths: []string{"site/index.html", "LICENSE"}, globs: docsComponent, docs: true, docsTests: true},
		{name: "a configured docs component does not make a source file a doc", paths: []string{"comm/a.go"}, globs: docsComponent},
		{name: "a source file beside docs", paths: []string{"README.md", "comm/a.go"}},
		{name: "a test file is no doc: the benchmark may be a test", paths: []string{"engine/verify_test.go"}, docsTests: true},
		{name: "tests of three kinds", paths: []string{"engine/moe/router_test.go", "python/tests/test_topk.py", "engine/testdata/x.json", "conftest.py"}, docsTests: true},
		{name: "docs and tests", paths: []string{"docs/tuning.md", "engine/moe/router_test.go", "README.md"}, docsTests: true},
		{name: "a requirements text is no doc", paths: []string{"requirements.txt"}},
		{name: "a directory named like a doc is only a doc under doc/ or docs/", paths: []string{"readme/main.go"}},
		{name: "nothing changed", paths: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.docs, gitops.DocsOnly(tt.paths, tt.globs...), "DocsOnly")
			if tt.globs == nil {
				assert.Equal(t, tt.docsTests, gitops.DocsOrTestsOnly(tt.paths), "DocsOrTestsOnly")
			}
		})
	}
}
