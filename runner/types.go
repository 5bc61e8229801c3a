package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/perfbot/perfbot/bench"
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
	s := t.Commit
	if len(s) > 10 {
		s = s[:10]
	}
	if len(t.Hunks) > 0 {
		s += "+" + strings.Join(t.Hunks, ",")
	}
	if len(t.Env) > 0 {
		s += "+env"
	}
	return s
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
}

// Metric names one value of one benchmark step's output.
type Metric struct {
	Name      string          `json:"name"`
	Benchmark string          `json:"benchmark"`
	Select    string          `json:"select"`
	Unit      string          `json:"unit"`
	Better    bench.Direction `json:"better"`
	Primary   bool            `json:"primary,omitempty"`
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

// Status is the outcome of a run.
type Status string

const (
	StatusOK          Status = "ok"
	StatusBuildFailed Status = "build_failed"
	StatusBenchFailed Status = "bench_failed"
	StatusInfraError  Status = "infra_error"
)

// Run is one execution of a Spec on a Target on a host: the build (when it
// had to be done) and one invocation of every benchmark step.
type Run struct {
	ID        uint64        `json:"id"` // assigned by the store
	TargetKey string        `json:"target_key"`
	SpecHash  string        `json:"spec_hash"`
	Target    Target        `json:"target"`
	Host      string        `json:"host"`
	Status    Status        `json:"status"`
	Error     string        `json:"error,omitempty"`
	Started   time.Time     `json:"started"`
	Duration  time.Duration `json:"duration"`
	// Overhead is the part of Duration not spent in build or benchmark
	// commands (perfbot's own cost).
	Overhead    time.Duration `json:"overhead"`
	Fingerprint Fingerprint   `json:"fingerprint"`
	Logs        []Log         `json:"logs,omitempty"`
	// Values are the metric values this run produced, by metric name.
	Values map[string]float64 `json:"values,omitempty"`
	// Samples are every value the benchmark output held.
	Samples []bench.Sample `json:"samples,omitempty"`
}

// Log is the captured output of one step, capped in size.
type Log struct {
	Step      string `json:"step"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated,omitempty"`
	ExitCode  int    `json:"exit_code"`
}

// Fingerprint is the environment a benchmark process actually saw.
type Fingerprint struct {
	Host      string            `json:"host"`
	OS        string            `json:"os"`
	Kernel    string            `json:"kernel,omitempty"`
	CPUModel  string            `json:"cpu_model"`
	CPUs      int               `json:"cpus"`
	GoVersion string            `json:"go_version,omitempty"`
	Python    string            `json:"python,omitempty"`
	Env       map[string]string `json:"env"`
	GPUs      []GPU             `json:"gpus,omitempty"`
}

// GPU is what nvidia-smi reported about one device during a run.
type GPU struct {
	Index           int     `json:"index"`
	Name            string  `json:"name"`
	Driver          string  `json:"driver"`
	SMClockMHz      float64 `json:"sm_clock_mhz"`
	MemClockMHz     float64 `json:"mem_clock_mhz"`
	TemperatureC    float64 `json:"temperature_c"`
	PowerW          float64 `json:"power_w"`
	ThrottleReasons string  `json:"throttle_reasons,omitempty"`
}
