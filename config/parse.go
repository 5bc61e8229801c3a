package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/secret"
)

// Defaults applied to keys the file leaves out.
const (
	defaultBranch           = "main"
	defaultWorkdir          = ".perfbot/work"
	defaultStore            = ".perfbot/perfbot.db"
	defaultIssuesDir        = ".perfbot/issues"
	defaultBuildTimeout     = 30 * time.Minute
	defaultBenchTimeout     = 10 * time.Minute
	defaultBisectConfidence = 0.98 // bisect.DefaultConfidence: chosen by simulation
	defaultBisectMinEffect  = 0.02
	defaultBisectMaxRuns    = 400
	defaultMaxHunkRuns      = 200
	defaultBisectRepeats    = 2 // bisect.DefaultInitialRuns
	defaultHunkConfidence   = 0.999
	defaultHunkRepeats      = 8 // or bisect.repeats, when larger
	defaultDetectMinEffect  = 0.03
	defaultDetectRepeats    = 5
	defaultListen           = "127.0.0.1:8080"
	defaultAPITokenEnv      = "PERFBOT_API_TOKEN"
	defaultMissingNights    = 3
	defaultTokenEnv         = "GITHUB_TOKEN"
	defaultAPIURL           = "https://api.github.com/"
	defaultLabel            = "perf-regression"
	defaultRecheckNights    = 7
	defaultSchedule         = "0 2 * * *"
)

var (
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	// yamlLine picks the line out of yaml.v3's syntax errors
	// ("yaml: line 3: did not find expected key").
	yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

// parse decodes, defaults and validates data; file names it in errors and
// dir resolves relative paths.
func parse(data []byte, file, dir string) (*Config, error) {
	root, err := document(data, file)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: file}
	c := d.config(root, dir)
	if len(d.errs) > 0 {
		sortErrors(d.errs)
		return nil, d.errs
	}
	return c, nil
}

// document parses data as exactly one YAML document and returns its root.
func document(data []byte, file string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: file, Msg: "empty configuration (repo.url, benchmarks and metrics are required)"}}
		}
		return nil, syntaxError(file, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, Errors{{File: file, Line: next.Line, Msg: "a second YAML document; a configuration is one document"}}
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(file, err)
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		// "---", "~" or a document of comments: nothing is configured, and
		// the null's position may lie past the file's last line.
		return nil, Errors{{File: file, Msg: "empty configuration (repo.url, benchmarks and metrics are required)"}}
	}
	return root, nil
}

func syntaxError(file string, err error) error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return Errors{{File: file, Msg: err.Error()}}
	}
	line, _ := strconv.Atoi(m[1])
	return Errors{{File: file, Line: line, Msg: "YAML syntax: " + m[2]}}
}

// value returns the value node of key, nil when the key is absent.
func value(fs map[string]field, key string) *yaml.Node {
	return fs[key].value
}

// at returns the first non-nil node: where to report a missing key.
func at(nodes ...*yaml.Node) *yaml.Node {
	for _, n := range nodes {
		if n != nil {
			return n
		}
	}
	return nil
}

