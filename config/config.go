// Package config loads perfbot's YAML configuration strictly.
//
// The key names are a contract (docs/configuration.md lists them): keys
// may be added, never renamed. Loading is strict: an unknown or repeated
// key is an error, and every error names the file, the line and the key
// path, for example
//
//	perfbot.yaml:12: benchmarks[0].format: unknown format "gobenc" (want one of gobench, nccl-tests, …)
//
// Loading fills defaults first and validates second, so a Config returned
// without error is complete: every timeout is set, exactly one metric is
// primary and every metric has a direction.
package config

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/perfbot/perfbot/configs"
	"github.com/perfbot/perfbot/record"
)

// Config is a loaded, defaulted and validated configuration.
type Config struct {
	// Path is the file the configuration was read from; empty for the
	// embedded default.
	Path string
	// Dir is the absolute directory relative paths were resolved against.
	Dir string

	Repo Repo
	// Workdir holds clones and worktree slots.
	Workdir string
	// Store is the bbolt database file.
	Store string
	// IssuesDir receives Markdown issues when no GitHub repository is
	// configured.
	IssuesDir string

	Hosts      []Host
	Build      []record.Step
	Benchmarks []record.BenchStep
	Metrics    []record.Metric
	Components Components
	// Dependencies are the dependencies a culprit's bump is descended
	// into through their git repositories.
	Dependencies Dependencies

	Bisect   Bisect
	Detect   Detect
	GitHub   GitHub
	Report   Report
	Schedule string
	Serve    Serve
	// Secrets names further variables of perfbot's environment that hold
	// credentials: build and benchmark processes never get them, and their
	// values are scrubbed from everything stored, rendered or sent.
	Secrets     []string
	Fingerprint Fingerprint
	// Speculative, when set, names the metrics of the speculative-decoding
	// breakdown.
	Speculative *Speculative
	// Pool is how the host pool treats a host that keeps failing.
	Pool Pool
}

// Repo is the watched repository.
type Repo struct {
	// URL is a clone URL, or an absolute local path.
	URL    string
	Branch string
}

// Host is a machine that builds and benchmarks.
type Host struct {
	Name string
	// Kind is "local", "ssh" or "slurm".
	Kind string
	// Address is host or host:port (ssh only).
	Address    string
	User       string
	KeyFile    string
	KnownHosts string
	// InsecureIgnoreHostKey skips the known_hosts check of an ssh host:
	// the only way to reach a host whose key is not known.
	InsecureIgnoreHostKey bool
	// Workdir is where checkouts live on the host; empty means the
	// configuration's Workdir for a local host. An ssh host needs one,
	// an absolute path on that host; a slurm host's is on storage its
	// nodes share, and required.
	Workdir string
	// Slots is how many targets the host measures at once; 0 means 1.
	Slots int
	// Trees is how many built checkouts each slot keeps, at most
	// maxTrees; 0 means runner.DefaultTrees.
	Trees int
	// Slurm is how a slurm host submits its jobs (slurm only).
	Slurm Slurm
}

// maxTrees bounds hosts[].trees: each tree is a whole checkout with its
// build on the host's disk.
const maxTrees = 64

// Bounds of values that cannot be meant. maxSlots bounds hosts[].slots and
// slurm slots: each slot is a worktree and a target measured at once.
// maxRepeats bounds the repeats of detect and bisect: runs of one commit
// before any comparison. minScheduleEvery is the least "@every" interval.
const (
	maxSlots         = 256
	maxRepeats       = 1000
	minScheduleEvery = time.Minute
)

// Host kinds.
const (
	HostLocal = "local"
	HostSSH   = "ssh"
	HostSlurm = "slurm"
)

// Bisect tunes commit bisection.
type Bisect struct {
	// Confidence is the posterior probability at which a culprit is named.
	Confidence float64
	// MinEffect is the smallest relative change worth bisecting, as a
	// fraction (0.02 for "2%").
	MinEffect float64
	// MaxRuns bounds the benchmark runs one bisection may spend.
	MaxRuns int
	// MaxHunkRuns bounds the benchmark runs of the configurations one hunk
	// or environment search tests, its two ends left out
	// (minimize.Options.MaxRuns).
	MaxHunkRuns int
	// Repeats is the number of runs measured at each end before the search
	// starts.
	Repeats int
	// HunkConfidence (bisect.hunk_confidence, default 0.999) is the
	// posterior at which a hunk or environment search decides each
	// configuration (minimize.Options.Confidence): higher than a
	// bisection's, since a search tests many configurations and one wrong
	// verdict misleads it.
	HunkConfidence float64
	// HunkRepeats (bisect.hunk_repeats, default the larger of 8 and
	// Repeats) is the number of runs each end and each configuration of a
	// hunk or environment search gets before it is first judged
	// (minimize.Options.InitialRuns).
	HunkRepeats int
}

