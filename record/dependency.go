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

// What a Descent searched.
const (
	DescentVersions = "versions" // the dependency's released versions
	DescentCommits  = "commits"  // the dependency's commits between two of them
)

// Descent is the search of a dependency bump's own history: the culprit
// measured with the dependency at each version (or commit) between the two
// it names, by the same bisection as commits, to find the version (or
// commit) of the dependency that makes the change.
type Descent struct {
	Dependency DependencyChange `json:"dependency"`
	// Over is what was searched: DescentVersions or DescentCommits.
	Over string `json:"over"`
	// Searched counts the versions (or commits) of the range, its two
	// ends included.
	Searched int     `json:"searched"`
	Outcome  Outcome `json:"outcome"`
	// Before and Culprit are the last version (or commit hash) without the
	// change and the first with it; empty unless Outcome is culprit.
	Before  string `json:"before,omitempty"`
	Culprit string `json:"culprit,omitempty"`
	// Commit is the dependency's culprit commit, when commits were
	// searched; PseudoVersion is the Go pseudo-version that names it.
	Commit        *Commit `json:"commit,omitempty"`
	PseudoVersion string  `json:"pseudo_version,omitempty"`
	// Effect is the culprit's change over Before, as the search measured
	// it, with its Confidence; Confirmed when fresh interleaved runs of
	// the two confirmed it.
	Effect     Effect  `json:"effect"`
	Confidence float64 `json:"confidence,omitempty"`
	Confirmed  bool    `json:"confirmed"`
	// Hunks are the hunks of the dependency's culprit commit localized as
	// the cause (paths as they lie in the watched tree); empty when none
	// were searched.
	Hunks []Hunk `json:"hunks,omitempty"`
	// Steps are the versions (or commits) measured, in range order.
	Steps []DescentStep `json:"steps,omitempty"`
}

// DescentStep is one version (or commit) of a dependency a descent
// measured.
type DescentStep struct {
	// Version is the version, or the dependency commit's hash; Commit the
	// commit of the watched repository perfbot made to measure it (the
	// culprit with the dependency swapped).
	Version string  `json:"version"`
	Commit  string  `json:"commit"`
	N       int     `json:"n"`
	Median  float64 `json:"median"`
	Verdict string  `json:"verdict"` // good, bad, skipped, end
}

// Label is how the descent names a version or commit: a commit's short
// hash, a version as it is.
func (d Descent) Label(v string) string {
	if d.Over == DescentCommits {
		return ShortHash(v)
	}
	return v
}

// Text is the descent's verdict in one line: "example.com/kern: versions
// v1.2.0 … v1.4.0 (4): v1.3.0 (after v1.2.0) -10.0% [-10.4%, -9.6%]".
func (d Descent) Text() string {
	first, last := "", ""
	if len(d.Steps) > 0 {
		first, last = d.Label(d.Steps[0].Version), d.Label(d.Steps[len(d.Steps)-1].Version)
	}
	s := fmt.Sprintf("%s: %s %s … %s (%d): ", d.Dependency.Name, d.Over, first, last, d.Searched)
	if d.Outcome != OutcomeCulprit {
		return s + string(d.Outcome)
	}
	s += fmt.Sprintf("%s (after %s) %s", d.Label(d.Culprit), d.Label(d.Before), d.Effect)
	if d.Commit != nil && d.Commit.Subject != "" {
		s += fmt.Sprintf(" %q", d.Commit.Subject)
	}
	if d.PseudoVersion != "" {
		s += " = " + d.PseudoVersion
	}
	if !d.Confirmed {
		s += " (not confirmed)"
	}
	return s
}