func (d *decoder) config(root *yaml.Node, dir string) *Config {
	f := d.mapping(root, "", "repo", "workdir", "store", "issues_dir", "hosts", "build",
		"benchmarks", "metrics", "components", "dependencies", "bisect", "detect", "github", "report",
		"schedule", "fingerprint", "serve", "secrets", "speculative",
		"pool")
	c := &Config{Dir: dir}
	c.Repo = d.repo(f["repo"], root, dir)
	c.Workdir = d.path(value(f, "workdir"), "workdir", dir, defaultWorkdir)
	c.Store = d.path(value(f, "store"), "store", dir, defaultStore)
	c.IssuesDir = d.path(value(f, "issues_dir"), "issues_dir", dir, defaultIssuesDir)
	c.Hosts = d.hosts(value(f, "hosts"), dir)
	c.Pool = d.pool(value(f, "pool"))

	steps := map[string]int{} // step name → line, unique across build and benchmarks
	c.Build = d.buildSteps(value(f, "build"), steps)
	c.Benchmarks = d.benchSteps(f["benchmarks"], root, steps)
	var minEffects map[string]float64
	c.Metrics, minEffects = d.metrics(f["metrics"], root, c.Benchmarks)
	c.Components = d.components(value(f, "components"))
	c.Dependencies = d.dependencies(value(f, "dependencies"), dir)
	c.Speculative = d.speculative(value(f, "speculative"), c.Metrics)

	c.Bisect = d.bisect(value(f, "bisect"))
	c.Detect = d.detect(value(f, "detect"))
	c.Detect.MinEffects = minEffects
	c.GitHub = d.github(value(f, "github"))
	c.Report = d.report(value(f, "report"))
	if c.Report.RevertPR && (c.GitHub.Repo == "" || c.GitHub.PushRemote == "") {
		d.errorf(value(f, "report"), "report.revert_pr", "draft pull requests need github.repo and github.push_remote, the remote perfbot may push revert branches to")
	}
	c.Schedule = d.schedule(value(f, "schedule"))
	c.Fingerprint = d.fingerprint(value(f, "fingerprint"))
	c.Serve = d.serve(value(f, "serve"))
	for _, n := range d.scalars(value(f, "secrets"), "secrets") {
		if !envName.MatchString(n.Value) {
			d.errorf(n, "secrets", "%q is not an environment variable name", n.Value)
			continue
		}
		c.Secrets = append(c.Secrets, n.Value)
	}
	return c
}

func (d *decoder) serve(n *yaml.Node) Serve {
	f := d.mapping(n, "serve", "listen", "token_env")
	s := Serve{
		Listen:   d.str(value(f, "listen"), "serve.listen"),
		TokenEnv: d.str(value(f, "token_env"), "serve.token_env"),
	}
	if s.Listen == "" {
		s.Listen = defaultListen
	} else if _, _, err := net.SplitHostPort(s.Listen); err != nil {
		d.errorf(value(f, "listen"), "serve.listen", "%q is not host:port (%v)", s.Listen, err)
	}
	if s.TokenEnv == "" {
		s.TokenEnv = defaultAPITokenEnv
	} else if !envName.MatchString(s.TokenEnv) {
		d.errorf(value(f, "token_env"), "serve.token_env", "%q is not an environment variable name", s.TokenEnv)
	}
	return s
}

func (d *decoder) repo(rf field, root *yaml.Node, dir string) Repo {
	f := d.mapping(rf.value, "repo", "url", "branch")
	r := Repo{
		URL:    d.str(value(f, "url"), "repo.url"),
		Branch: d.str(value(f, "branch"), "repo.branch"),
	}
	if r.URL == "" {
		d.errorf(at(f["url"].key, rf.key, root), "repo.url", "missing: name the repository to watch (a local path or a clone URL)")
	} else if gitops.IsLocalPath(r.URL) {
		r.URL = resolvePath(dir, r.URL)
	}
	if r.Branch == "" {
		r.Branch = defaultBranch
	}
	return r
}

// path reads a filesystem path, resolved against dir.
func (d *decoder) path(n *yaml.Node, key, dir, def string) string {
	p := d.str(n, key)
	if p == "" {
		p = def
	}
	return resolvePath(dir, p)
}