// Detect tunes change detection over a metric's history.
type Detect struct {
	// MinEffect is the smallest relative change that raises an alert, as a
	// fraction.
	MinEffect float64
	// MinEffects are the metrics whose alerts have a threshold of their
	// own (metrics[].min_effect), overriding MinEffect: a metric that
	// moves with the host's speed alerts only on changes larger than the
	// host's. The threshold is no part of the spec's hash: it changes
	// what alerts, not what a run measures.
	MinEffects map[string]float64
	// Repeats is the number of runs of the tip, and as many of the
	// reference commit beside them, that a nightly cycle takes.
	Repeats int
	// MissingNights is the number of nights in a row without a successful
	// measurement of a metric after which it becomes a finding of its own
	// ("missing data", or "build broken since <commit>").
	MissingNights int
	// Warmup is the number of nights of a metric's series before its
	// history (the noise between nights, the CUSUMs) takes over from the
	// paired test of each night's tip against the reference, which alerts
	// from the second night; zero is detection's default
	// (detect.DefaultWarmup).
	Warmup int
	// Sample is the number of the night's new commits, besides the tip,
	// that a nightly cycle measures too (evenly spaced along the new
	// first-parent commits, interleaved with the tip and the reference in
	// the same rounds), so that detection places a change between two
	// measured commits of one night rather than between two nights; zero
	// measures the tip alone.
	Sample int
	// Estimator is how a night's runs make its value: "median" (of the
	// tip's runs each scaled by the reference run beside it), or "best"
	// (the tip's best run against the reference's best, for a host whose
	// speed flips between states from one run to the next).
	Estimator string
	// ConfirmNights is the number of nights after a change's first night
	// that must agree with it before its job is enqueued: the median of
	// the nights after it lies past the midpoint of the two levels. A
	// change whose later nights are back at the old level (one outlying
	// night: a build that landed fast, a host that was busy) is left out
	// of the series and costs no bisection. Zero acts on the first night.
	ConfirmNights int
	// Improvements is what a nightly cycle does with a detected
	// improvement: ImprovementsBisect enqueues its job like a
	// regression's (bisected, never filed), ImprovementsNote only notes it
	// in the night's report with the bisect command that would locate it,
	// so that no host time goes to a change nobody needs to fix.
	Improvements string
}

// MinEffectOf is the alert threshold of the named metric.
func (d Detect) MinEffectOf(metric string) float64 {
	if v, ok := d.MinEffects[metric]; ok {
		return v
	}
	return d.MinEffect
}

// What a nightly cycle does with an improvement (Detect.Improvements).
const (
	ImprovementsBisect = "bisect"
	ImprovementsNote   = "note"
)

// The estimators of a night's value.
const (
	EstimatorMedian = "median"
	EstimatorBest   = "best"
)

// GitHub is where issues are filed. An empty Repo means issues are written
// to IssuesDir instead.
type GitHub struct {
	// Repo is "owner/name".
	Repo string
	// TokenEnv names the environment variable holding the token; the token
	// itself never appears in a configuration file.
	TokenEnv string
	// APIURL is the REST endpoint, with a trailing slash: https, or http
	// for a loopback host only (the token would cross the network in
	// clear), and without credentials.
	APIURL string
	Labels []string
	// PushRemote is the git remote (a URL or a local path) perfbot may
	// push revert branches to, for draft pull requests into Repo; never
	// the watched branch. "" pushes nothing.
	PushRemote string
}

// CommitURL is the printf pattern, with one %s for the hash, of a commit's
// page on the host of APIURL: https://github.com/owner/name/commit/%s for
// github.com, https://ghe.example/owner/name/commit/%s for a GitHub
// Enterprise Server whose API is https://ghe.example/api/v3/. It is "" when
// no Repo is configured or APIURL is no URL.
func (g GitHub) CommitURL() string {
	if g.Repo == "" {
		return ""
	}
	api := g.APIURL
	if api == "" {
		api = defaultAPIURL
	}
	u, err := url.Parse(api)
	if err != nil || u.Host == "" {
		return ""
	}
	// github.com serves its API from a host of its own (and GitHub
	// Enterprise Cloud from api.<name>.ghe.com); GitHub Enterprise Server
	// from /api/v3 of its web host.
	host, path := u.Host, strings.TrimSuffix(u.Path, "/")
	if rest, ok := strings.CutPrefix(host, "api."); ok {
		host, path = rest, ""
	}
	path = strings.TrimSuffix(strings.TrimSuffix(path, "/api/v3"), "/api")
	return u.Scheme + "://" + host + path + "/" + g.Repo + "/commit/%s"
}

