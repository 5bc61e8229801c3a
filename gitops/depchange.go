package gitops

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/record"
)

var (
	// goRequire is a go.mod requirement: "require mod v1" or, inside a
	// require block, "mod v1".
	goRequire = regexp.MustCompile(`^\s*(?:require\s+)?([A-Za-z0-9][^\s]*\.[^\s]*)\s+(v[0-9][^\s]*)`)
	// pyPin is a pinned requirement: "name==1.2" (extras and markers
	// allowed), in requirements*.txt or quoted in pyproject.toml.
	pyPin = regexp.MustCompile(`^\s*["']?([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?:===|==|~=|>=)\s*([0-9][^\s"',;]*)`)
	// poetryPin is a pyproject.toml table entry: name = "1.2" or "^1.2".
	poetryPin = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=\s*["'][\^~=<>]*([0-9][^"']*)["']`)
)

// DependencyChanges returns the dependency versions the patch changes in
// go.mod, requirements*.txt and pyproject.toml, sorted by file and name.
// Submodules are not in a patch: see SubmoduleChanges.
func (p *Patch) DependencyChanges() []record.DependencyChange {
	var out []record.DependencyChange
	for _, fd := range p.Files {
		file := fd.Path()
		kind, re := dependencyFile(file)
		if re == nil {
			continue
		}
		olds, news := map[string]string{}, map[string]string{}
		for _, h := range fd.Hunks {
			for line := range strings.SplitSeq(h.Text, "\n") {
				var into map[string]string
				switch {
				case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
					continue
				case strings.HasPrefix(line, "+"):
					into = news
				case strings.HasPrefix(line, "-"):
					into = olds
				default:
					continue
				}
				for _, r := range re {
					if m := r.FindStringSubmatch(line[1:]); m != nil && !strings.HasPrefix(strings.TrimSpace(line[1:]), "#") && !strings.HasPrefix(strings.TrimSpace(line[1:]), "//") {
						into[normalName(kind, m[1])] = m[2]
						break
					}
				}
			}
		}
		for name, old := range olds {
			if news[name] != old {
				out = append(out, record.DependencyChange{Kind: kind, Name: name, File: file, Old: old, New: news[name]})
			}
		}
		for name, new := range news {
			if _, ok := olds[name]; !ok {
				out = append(out, record.DependencyChange{Kind: kind, Name: name, File: file, New: new})
			}
		}
	}
	slices.SortFunc(out, func(a, b record.DependencyChange) int {
		return strings.Compare(a.File+"\x00"+a.Name, b.File+"\x00"+b.Name)
	})
	return out
}

func dependencyFile(file string) (string, []*regexp.Regexp) {
	base := path.Base(file)
	switch {
	case base == "go.mod":
		return record.DependencyGo, []*regexp.Regexp{goRequire}
	case base == "pyproject.toml":
		return record.DependencyPython, []*regexp.Regexp{pyPin, poetryPin}
	case strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"):
		return record.DependencyPython, []*regexp.Regexp{pyPin}
	}
	return "", nil
}

// normalName is a Python package's name as PEP 503 compares them.
func normalName(kind, name string) string {
	if kind != record.DependencyPython {
		return name
	}
	return PythonPackageName(name)
}

// SubmoduleChanges returns the submodules whose commit changes from
// parent to child (gitlinks, which patches leave out).
func (r *Repo) SubmoduleChanges(ctx context.Context, parent, child string) ([]record.DependencyChange, error) {
	out, err := gitCmd(ctx, r.dir, nil, nil, "diff-tree", "-r", "-z", "--no-renames", parent, child)
	if err != nil {
		return nil, fmt.Errorf("submodules of %s..%s: %w", record.ShortHash(parent), record.ShortHash(child), err)
	}
	// Each entry is ":oldmode newmode oldsha newsha status\0path\0".
	var changes []record.DependencyChange
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) < 5 || (meta[0] != "160000" && meta[1] != "160000") {
			continue
		}
		c := record.DependencyChange{Kind: record.DependencySubmodule, Name: fields[i+1], File: fields[i+1]}
		if meta[0] == "160000" {
			c.Old = meta[2]
		}
		if meta[1] == "160000" {
			c.New = meta[3]
		}
		changes = append(changes, c)
	}
	return changes, nil
}