// resolvePath makes p absolute: "~/" is the home directory, other relative
// paths are relative to dir.
func resolvePath(dir, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

func (d *decoder) hosts(n *yaml.Node, dir string) []Host {
	items := d.sequence(n, "hosts")
	if len(items) == 0 {
		return []Host{{Name: "local", Kind: HostLocal}}
	}
	var hosts []Host
	names := map[string]int{}
	for i, item := range items {
		p := fmt.Sprintf("hosts[%d]", i)
		f := d.mapping(item, p, append([]string{"name", "kind", "address", "user", "key_file", "known_hosts", "workdir",
			"insecure_ignore_host_key", "slots", "trees"}, slurmKeys...)...)
		h := Host{
			Name:       d.str(value(f, "name"), p+".name"),
			Kind:       d.str(value(f, "kind"), p+".kind"),
			Address:    d.str(value(f, "address"), p+".address"),
			User:       d.str(value(f, "user"), p+".user"),
			KeyFile:    d.str(value(f, "key_file"), p+".key_file"),
			KnownHosts: d.str(value(f, "known_hosts"), p+".known_hosts"),
			Workdir:    d.str(value(f, "workdir"), p+".workdir"),
		}
		if n := value(f, "slots"); n != nil {
			h.Slots = d.within(n, p+".slots", 1, maxSlots)
		}
		if n := value(f, "trees"); n != nil {
			h.Trees = d.within(n, p+".trees", 1, maxTrees)
		}
		if n := value(f, "insecure_ignore_host_key"); n != nil {
			h.InsecureIgnoreHostKey = d.boolean(n, p+".insecure_ignore_host_key")
		}
		if h.Kind == "" {
			h.Kind = HostLocal
		}
		if h.Kind != HostSlurm {
			d.notSlurm(f, p, h.Kind)
		}
		switch h.Kind {
		case HostLocal:
			if h.Address != "" {
				d.errorf(value(f, "address"), p+".address", "set on a local host; add kind: ssh to reach %s", h.Address)
			}
			if h.Workdir != "" {
				h.Workdir = resolvePath(dir, h.Workdir)
			}
			if h.InsecureIgnoreHostKey {
				d.errorf(value(f, "insecure_ignore_host_key"), p+".insecure_ignore_host_key", "set on a local host, which has no host key")
			}
		case HostSSH:
			if h.Address == "" {
				d.errorf(at(f["kind"].key, item), p+".address", "missing: an ssh host needs an address (host or host:port)")
			}
			switch {
			case h.Workdir == "":
				d.errorf(at(f["kind"].key, item), p+".workdir", "missing: an ssh host needs a workdir, an absolute path on that host")
			case !path.IsAbs(h.Workdir):
				d.errorf(value(f, "workdir"), p+".workdir", "%q is not absolute: an ssh host's workdir is an absolute path on that host", h.Workdir)
			}
			if h.KnownHosts != "" && h.InsecureIgnoreHostKey {
				d.errorf(value(f, "insecure_ignore_host_key"), p+".insecure_ignore_host_key", "set with known_hosts: choose one")
			}
			// The key and known_hosts files are read on this machine;
			// the workdir is a path on the remote host and stays as
			// written.
			if h.KeyFile != "" {
				h.KeyFile = resolvePath(dir, h.KeyFile)
			}
			if h.KnownHosts != "" {
				h.KnownHosts = resolvePath(dir, h.KnownHosts)
			}
		case HostSlurm:
			h.Workdir, h.Slurm = d.slurm(f, item, p, dir)
		default:
			d.errorf(value(f, "kind"), p+".kind", "unknown host kind %q (want local, ssh or slurm)", h.Kind)
		}
		if h.Name == "" {
			h.Name = h.Kind
			if h.Address != "" {
				h.Name = h.Address
			}
		}
		if first, ok := names[h.Name]; ok {
			d.errorf(at(value(f, "name"), item), p+".name", "duplicate host name %q (first at line %d)", h.Name, first)
		}
		names[h.Name] = item.Line
		hosts = append(hosts, h)
	}
	return hosts
}

// step reads the keys build and benchmark steps share.
func (d *decoder) step(item *yaml.Node, f map[string]field, p string, timeout time.Duration, names map[string]int) record.Step {
	s := record.Step{
		Name:    d.str(value(f, "name"), p+".name"),
		Run:     d.str(value(f, "run"), p+".run"),
		Timeout: timeout,
		Env:     d.env(value(f, "env"), p+".env"),
	}
	if n := value(f, "timeout"); n != nil {
		s.Timeout = d.duration(n, p+".timeout")
	}
	if strings.TrimSpace(s.Run) == "" {
		d.errorf(at(f["run"].key, item), p+".run", "missing: the shell command to run")
	}
	if s.Name != "" {
		if first, ok := names[s.Name]; ok {
			d.errorf(value(f, "name"), p+".name", "duplicate step name %q (first at line %d)", s.Name, first)
		}
		names[s.Name] = item.Line
	}
	return s
}

// env reads an environment mapping whose keys must be variable names and
// whose values cannot hold NUL, which ends a C string: the process would
// see a shorter value than the one written.
func (d *decoder) env(n *yaml.Node, p string) map[string]string {
	for _, f := range d.pairs(n, p) {
		if !envName.MatchString(f.key.Value) {
			d.errorf(f.key, join(p, f.key.Value), "not an environment variable name")
		}
		if v := resolve(f.value); v != nil && v.Kind == yaml.ScalarNode && strings.ContainsRune(v.Value, 0) {
			d.errorf(f.value, join(p, f.key.Value), "the value holds a NUL byte, which no environment variable can hold")
		}
	}
	return d.stringMap(n, p)
}

func (d *decoder) buildSteps(n *yaml.Node, names map[string]int) []record.Step {
	items := d.sequence(n, "build")
	var steps []record.Step
	for i, item := range items {
		p := fmt.Sprintf("build[%d]", i)
		f := d.mapping(item, p, "name", "run", "timeout", "env")
		if value(f, "name") == nil {
			// Unnamed build steps are common ("run: make"); their logs
			// still need a name.
			name := "build"
			if len(items) > 1 {
				name = fmt.Sprintf("build-%d", i+1)
			}
			f["name"] = field{value: &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Line: item.Line}}
		}
		steps = append(steps, d.step(item, f, p, defaultBuildTimeout, names))
	}
	return steps
}