// Report tunes what is published.
type Report struct {
	// PublishConfidence is the confidence below which a finding is kept
	// but not filed.
	PublishConfidence float64
	// Reopen reopens a closed issue when its regression comes back.
	Reopen bool
	// RevertOnTip proves each filed culprit by reverting it on the
	// watched branch's tip and measuring the revert beside the tip.
	RevertOnTip bool
	// RevertPR opens a draft pull request with a revert that restores
	// the speed (needs GitHub.PushRemote).
	RevertPR bool
	// RecheckNights is the age in nights after which the nightly measures
	// a finding's revert again on the new tip; 0 never does.
	RecheckNights int
	// CloseFixed closes the issue of a regression the tip no longer has.
	CloseFixed bool
}

// Serve configures `perfbot serve`'s HTTP API.
type Serve struct {
	// Listen is the address served; 127.0.0.1:8080 by default.
	Listen string
	// TokenEnv names the environment variable holding the bearer token
	// that may change things through the API (start jobs); without it the
	// API only reads.
	TokenEnv string
}

// Fingerprint tunes the environment recorded with every run.
type Fingerprint struct {
	// Env lists variable names or path.Match globs ("SGLANG_*") recorded
	// besides NCCL_* and CUDA_*.
	Env []string
}

// Component is a named part of the watched repository.
type Component struct {
	Name  string
	Globs []string
}

// Components maps repository paths to components, in file order: the
// first component with a matching glob wins, so specific globs go first.
type Components []Component

// Match returns the component of the repository-relative path, or "" when
// no glob matches.
func (c Components) Match(path string) string {
	for _, comp := range c {
		for _, g := range comp.Globs {
			// Globs were validated at load time; MatchUnvalidated spares
			// the re-check on every hunk.
			if doublestar.MatchUnvalidated(g, path) {
				return comp.Name
			}
		}
	}
	return ""
}

// Dependency is a dependency of the watched repository that a descent
// may search: one whose git repository perfbot may fetch (when a culprit
// bumps it, the descent bisects its commits with its tree swapped into
// the culprit's), or a Python package with a directory of its wheels
// (the descent bisects the versions the directory holds, each pinned in
// turn for the build step to install).
type Dependency struct {
	// Name is the Go module path, the submodule's path, or the Python
	// package (as PEP 503 normalizes it), that a bump names.
	Name string
	// Repo is its git repository: a clone URL or a local path.
	Repo string
	// Path is where its tree goes in the watched tree: the submodule's
	// path, or for a Go module a directory that go.mod's replace
	// directive points at; "" for a submodule is its path.
	Path string
	// Wheels is a directory of the Python package's wheels, absolute.
	// It is read when a descent needs it, not at load, so that a
	// configuration loads where the directory is not (yet) mounted.
	Wheels string
}

// Dependencies are the configured dependencies, in file order.
type Dependencies []Dependency

// Find returns the dependency named name (a module path, or a
// submodule's path, which matches its Path too), and whether there is one.
func (ds Dependencies) Find(name string) (Dependency, bool) {
	for _, d := range ds {
		if d.Name == name || d.Path == name {
			return d, true
		}
	}
	return Dependency{}, false
}

// Load reads and parses the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(data, path)
}

// Parse parses a configuration read from path; relative paths in it
// resolve against path's directory. Problems are returned as Errors.
func Parse(data []byte, path string) (*Config, error) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c, err := parse(data, path, dir)
	if err != nil {
		return nil, err
	}
	c.Path = path
	return c, nil
}

// Default returns the embedded configuration for the bundled testbed
// (configs/testbed.yaml); its relative paths resolve against the current
// directory.
func Default() (*Config, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("default config: %w", err)
	}
	return parse(configs.Testbed(), "testbed.yaml (embedded)", dir)
}

// Spec is what the runner builds and measures.
func (c *Config) Spec() record.Spec {
	return record.Spec{Build: c.Build, Benchmarks: c.Benchmarks, Metrics: c.Metrics}
}

// Primary is the metric detection and bisection follow by default.
func (c *Config) Primary() record.Metric {
	for _, m := range c.Metrics {
		if m.Primary {
			return m
		}
	}
	// Unreachable for a Config from Load, Parse or Default, which always
	// mark one metric primary; a hand-built Config gets its first.
	if len(c.Metrics) > 0 {
		return c.Metrics[0]
	}
	return record.Metric{}
}

// Metric returns the metric called name; "" names the primary metric.
func (c *Config) Metric(name string) (record.Metric, error) {
	if name == "" {
		if len(c.Metrics) == 0 {
			return record.Metric{}, fmt.Errorf("no metrics configured")
		}
		return c.Primary(), nil
	}
	names := make([]string, len(c.Metrics))
	for i, m := range c.Metrics {
		if m.Name == name {
			return m, nil
		}
		names[i] = m.Name
	}
	return record.Metric{}, fmt.Errorf("unknown metric %q (configured: %s)", name, strings.Join(names, ", "))
}
