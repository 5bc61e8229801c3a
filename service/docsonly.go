package service

import (
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/gitops"
)

// DocsComponent is the name of the configured component whose globs name
// files that no benchmark runs, beside what gitops.IsDoc knows to be
// documentation in every repository.
const DocsComponent = "docs"

// docsOnly returns why no hunk of p can change a benchmark — every file it
// changes is documentation (gitops.IsDoc, or the configured docs
// component) — or "" when some file may.
func (b *Bot) docsOnly(p *gitops.Patch) string {
	var globs []string
	for _, c := range b.Config.Components {
		if c.Name == DocsComponent {
			globs = append(globs, c.Globs...)
		}
	}
	var paths, changed []string
	for _, f := range p.Files {
		for _, path := range []string{f.OldPath, f.NewPath} {
			if path != "" {
				paths = append(paths, path)
			}
		}
		changed = append(changed, f.Path())
	}
	if !gitops.DocsOnly(paths, globs...) {
		return ""
	}
	return fmt.Sprintf("every changed file is documentation (%s): nothing a build or benchmark reads changed, so no hunk can change the benchmark; nothing was measured",
		trim(strings.Join(changed, ", "), 120))
}