func (d *decoder) benchSteps(bf field, root *yaml.Node, names map[string]int) []record.BenchStep {
	items := d.sequence(bf.value, "benchmarks")
	if len(items) == 0 {
		d.errorf(at(bf.key, root), "benchmarks", "at least one benchmark is required")
		return nil
	}
	formats := bench.Formats()
	var steps []record.BenchStep
	for i, item := range items {
		p := fmt.Sprintf("benchmarks[%d]", i)
		f := d.mapping(item, p, "name", "run", "timeout", "env", "format", "options", "server")
		s := record.BenchStep{
			Step:    d.step(item, f, p, defaultBenchTimeout, names),
			Format:  d.str(value(f, "format"), p+".format"),
			Options: d.stringMap(value(f, "options"), p+".options"),
			Server:  d.server(f, p+".server"),
		}
		if s.Name == "" {
			d.errorf(at(f["name"].key, item), p+".name", "missing: metrics refer to benchmarks by name")
		}
		switch {
		case s.Format == "":
			d.errorf(at(f["format"].key, item), p+".format", "missing (want one of %s)", strings.Join(formats, ", "))
		case !slices.Contains(formats, s.Format):
			d.errorf(value(f, "format"), p+".format", "unknown format %q (want one of %s)", s.Format, strings.Join(formats, ", "))
		}
		steps = append(steps, s)
	}
	return steps
}

