package record

import "fmt"

// The kinds of DependencyChange.
const (
	DependencyGo        = "go"        // a Go module required in go.mod
	DependencyPython    = "python"    // a pin of requirements*.txt or pyproject.toml
	DependencySubmodule = "submodule" // a git submodule's commit
)

// DependencyChange is a version change of one dependency that a commit
// makes.
type DependencyChange struct {
	Kind string `json:"kind"`
	// Name is the module, the package or the submodule's path; File the
	// file that pins it (the submodule's path for a submodule).
	Name string `json:"name"`
	File string `json:"file"`
	// Old and New are the versions (commit hashes for a submodule); Old is
	// "" for a dependency the commit adds, New "" for one it drops.
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// String is "name old → new (file)".
func (d DependencyChange) String() string {
	old, new := d.Old, d.New
	if d.Kind == DependencySubmodule {
		old, new = ShortHash(old), ShortHash(new)
	}
	if old == "" {
		old = "(none)"
	}
	if new == "" {
		new = "(removed)"
	}
	return fmt.Sprintf("%s %s → %s (%s)", d.Name, old, new, d.File)
}
