package service

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/perfbot/perfbot/gitops"
)

// DocsComponent is the name of the configured component whose globs, with
// docPatterns, name the files that no benchmark runs.
const DocsComponent = "docs"

// docPatterns are the paths that are documentation in every repository:
// text for people, which no build or benchmark reads.
var docPatterns = []string{
	"**/*.md", "**/*.markdown", "**/*.rst", "**/*.adoc",
	"docs/**", "doc/**",
	"**/LICENSE", "**/LICENSE.*", "**/COPYING", "**/AUTHORS", "**/CONTRIBUTORS", "**/NOTICE", "**/CODEOWNERS",
}

// docsOnly returns why no hunk of p can change a benchmark — every file it
// changes is documentation, by docPatterns or by the configured docs
// component — or "" when some file may.
func (b *Bot) docsOnly(p *gitops.Patch) string {
	if len(p.Files) == 0 {
		return ""
	}
	patterns := docPatterns
	for _, c := range b.Config.Components {
		if c.Name == DocsComponent {
			patterns = append(patterns[:len(patterns):len(patterns)], c.Globs...)
		}
	}
	var paths []string
	for _, f := range p.Files {
		for _, path := range []string{f.OldPath, f.NewPath} {
			if path != "" && !matchAny(patterns, path) {
				return ""
			}
		}
		paths = append(paths, pathOf(f))
	}
	return fmt.Sprintf("every changed file is documentation (%s): nothing a build or benchmark reads changed, so no hunk can change the benchmark; nothing was measured",
		trim(strings.Join(paths, ", "), 120))
}

func matchAny(patterns []string, path string) bool {
	for _, g := range patterns {
		if doublestar.MatchUnvalidated(g, path) {
			return true
		}
	}
	return false
}