func (d *decoder) metrics(mf field, root *yaml.Node, benches []record.BenchStep) ([]record.Metric, map[string]float64) {
	items := d.sequence(mf.value, "metrics")
	if len(items) == 0 {
		d.errorf(at(mf.key, root), "metrics", "at least one metric is required")
		return nil, nil
	}
	var minEffects map[string]float64
	var benchNames []string
	for _, b := range benches {
		benchNames = append(benchNames, b.Name)
	}
	var metrics []record.Metric
	names := map[string]int{}
	primary := -1
	for i, item := range items {
		p := fmt.Sprintf("metrics[%d]", i)
		f := d.mapping(item, p, "name", "benchmark", "select", "unit", "better", "primary", "alert", "min_effect")
		m := record.Metric{
			Name:      d.str(value(f, "name"), p+".name"),
			Benchmark: d.str(value(f, "benchmark"), p+".benchmark"),
			Select:    d.str(value(f, "select"), p+".select"),
			Unit:      d.str(value(f, "unit"), p+".unit"),
			Better:    record.Better(d.str(value(f, "better"), p+".better")),
		}
		switch {
		case m.Name == "":
			d.errorf(at(f["name"].key, item), p+".name", "missing")
		case strings.ContainsFunc(m.Name, isSpace):
			d.errorf(value(f, "name"), p+".name", "%q contains white space", m.Name)
		default:
			if first, ok := names[m.Name]; ok {
				d.errorf(value(f, "name"), p+".name", "duplicate metric name %q (first at line %d)", m.Name, first)
			}
			names[m.Name] = item.Line
		}
		switch {
		case m.Benchmark == "":
			d.errorf(at(f["benchmark"].key, item), p+".benchmark", "missing (want one of %s)", strings.Join(benchNames, ", "))
		case !slices.Contains(benchNames, m.Benchmark):
			d.errorf(value(f, "benchmark"), p+".benchmark", "unknown benchmark %q (want one of %s)", m.Benchmark, strings.Join(benchNames, ", "))
		}
		if m.Select == "" {
			d.errorf(at(f["select"].key, item), p+".select", "missing: the benchmark, row or field that holds the value")
		}
		if m.Unit == "" {
			d.errorf(at(f["unit"].key, item), p+".unit", "missing (for example tok/s or ms)")
		}
		switch m.Better {
		case record.Higher, record.Lower:
		case "":
			if m.Unit == "" {
				break
			}
			dir, ok := inferBetter(m.Unit)
			if !ok {
				d.errorf(at(f["unit"].value, item), p+".better", "cannot tell from unit %q whether higher or lower is better; set better: higher or better: lower", m.Unit)
			}
			m.Better = dir
		default:
			d.errorf(value(f, "better"), p+".better", "%q is neither higher nor lower", m.Better)
		}
		if n := value(f, "alert"); n != nil {
			m.Quiet = !d.boolean(n, p+".alert")
		}
		if n := value(f, "min_effect"); n != nil {
			if minEffects == nil {
				minEffects = map[string]float64{}
			}
			minEffects[m.Name] = d.percent(n, p+".min_effect")
		}
		if n := value(f, "primary"); n != nil && d.boolean(n, p+".primary") {
			if primary >= 0 {
				d.errorf(n, p+".primary", "a second primary metric (%s is already primary)", metrics[primary].Name)
			} else {
				primary = i
				m.Primary = true
			}
		}
		metrics = append(metrics, m)
	}
	if primary < 0 {
		metrics[0].Primary = true
		primary = 0
	}
	if metrics[primary].Quiet {
		d.errorf(items[primary], fmt.Sprintf("metrics[%d].alert", primary), "the primary metric %s must alert: detection and bisection follow it", metrics[primary].Name)
	}
	return metrics, minEffects
}

// inferBetter guesses a metric's direction from its unit: rates are better
// higher, times and per-operation costs lower. Anything else ("accept-len",
// "%") must be stated.
func inferBetter(unit string) (record.Better, bool) {
	u := strings.ToLower(strings.TrimSpace(unit))
	// "tok/s", "GB/s", "busbw-GB/s", "token/s/gpu": a per-second rate.
	if parts := strings.Split(u, "/"); len(parts) > 1 && slices.ContainsFunc(parts[1:], isSecond) {
		return record.Higher, true
	}
	if strings.HasSuffix(u, "/op") {
		return record.Lower, true // sec/op, ns/op, B/op, allocs/op
	}
	// "ms", "ms/verify", "ttft-ms", "time_us": the leading word of a
	// ratio, or the last word of a compound, is a time.
	num, _, _ := strings.Cut(u, "/")
	words := strings.FieldsFunc(num, func(r rune) bool { return r == '-' || r == '_' || r == ' ' })
	if len(words) > 0 && (isTime(words[0]) || isTime(words[len(words)-1])) {
		return record.Lower, true
	}
	return "", false
}

