package testbed

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Kind says what a ground-truth change is.
type Kind string

// Kinds of change.
const (
	Regression  Kind = "regression"
	Improvement Kind = "improvement"
	// BuildBreak is a commit that does not build; Change.Fix names the
	// commit that repairs it.
	BuildBreak Kind = "build_break"
	// Merge is a merge commit of a side branch; its first parent is on
	// main.
	Merge Kind = "merge"
	// NonRuntime is a commit that touches only documentation and tests.
	NonRuntime Kind = "non_runtime"
)

// Metric names of the testbed's benchmarks, as configs/testbed.yaml names
// them.
const (
	VerifyTokS    = "verify_tok_s"
	DecodeTokS    = "decode_tok_s"
	AllReduceGBps = "allreduce_gbps"
	// VerifyCost is the Go testbed's speculative step in plain decode
	// steps of the target, each measured right after the other in one
	// process (lower is better): it holds still where tok/s follows the
	// host's speed.
	VerifyCost = "verify_cost"
	// VerifyMs is the GPU testbed's verify-step latency (lower is better).
	VerifyMs = "verify_ms"
)

// Manifest is the ground truth of a generated repository.
type Manifest struct {
	// Testbed is "gpu" for the PyTorch testbed (GenerateGPU) and empty for
	// the Go engine's.
	Testbed string `json:"testbed,omitempty"`
	// Repo is the repository's directory as Generate was given it.
	Repo string `json:"repo"`
	// Module is the Go module path of the generated engine; empty for the
	// GPU testbed.
	Module string `json:"module,omitempty"`
	Branch string `json:"branch"`
	Seed   int64  `json:"seed"`
	// Root and Head are the first and last commits of the first-parent
	// chain of Branch.
	Root string `json:"root"`
	Head string `json:"head"`
	// Commits counts the first-parent chain, Root and Head included.
	Commits int      `json:"commits"`
	Changes []Change `json:"changes"`
}

// Change is one ground-truth change of the history.
type Change struct {
	// ID is a letter: "a" to "g" as the package documentation lists them,
	// or "a" to "e" as gpu.go lists the GPU testbed's.
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// Commit is the change's commit and Parent its first parent.
	Commit string `json:"commit"`
	Parent string `json:"parent"`
	// Index is the commit's position on the first-parent chain, the root
	// being 0.
	Index   int    `json:"index"`
	Subject string `json:"subject"`
	Author  string `json:"author"`
	// Files are the paths the commit changes relative to Parent.
	Files []string `json:"files"`
	// Hunk is the hunk that carries the effect, for regressions and
	// improvements.
	Hunk *Hunk `json:"hunk,omitempty"`
	// Effects is the intended effect on each metric, in percent of the
	// parent's value; 0 means the metric must not move.
	Effects map[string]float64 `json:"effects,omitempty"`
	// Fix is the commit that repairs a BuildBreak.
	Fix string `json:"fix,omitempty"`
	// Note says in a sentence what the change does.
	Note string `json:"note"`
}

// Hunk locates the lines that carry a change's effect.
type Hunk struct {
	File string `json:"file"`
	// Function is the enclosing function as Go writes a method,
	// "(*tiled).Extend", or a plain name.
	Function  string `json:"function"`
	Component string `json:"component"`
	// Start and Lines give the rewritten lines of File at Commit.
	Start int `json:"start"`
	Lines int `json:"lines"`
}

// ManifestPath returns where Generate writes the manifest of a repository
// generated in dir: beside it, as dir + ".manifest.json", so that the
// repository holds nothing but the engine's history.
func ManifestPath(dir string) string {
	return filepath.Clean(dir) + ".manifest.json"
}

// Change returns the change with the given id.
func (m *Manifest) Change(id string) (Change, bool) {
	i := slices.IndexFunc(m.Changes, func(c Change) bool { return c.ID == id })
	if i < 0 {
		return Change{}, false
	}
	return m.Changes[i], true
}

// OfKind returns the changes of kind k in history order.
func (m *Manifest) OfKind(k Kind) []Change {
	var out []Change
	for _, c := range m.Changes {
		if c.Kind == k {
			out = append(out, c)
		}
	}
	return out
}

// Save writes m as indented JSON to path.
func (m *Manifest) Save(path string) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// LoadManifest reads a manifest that Generate wrote.
func LoadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode manifest %s: %w", path, err)
	}
	if m.Head == "" || len(m.Changes) == 0 {
		return nil, fmt.Errorf("manifest %s: no head or no changes", path)
	}
	return &m, nil
}
