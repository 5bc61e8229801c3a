package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// Target is what is measured: a commit, optionally with a subset of hunks of
// another diff applied on top, optionally with environment overrides.
type Target struct {
	// Commit is the full hash of the commit that is checked out.
	Commit string `json:"commit"`
	// Patch identifies the diff the hunks come from (for example
	// "parent..culprit" hashes, or "worktree:<hash of the diff>"); empty when
	// no hunks are applied.
	Patch string `json:"patch,omitempty"`
	// Hunks are the ids of the hunks of Patch applied on top of Commit.
	Hunks []string `json:"hunks,omitempty"`
	// Env overrides variables of every benchmark step's environment.
	Env map[string]string `json:"env,omitempty"`
}

// Key is a stable hash of the target: two targets with the same key build
// and run the same thing.
func (t Target) Key() string {
	var b strings.Builder
	b.WriteString("commit=" + t.Commit + "\n")
	if len(t.Hunks) > 0 {
		hs := append([]string(nil), t.Hunks...)
		sort.Strings(hs)
		b.WriteString("patch=" + t.Patch + "\n")
		b.WriteString("hunks=" + strings.Join(hs, ",") + "\n")
	}
	keys := make([]string, 0, len(t.Env))
	for k := range t.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("env." + k + "=" + t.Env[k] + "\n")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:12])
}

// Short is the commit's abbreviated hash with a marker for hunks and env.
func (t Target) Short() string {
	s := ShortHash(t.Commit)
	if len(t.Hunks) > 0 {
		s += "+" + strings.Join(t.Hunks, ",")
	}
	if len(t.Env) > 0 {
		s += "+env"
	}
	return s
}

// ShortHash is the first 10 characters of a commit hash, the one
// abbreviation perfbot prints and files.
func ShortHash(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

// Step is one shell command run in the checkout.
type Step struct {
	Name    string            `json:"name"`
	Run     string            `json:"run"`
	Timeout time.Duration     `json:"timeout"`
	Env     map[string]string `json:"env,omitempty"`
}

// BenchStep is a benchmark command and the format of its output.
type BenchStep struct {
	Step
	Format string `json:"format"`
	// Options are format-specific parser options (regex patterns, JSON
	// fields); part of the spec hash.
	Options map[string]string `json:"options,omitempty"`
	// Server, when set, is started before the step and stopped after it:
	// the step drives it (a load generator against an inference server).
	Server *Server `json:"server,omitempty"`
}

// Server is a long-running process a benchmark step needs, such as an
// inference server: started in the step's tree in a process group of its
// own, ready when ReadyURL answers 200, and stopped (the whole group, then
// its port checked free) when the step ends, however it ends.
type Server struct {
	// Run is the shell command that starts the server in the foreground.
	Run string `json:"run"`
	// Env is added to the server's environment (the target's overrides
	// apply to it too).
	Env map[string]string `json:"env,omitempty"`
	// ReadyURL is polled until it answers 200; its host and port are
	// checked free after the server stopped.
	ReadyURL string `json:"ready_url"`
	// StartTimeout bounds the wait for ReadyURL.
	StartTimeout time.Duration `json:"start_timeout"`
	// LogCap bounds the server log kept with the run, in bytes; the
	// runner's log cap when zero.
	LogCap int `json:"log_cap,omitempty"`
}

// Metric names one value of one benchmark step's output.
type Metric struct {
	Name      string `json:"name"`
	Benchmark string `json:"benchmark"`
	Select    string `json:"select"`
	Unit      string `json:"unit"`
	Better    Better `json:"better"`
	Primary   bool   `json:"primary,omitempty"`
	// Quiet metrics are measured and kept as evidence (the terms of the
	// speculative breakdown) but raise no nightly alert of their own.
	Quiet bool `json:"quiet,omitempty"`
}

// Spec is how a target is built and benchmarked. Its hash is part of every
// cache key, so changing the benchmark never mixes old and new numbers.
type Spec struct {
	Build      []Step      `json:"build"`
	Benchmarks []BenchStep `json:"benchmarks"`
	Metrics    []Metric    `json:"metrics"`
}

// Hash is a stable hash of everything that changes what a run measures.
func (s Spec) Hash() string {
	b, _ := json.Marshal(s) // maps marshal in key order; the struct holds nothing that fails
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