func isSecond(w string) bool { return w == "s" || w == "sec" || w == "second" }

func isTime(w string) bool {
	switch w {
	case "s", "sec", "secs", "seconds", "ms", "us", "µs", "μs", "ns", "min":
		return true
	}
	return false
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

func (d *decoder) components(n *yaml.Node) Components {
	var comps Components
	for _, f := range d.pairs(n, "components") {
		p := join("components", f.key.Value)
		var globs []string
		for _, g := range d.scalars(f.value, p) {
			if g.Value == "" || !doublestar.ValidatePattern(g.Value) {
				d.errorf(g, p, "bad glob %q", g.Value)
			}
			globs = append(globs, g.Value)
		}
		if isNull(f.value) || (f.value.Kind == yaml.SequenceNode && len(f.value.Content) == 0) {
			d.errorf(f.key, p, "no globs")
		}
		comps = append(comps, Component{Name: f.key.Value, Globs: globs})
	}
	return comps
}

func (d *decoder) dependencies(n *yaml.Node, dir string) Dependencies {
	var deps Dependencies
	names := map[string]bool{}
	for i, item := range d.sequence(n, "dependencies") {
		p := fmt.Sprintf("dependencies[%d]", i)
		f := d.mapping(item, p, "name", "repo", "path", "wheels")
		dep := Dependency{
			Name:   d.str(value(f, "name"), p+".name"),
			Repo:   d.str(value(f, "repo"), p+".repo"),
			Path:   d.str(value(f, "path"), p+".path"),
			Wheels: d.str(value(f, "wheels"), p+".wheels"),
		}
		if dep.Wheels != "" {
			// A pin names the package in any spelling PEP 503 deems
			// the same; the descent looks it up normalized.
			dep.Name = gitops.PythonPackageName(dep.Name)
		}
		switch {
		case dep.Name == "":
			d.errorf(at(f["name"].key, item), p+".name", "missing: the Go module path, the submodule's path or the Python package a bump names")
		case names[dep.Name]:
			d.errorf(value(f, "name"), p+".name", "%q is named twice", dep.Name)
		}
		names[dep.Name] = true
		switch {
		case dep.Wheels != "" && dep.Repo != "":
			d.errorf(value(f, "wheels"), p+".wheels", "a dependency has either a git repository (repo) or a directory of wheels (wheels), not both")
		case dep.Wheels != "" && dep.Path != "":
			d.errorf(value(f, "path"), p+".path", "a Python package's wheels are installed by the build step, not put in the tree: leave path out")
		case dep.Wheels != "":
			dep.Wheels = resolvePath(dir, dep.Wheels)
		case dep.Repo == "":
			d.errorf(at(f["repo"].key, item), p+".repo", "missing: the dependency's git repository (a clone URL or a local path), or for a Python package wheels (a directory of its wheels)")
		case gitops.IsLocalPath(dep.Repo):
			dep.Repo = resolvePath(dir, dep.Repo)
		}
		if dep.Path != "" {
			clean := path.Clean(dep.Path)
			if path.IsAbs(dep.Path) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
				d.errorf(value(f, "path"), p+".path", "%q is not a directory inside the watched repository", dep.Path)
			}
			dep.Path = clean
		}
		deps = append(deps, dep)
	}
	return deps
}

func (d *decoder) bisect(n *yaml.Node) Bisect {
	f := d.mapping(n, "bisect", "confidence", "min_effect", "max_runs", "max_hunk_runs", "repeats", "hunk_confidence", "hunk_repeats")
	b := Bisect{
		Confidence:     defaultBisectConfidence,
		MinEffect:      defaultBisectMinEffect,
		MaxRuns:        defaultBisectMaxRuns,
		MaxHunkRuns:    defaultMaxHunkRuns,
		Repeats:        defaultBisectRepeats,
		HunkConfidence: defaultHunkConfidence,
	}
	if v := value(f, "confidence"); v != nil {
		b.Confidence = d.confidence(v, "bisect.confidence")
	}
	if v := value(f, "min_effect"); v != nil {
		b.MinEffect = d.percent(v, "bisect.min_effect")
	}
	if v := value(f, "max_runs"); v != nil {
		b.MaxRuns = d.positive(v, "bisect.max_runs")
	}
	if v := value(f, "max_hunk_runs"); v != nil {
		b.MaxHunkRuns = d.positive(v, "bisect.max_hunk_runs")
	}
	if v := value(f, "repeats"); v != nil {
		b.Repeats = d.within(v, "bisect.repeats", 1, maxRepeats)
	}
	if v := value(f, "hunk_confidence"); v != nil {
		b.HunkConfidence = d.confidence(v, "bisect.hunk_confidence")
	}
	b.HunkRepeats = max(defaultHunkRepeats, b.Repeats)
	if v := value(f, "hunk_repeats"); v != nil {
		b.HunkRepeats = d.within(v, "bisect.hunk_repeats", 1, maxRepeats)
	}
	return b
}

func (d *decoder) detect(n *yaml.Node) Detect {
	f := d.mapping(n, "detect", "min_effect", "repeats", "missing_nights", "warmup", "estimator", "sample", "confirm_nights", "improvements")
	det := Detect{MinEffect: defaultDetectMinEffect, Repeats: defaultDetectRepeats, MissingNights: defaultMissingNights, Estimator: EstimatorMedian,
		Improvements: ImprovementsBisect}
	if v := value(f, "improvements"); v != nil {
		switch det.Improvements = d.str(v, "detect.improvements"); det.Improvements {
		case ImprovementsBisect, ImprovementsNote:
		default:
			d.errorf(v, "detect.improvements", "%q: want bisect or note", det.Improvements)
		}
	}
	if v := value(f, "estimator"); v != nil {
		switch det.Estimator = d.str(v, "detect.estimator"); det.Estimator {
		case EstimatorMedian, EstimatorBest:
		default:
			d.errorf(v, "detect.estimator", "%q: want median or best", det.Estimator)
		}
	}
	if v := value(f, "min_effect"); v != nil {
		det.MinEffect = d.percent(v, "detect.min_effect")
	}
	if v := value(f, "repeats"); v != nil {
		det.Repeats = d.within(v, "detect.repeats", 1, maxRepeats)
	}
	if v := value(f, "missing_nights"); v != nil {
		det.MissingNights = d.positive(v, "detect.missing_nights")
	}
	if v := value(f, "sample"); v != nil {
		det.Sample = d.positive(v, "detect.sample")
	}
	if v := value(f, "confirm_nights"); v != nil {
		det.ConfirmNights = d.atLeast(v, "detect.confirm_nights", 0)
	}
	if v := value(f, "warmup"); v != nil {
		det.Warmup = d.positive(v, "detect.warmup")
		if det.Warmup < 5 {
			d.errorf(v, "detect.warmup", "%d nights: want at least 5 (the nights a new level needs)", det.Warmup)
		}
	}
	return det
}

func (d *decoder) github(n *yaml.Node) GitHub {
	f := d.mapping(n, "github", "repo", "token_env", "api_url", "labels", "push_remote")
	g := GitHub{
		Repo:       d.str(value(f, "repo"), "github.repo"),
		TokenEnv:   d.str(value(f, "token_env"), "github.token_env"),
		APIURL:     d.str(value(f, "api_url"), "github.api_url"),
		Labels:     []string{defaultLabel},
		PushRemote: d.str(value(f, "push_remote"), "github.push_remote"),
	}
	if g.PushRemote != "" && g.Repo == "" {
		d.errorf(value(f, "push_remote"), "github.push_remote", "a push remote serves draft pull requests into github.repo, which is not set")
	}
	if u, err := url.Parse(g.PushRemote); g.PushRemote != "" && err == nil && u.User != nil {
		d.errorf(value(f, "push_remote"), "github.push_remote", "%s must not hold credentials; the token goes in the variable named by github.token_env", u.Redacted())
	}
	if v := value(f, "labels"); v != nil {
		g.Labels = d.strings(v, "github.labels")
	}
	if g.Repo != "" && !repoName.MatchString(g.Repo) {
		d.errorf(value(f, "repo"), "github.repo", "%q is not owner/name", g.Repo)
	}
	if g.TokenEnv == "" {
		g.TokenEnv = defaultTokenEnv
	} else if !envName.MatchString(g.TokenEnv) {
		d.errorf(value(f, "token_env"), "github.token_env", "%q is not an environment variable name", g.TokenEnv)
	}
	if g.APIURL == "" {
		g.APIURL = defaultAPIURL
	} else if u, err := url.Parse(g.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.errorf(value(f, "api_url"), "github.api_url", "%q is not an http(s) URL", g.APIURL)
	} else if u.User != nil {
		d.errorf(value(f, "api_url"), "github.api_url", "%s must not hold credentials; the token goes in the variable named by github.token_env", u.Redacted())
	} else if u.Scheme == "http" && !secret.IsLoopback(u.Hostname()) {
		d.errorf(value(f, "api_url"), "github.api_url", "%q sends the token in clear: use https, or http only for a loopback host (127.0.0.1, ::1, localhost)", g.APIURL)
	} else if !strings.HasSuffix(g.APIURL, "/") {
		// go-github requires the trailing slash on its base URL.
		g.APIURL += "/"
	}
	return g
}

func (d *decoder) report(n *yaml.Node) Report {
	f := d.mapping(n, "report", "publish_confidence", "reopen", "revert_on_tip", "revert_pr", "recheck_nights", "close_fixed")
	r := Report{PublishConfidence: record.DefaultPublishConfidence, Reopen: true, RecheckNights: defaultRecheckNights}
	if v := value(f, "revert_on_tip"); v != nil {
		r.RevertOnTip = d.boolean(v, "report.revert_on_tip")
	}
	if v := value(f, "revert_pr"); v != nil {
		r.RevertPR = d.boolean(v, "report.revert_pr")
	}
	if v := value(f, "recheck_nights"); v != nil {
		r.RecheckNights = d.atLeast(v, "report.recheck_nights", 0)
	}
	if v := value(f, "close_fixed"); v != nil {
		r.CloseFixed = d.boolean(v, "report.close_fixed")
	}
	if v := value(f, "publish_confidence"); v != nil {
		r.PublishConfidence = d.confidence(v, "report.publish_confidence")
	}
	if v := value(f, "reopen"); v != nil {
		r.Reopen = d.boolean(v, "report.reopen")
	}
	return r
}

func (d *decoder) schedule(n *yaml.Node) string {
	s := d.str(n, "schedule")
	if s == "" {
		return defaultSchedule
	}
	if _, err := cron.ParseStandard(s); err != nil {
		d.errorf(n, "schedule", "bad cron schedule %q: %v (want five fields such as \"0 2 * * *\", or @daily)", s, err)
		return s
	}
	// cron runs "@every 0s" and "@every -1h" every second.
	if every, ok := strings.CutPrefix(s, "@every "); ok {
		if v, err := time.ParseDuration(strings.TrimSpace(every)); err == nil && v < minScheduleEvery {
			d.errorf(n, "schedule", "%q is more often than every %s, the least interval between nightly cycles", s, minScheduleEvery)
		}
	}
	return s
}

func (d *decoder) fingerprint(n *yaml.Node) Fingerprint {
	f := d.mapping(n, "fingerprint", "env")
	var fp Fingerprint
	for _, g := range d.scalars(value(f, "env"), "fingerprint.env") {
		if _, err := path.Match(g.Value, ""); err != nil || g.Value == "" {
			d.errorf(g, "fingerprint.env", "bad variable name or glob %q", g.Value)
		}
		fp.Env = append(fp.Env, g.Value)
	}
	return fp
}
