package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/record"
)

// minimal is the smallest valid configuration; error cases below change
// one thing in it.
const minimal = `repo:
  url: ../infer
benchmarks:
  - name: engine
    run: go test -bench .
    format: gobench
metrics:
  - name: verify_tok_s
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/s
`

func TestParseDefaults(t *testing.T) {
	c, err := Parse([]byte(minimal), "/srv/perf/perfbot.yaml")
	require.NoError(t, err)

	assert.Equal(t, "/srv/perf/perfbot.yaml", c.Path)
	assert.Equal(t, "/srv/perf", c.Dir)
	assert.Equal(t, Repo{URL: "/srv/infer", Branch: "main"}, c.Repo)
	assert.Equal(t, "/srv/perf/.perfbot/work", c.Workdir)
	assert.Equal(t, "/srv/perf/.perfbot/perfbot.db", c.Store)
	assert.Equal(t, "/srv/perf/.perfbot/issues", c.IssuesDir)
	assert.Equal(t, []Host{{Name: "local", Kind: HostLocal}}, c.Hosts)
	assert.Equal(t, 10*time.Minute, c.Benchmarks[0].Timeout)
	assert.Equal(t, Bisect{Confidence: 0.98, MinEffect: 0.02, MaxRuns: 400, MaxHunkRuns: 200, Repeats: 2, HunkConfidence: 0.999, HunkRepeats: 8}, c.Bisect)
	// The engine's defaults are the configuration's.
	assert.Equal(t, bisect.DefaultConfidence, c.Bisect.Confidence)
	assert.Equal(t, bisect.DefaultInitialRuns, c.Bisect.Repeats)
	assert.Equal(t, bisect.DefaultMinEffect, c.Bisect.MinEffect)
	assert.Equal(t, bisect.DefaultMaxRuns, c.Bisect.MaxRuns)
	assert.Equal(t, Detect{MinEffect: 0.03, Repeats: 5, MissingNights: 3, Estimator: "median", Improvements: ImprovementsBisect}, c.Detect)
	assert.Equal(t, GitHub{TokenEnv: "GITHUB_TOKEN", APIURL: "https://api.github.com/", Labels: []string{"perf-regression"}}, c.GitHub)
	assert.Equal(t, Report{PublishConfidence: 0.9, Reopen: true, RecheckNights: 7}, c.Report)
	assert.Equal(t, "0 2 * * *", c.Schedule)

	m := c.Primary()
	assert.Equal(t, "verify_tok_s", m.Name)
	assert.True(t, m.Primary, "the only metric becomes primary")
	assert.Equal(t, record.Higher, m.Better, "tok/s is inferred as higher-is-better")
}

func TestParseFull(t *testing.T) {
	data := `repo:
  url: git@github.com:sgl-project/sglang.git
  branch: release
workdir: /var/perfbot/work
store: state/perf.db
hosts:
  - name: gpu1
    kind: ssh
    address: gpu1.lan:2222
    user: bench
    key_file: keys/id_ed25519
    workdir: /scratch/perfbot
    slots: 2
    trees: 6
  - name: gpu2
    kind: ssh
    address: 10.0.0.7
    insecure_ignore_host_key: true
    workdir: /data/perfbot
  - kind: local
build:
  - run: make
  - name: wheel
    run: pip wheel .
    timeout: 1h30m
benchmarks:
  - name: serving
    run: ./serve.sh
    format: regex
    timeout: 90s
    env: {NCCL_PROTO: LL, NCCL_MIN_NCHANNELS: 4}
    options:
      pattern: 'tok/s: (?P<value>\S+)'
      unit: tok/s
metrics:
  - name: ttft_ms
    benchmark: serving
    select: ttft
    min_effect: 10%
    unit: ms
  - name: tok_s
    benchmark: serving
    select: value
    unit: tok/s
    primary: true
  - name: accept_len
    benchmark: serving
    select: accept
    unit: value
    better: higher
components:
  comm.allreduce: ["python/**/device_communicators/**"]
  comm: ["python/**/distributed/**"]
bisect: {confidence: 0.95, min_effect: 0.5%, max_runs: 50, max_hunk_runs: 90, repeats: 3, hunk_confidence: 0.995, hunk_repeats: 6}
detect: {min_effect: 4%, confirm_nights: 1, improvements: note}
github:
  repo: owner/name
  token_env: PERF_TOKEN
  api_url: https://ghe.example.com/api/v3
  labels: []
  push_remote: git@github.com:owner/name.git
report: {publish_confidence: 0.8, reopen: false, revert_on_tip: true, revert_pr: true, recheck_nights: 3, close_fixed: true}
schedule: "@daily"
fingerprint:
  env: [SGLANG_*, OMP_NUM_THREADS]
`
	c, err := Parse([]byte(data), "/etc/perfbot/perfbot.yaml")
	require.NoError(t, err)

	assert.Equal(t, "git@github.com:sgl-project/sglang.git", c.Repo.URL, "clone addresses are not paths")
	assert.Equal(t, "release", c.Repo.Branch)
	assert.Equal(t, "/var/perfbot/work", c.Workdir)
	assert.Equal(t, "/etc/perfbot/state/perf.db", c.Store)
	assert.Equal(t, []Host{
		{Name: "gpu1", Kind: HostSSH, Address: "gpu1.lan:2222", User: "bench", KeyFile: "/etc/perfbot/keys/id_ed25519", Workdir: "/scratch/perfbot", Slots: 2, Trees: 6},
		{Name: "gpu2", Kind: HostSSH, Address: "10.0.0.7", InsecureIgnoreHostKey: true, Workdir: "/data/perfbot"},
		{Name: "local", Kind: HostLocal},
	}, c.Hosts)
	assert.Equal(t, []record.Step{
		{Name: "build-1", Run: "make", Timeout: 30 * time.Minute},
		{Name: "wheel", Run: "pip wheel .", Timeout: 90 * time.Minute},
	}, c.Build)
	assert.Equal(t, map[string]string{"NCCL_PROTO": "LL", "NCCL_MIN_NCHANNELS": "4"}, c.Benchmarks[0].Env)
	assert.Equal(t, 90*time.Second, c.Benchmarks[0].Timeout)
	assert.Equal(t, `tok/s: (?P<value>\S+)`, c.Benchmarks[0].Options["pattern"])
	assert.Equal(t, record.Lower, c.Metrics[0].Better, "ms is inferred as lower-is-better")
	assert.Equal(t, "tok_s", c.Primary().Name)
	assert.False(t, c.Metrics[0].Primary)
	assert.Equal(t, Bisect{Confidence: 0.95, MinEffect: 0.005, MaxRuns: 50, MaxHunkRuns: 90, Repeats: 3, HunkConfidence: 0.995, HunkRepeats: 6}, c.Bisect)
	assert.InDelta(t, 0.04, c.Detect.MinEffect, 1e-12)
	assert.Equal(t, 1, c.Detect.ConfirmNights)
	assert.Equal(t, ImprovementsNote, c.Detect.Improvements)
	assert.InDelta(t, 0.10, c.Detect.MinEffectOf("ttft_ms"), 1e-12, "metrics[].min_effect overrides detect.min_effect")
	assert.InDelta(t, 0.04, c.Detect.MinEffectOf("tok_s"), 1e-12)
	assert.Equal(t, GitHub{Repo: "owner/name", TokenEnv: "PERF_TOKEN", APIURL: "https://ghe.example.com/api/v3/", Labels: nil, PushRemote: "git@github.com:owner/name.git"}, c.GitHub)
	assert.Equal(t, Report{PublishConfidence: 0.8, Reopen: false, RevertOnTip: true, RevertPR: true, RecheckNights: 3, CloseFixed: true}, c.Report)
	assert.Equal(t, "@daily", c.Schedule)
	assert.Equal(t, []string{"SGLANG_*", "OMP_NUM_THREADS"}, c.Fingerprint.Env)

	assert.Equal(t, record.Spec{Build: c.Build, Benchmarks: c.Benchmarks, Metrics: c.Metrics}, c.Spec())
}

func TestComponentsMatchFirstWins(t *testing.T) {
	c, err := Parse([]byte(minimal+`components:
  comm.allreduce: ["python/**/device_communicators/**", "csrc/custom_all_reduce*"]
  comm: ["python/**/distributed/**"]
  non_runtime: ["**/*_test.go", "docs/**"]
`), "perfbot.yaml")
	require.NoError(t, err)
	for path, want := range map[string]string{
		"python/sglang/srt/distributed/device_communicators/pynccl.py": "comm.allreduce",
		"python/sglang/srt/distributed/parallel_state.py":              "comm",
		"csrc/custom_all_reduce.cu":                                    "comm.allreduce",
		"engine/verify_test.go":                                        "non_runtime",
		"README.md":                                                    "",
	} {
		assert.Equal(t, want, c.Components.Match(path), path)
	}
}

func TestMetric(t *testing.T) {
	c, err := Parse([]byte(minimal+`  - name: decode_ms
    benchmark: engine
    select: BenchmarkDecode
    unit: ms/token
`), "perfbot.yaml")
	require.NoError(t, err)

	m, err := c.Metric("")
	require.NoError(t, err)
	assert.Equal(t, "verify_tok_s", m.Name, "empty name is the primary")

	m, err = c.Metric("decode_ms")
	require.NoError(t, err)
	assert.Equal(t, record.Lower, m.Better)

	_, err = c.Metric("prefill")
	require.EqualError(t, err, `unknown metric "prefill" (configured: verify_tok_s, decode_ms)`)
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		// want is the whole first error: file, line, key and message.
		want string
	}{
		{
			name: "unknown top-level key",
			yaml: minimal + "bisekt:\n  confidence: 0.9\n",
			want: "perfbot.yaml:12: bisekt: unknown key (want one of repo, workdir, store, issues_dir, hosts, build, benchmarks, metrics, components, dependencies, bisect, detect, github, report, schedule, fingerprint, serve, secrets, speculative, pool)",
		},
		{
			name: "unknown nested key",
			yaml: minimal + "bisect:\n  confidence: 0.9\n  max_run: 10\n",
			want: "perfbot.yaml:14: bisect.max_run: unknown key (want one of confidence, min_effect, max_runs, max_hunk_runs, repeats, hunk_confidence, hunk_repeats)",
		},
		{
			name: "draft pull requests without a push remote",
			yaml: minimal + "github: {repo: o/n}\nreport: {revert_pr: true}\n",
			want: "perfbot.yaml:13: report.revert_pr: draft pull requests need github.repo and github.push_remote, the remote perfbot may push revert branches to",
		},
		{
			name: "a push remote with credentials",
			yaml: minimal + "github: {repo: o/n, push_remote: 'https://x:tok@github.com/o/n.git'}\n",
			want: "perfbot.yaml:12: github.push_remote: https://x:xxxxx@github.com/o/n.git must not hold credentials; the token goes in the variable named by github.token_env",
		},
		{
			name: "recheck nights below zero",
			yaml: minimal + "report: {recheck_nights: -1}\n",
			want: "perfbot.yaml:12: report.recheck_nights: -1 must be at least 0",
		},
		{
			name: "repeated key",
			yaml: minimal + "schedule: '@daily'\nschedule: '@hourly'\n",
			want: "perfbot.yaml:13: schedule: repeated key (first at line 12)",
		},
		{
			name: "repo url missing",
			yaml: strings.Replace(minimal, "  url: ../infer\n", "  branch: main\n", 1),
			want: "perfbot.yaml:1: repo.url: missing: name the repository to watch (a local path or a clone URL)",
		},
		{
			name: "metric names no benchmark",
			yaml: strings.Replace(minimal, "    benchmark: engine\n", "", 1),
			want: "perfbot.yaml:8: metrics[0].benchmark: missing (want one of engine)",
		},
		{
			name: "metric names unknown benchmark",
			yaml: strings.Replace(minimal, "benchmark: engine", "benchmark: engin", 1),
			want: `perfbot.yaml:9: metrics[0].benchmark: unknown benchmark "engin" (want one of engine)`,
		},
		{
			name: "benchmark without run",
			yaml: strings.Replace(minimal, "    run: go test -bench .\n", "", 1),
			want: "perfbot.yaml:4: benchmarks[0].run: missing: the shell command to run",
		},
		{
			name: "build step without run",
			yaml: minimal + "build:\n  - name: compile\n",
			want: "perfbot.yaml:13: build[0].run: missing: the shell command to run",
		},
		{
			name: "unknown format",
			yaml: strings.Replace(minimal, "format: gobench", "format: gobenc", 1),
			want: `perfbot.yaml:6: benchmarks[0].format: unknown format "gobenc" (want one of ` + strings.Join(bench.Formats(), ", ") + ")",
		},
		{
			name: "bad duration",
			yaml: strings.Replace(minimal, "    format: gobench\n", "    format: gobench\n    timeout: 10\n", 1),
			want: `perfbot.yaml:7: benchmarks[0].timeout: bad duration "10" (want a Go duration such as 90s, 10m or 1h30m)`,
		},
		{
			name: "negative duration",
			yaml: strings.Replace(minimal, "    format: gobench\n", "    format: gobench\n    timeout: -5m\n", 1),
			want: `perfbot.yaml:7: benchmarks[0].timeout: duration "-5m" must be positive`,
		},
		{
			name: "percentage without percent sign",
			yaml: minimal + "bisect:\n  min_effect: 0.02\n",
			want: `perfbot.yaml:13: bisect.min_effect: bad percentage "0.02" (write it like 2% or 0.5%)`,
		},
		{
			name: "percentage out of range",
			yaml: minimal + "detect:\n  min_effect: 100%\n",
			want: `perfbot.yaml:13: detect.min_effect: percentage "100%" is outside (0%, 100%)`,
		},
		{
			name: "negative confirm nights",
			yaml: minimal + "detect:\n  confirm_nights: -1\n",
			want: `perfbot.yaml:13: detect.confirm_nights: -1 must be at least 0`,
		},
		{
			name: "metric threshold without percent sign",
			yaml: strings.Replace(minimal, "    unit: tok/s\n", "    unit: tok/s\n    min_effect: 0.1\n", 1),
			want: `perfbot.yaml:12: metrics[0].min_effect: bad percentage "0.1" (write it like 2% or 0.5%)`,
		},
		{
			name: "unknown improvements action",
			yaml: minimal + "detect:\n  improvements: file\n",
			want: `perfbot.yaml:13: detect.improvements: "file": want bisect or note`,
		},
		{
			name: "zero percentage",
			yaml: minimal + "detect:\n  min_effect: 0%\n",
			want: `perfbot.yaml:13: detect.min_effect: percentage "0%" is outside (0%, 100%)`,
		},
		{
			name: "confidence of one",
			yaml: minimal + "bisect:\n  confidence: 1\n",
			want: "perfbot.yaml:13: bisect.confidence: confidence 1 is outside (0.5, 1): write a probability such as 0.99",
		},
		{
			name: "confidence of one half",
			yaml: minimal + "report:\n  publish_confidence: 0.5\n",
			want: "perfbot.yaml:13: report.publish_confidence: confidence 0.5 is outside (0.5, 1): write a probability such as 0.99",
		},
		{
			name: "confidence as percentage",
			yaml: minimal + "bisect:\n  confidence: 99%\n",
			want: `perfbot.yaml:13: bisect.confidence: bad confidence "99%" (want a number such as 0.99)`,
		},
		{
			name: "better neither higher nor lower",
			yaml: minimal + "    better: up\n",
			want: `perfbot.yaml:12: metrics[0].better: "up" is neither higher nor lower`,
		},
		{
			name: "direction not inferable from unit",
			yaml: strings.Replace(minimal, "unit: tok/s", "unit: accept-len", 1),
			want: `perfbot.yaml:11: metrics[0].better: cannot tell from unit "accept-len" whether higher or lower is better; set better: higher or better: lower`,
		},
		{
			name: "duplicate metric",
			yaml: minimal + "  - name: verify_tok_s\n    benchmark: engine\n    select: X\n    unit: tok/s\n",
			want: `perfbot.yaml:12: metrics[1].name: duplicate metric name "verify_tok_s" (first at line 8)`,
		},
		{
			name: "duplicate step across build and benchmarks",
			yaml: minimal + "build:\n  - name: engine\n    run: make\n",
			want: `perfbot.yaml:4: benchmarks[0].name: duplicate step name "engine" (first at line 13)`,
		},
		{
			name: "two primary metrics",
			yaml: minimal + "    primary: true\n  - name: decode\n    benchmark: engine\n    select: X\n    unit: tok/s\n    primary: true\n",
			want: "perfbot.yaml:17: metrics[1].primary: a second primary metric (verify_tok_s is already primary)",
		},
		{
			name: "host kind",
			yaml: minimal + "hosts:\n  - name: gpu\n    kind: pbs\n",
			want: `perfbot.yaml:14: hosts[0].kind: unknown host kind "pbs" (want local, ssh or slurm)`,
		},
		{
			name: "ssh host without address",
			yaml: minimal + "hosts:\n  - name: gpu\n    kind: ssh\n",
			want: "perfbot.yaml:14: hosts[0].address: missing: an ssh host needs an address (host or host:port)",
		},
		{
			name: "ssh host without workdir",
			yaml: minimal + "hosts:\n  - name: gpu\n    kind: ssh\n    address: gpu.lan\n",
			want: "perfbot.yaml:14: hosts[0].workdir: missing: an ssh host needs a workdir, an absolute path on that host",
		},
		{
			name: "ssh workdir not absolute",
			yaml: minimal + "hosts:\n  - name: gpu\n    kind: ssh\n    address: gpu.lan\n    workdir: perfbot\n",
			want: `perfbot.yaml:16: hosts[0].workdir: "perfbot" is not absolute: an ssh host's workdir is an absolute path on that host`,
		},
		{
			name: "ssh host key check off and known_hosts given",
			yaml: minimal + "hosts:\n  - name: gpu\n    kind: ssh\n    address: gpu.lan\n    workdir: /w\n    known_hosts: kh\n    insecure_ignore_host_key: true\n",
			want: "perfbot.yaml:18: hosts[0].insecure_ignore_host_key: set with known_hosts: choose one",
		},
		{
			name: "host key check not a boolean",
			yaml: minimal + "hosts:\n  - name: gpu\n    kind: ssh\n    address: gpu.lan\n    workdir: /w\n    insecure_ignore_host_key: sure\n",
			want: `perfbot.yaml:17: hosts[0].insecure_ignore_host_key: want true or false, got "sure"`,
		},
		{
			name: "host key check on a local host",
			yaml: minimal + "hosts:\n  - name: gpu\n    insecure_ignore_host_key: true\n",
			want: "perfbot.yaml:14: hosts[0].insecure_ignore_host_key: set on a local host, which has no host key",
		},
		{
			name: "zero slots",
			yaml: minimal + "hosts:\n  - name: gpu\n    kind: ssh\n    address: gpu.lan\n    workdir: /w\n    slots: 0\n",
			want: "perfbot.yaml:17: hosts[0].slots: 0 must be at least 1",
		},
		{
			name: "zero trees",
			yaml: minimal + "hosts:\n  - name: gpu\n    trees: 0\n",
			want: "perfbot.yaml:14: hosts[0].trees: 0 must be at least 1",
		},
		{
			name: "too many trees",
			yaml: minimal + "hosts:\n  - name: gpu\n    trees: 100\n",
			want: "perfbot.yaml:14: hosts[0].trees: 100 is more than 64",
		},
		{
			name: "duplicate host",
			yaml: minimal + "hosts:\n  - name: gpu\n  - name: gpu\n",
			want: `perfbot.yaml:14: hosts[1].name: duplicate host name "gpu" (first at line 13)`,
		},
		{
			name: "address on local host",
			yaml: minimal + "hosts:\n  - name: gpu\n    address: gpu.lan\n",
			want: "perfbot.yaml:14: hosts[0].address: set on a local host; add kind: ssh to reach gpu.lan",
		},
		{
			name: "bad cron schedule",
			yaml: minimal + "schedule: 0 2 * *\n",
			want: `perfbot.yaml:12: schedule: bad cron schedule "0 2 * *": expected exactly 5 fields, found 4: [0 2 * *] (want five fields such as "0 2 * * *", or @daily)`,
		},
		{
			name: "env name",
			yaml: strings.Replace(minimal, "    format: gobench\n", "    format: gobench\n    env: {NCCL-PROTO: LL}\n", 1),
			want: "perfbot.yaml:7: benchmarks[0].env.NCCL-PROTO: not an environment variable name",
		},
		{
			name: "wrong node kind",
			yaml: minimal + "github:\n  labels: perf\n",
			want: `perfbot.yaml:13: github.labels: want a list, got "perf"`,
		},
		{
			name: "bad glob",
			yaml: minimal + "components:\n  comm: [\"comm/[**\"]\n",
			want: `perfbot.yaml:13: components.comm: bad glob "comm/[**"`,
		},
		{
			name: "no metrics",
			yaml: strings.SplitAfter(minimal, "format: gobench\n")[0] + "metrics: []\n",
			want: "perfbot.yaml:7: metrics: at least one metric is required",
		},
		{
			name: "yaml syntax",
			yaml: minimal + "bisect:\n confidence: 0.9\n  max_runs: 3\n",
			want: "perfbot.yaml:14: YAML syntax: mapping values are not allowed in this context",
		},
		{
			name: "a dependency without a repository",
			yaml: minimal + "dependencies:\n  - {name: example.com/kern}\n",
			want: "perfbot.yaml:13: dependencies[0].repo: missing: the dependency's git repository (a clone URL or a local path), or for a Python package wheels (a directory of its wheels)",
		},
		{
			name: "a dependency without a name",
			yaml: minimal + "dependencies:\n  - {repo: ../kern}\n",
			want: "perfbot.yaml:13: dependencies[0].name: missing: the Go module path, the submodule's path or the Python package a bump names",
		},
		{
			name: "a dependency with a repository and wheels",
			yaml: minimal + "dependencies:\n  - {name: torch, repo: ../a, wheels: ./wheels}\n",
			want: "perfbot.yaml:13: dependencies[0].wheels: a dependency has either a git repository (repo) or a directory of wheels (wheels), not both",
		},
		{
			name: "a Python package with a path",
			yaml: minimal + "dependencies:\n  - {name: torch, wheels: ./wheels, path: third_party/torch}\n",
			want: "perfbot.yaml:13: dependencies[0].path: a Python package's wheels are installed by the build step, not put in the tree: leave path out",
		},
		{
			name: "a Python package named twice in two spellings",
			yaml: minimal + "dependencies:\n  - {name: flashinfer_python, wheels: ./a}\n  - {name: FlashInfer-Python, wheels: ./b}\n",
			want: "perfbot.yaml:14: dependencies[1].name: \"flashinfer-python\" is named twice",
		},
		{
			name: "a dependency named twice",
			yaml: minimal + "dependencies:\n  - {name: k, repo: ../a}\n  - {name: k, repo: ../b}\n",
			want: "perfbot.yaml:14: dependencies[1].name: \"k\" is named twice",
		},
		{
			name: "a dependency's path outside the tree",
			yaml: minimal + "dependencies:\n  - {name: k, repo: ../a, path: ../kern}\n",
			want: "perfbot.yaml:13: dependencies[0].path: \"../kern\" is not a directory inside the watched repository",
		},
		{
			name: "an unknown key of a dependency",
			yaml: minimal + "dependencies:\n  - {name: torch, index: https://download.pytorch.org/whl}\n",
			want: "perfbot.yaml:13: dependencies[0].index: unknown key (want one of name, repo, path, wheels)",
		},
		{
			name: "two documents",
			yaml: minimal + "---\nrepo: {url: x}\n",
			want: "perfbot.yaml:12: a second YAML document; a configuration is one document",
		},
		{
			name: "empty",
			yaml: "# nothing\n",
			want: "perfbot.yaml: empty configuration (repo.url, benchmarks and metrics are required)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "perfbot.yaml")
			require.Error(t, err)
			var es Errors
			require.True(t, errors.As(err, &es), "error %T is not Errors", err)
			assert.Equal(t, tc.want, es[0].Error(), "all errors:\n%v", err)
		})
	}
}

// A dependency's repository resolves against the config's directory, its
// path is cleaned, and Find names it by module or by path.
func TestDependencies(t *testing.T) {
	cfg, err := Parse([]byte(minimal+"dependencies:\n  - {name: example.com/kern, repo: ../kern, path: third_party/kern/}\n  - {name: vendor/nccl, repo: 'https://example.com/nccl.git'}\n"), "/etc/perfbot/perfbot.yaml")
	require.NoError(t, err)
	require.Len(t, cfg.Dependencies, 2)
	assert.Equal(t, Dependency{Name: "example.com/kern", Repo: "/etc/kern", Path: "third_party/kern"}, cfg.Dependencies[0])
	assert.Equal(t, "https://example.com/nccl.git", cfg.Dependencies[1].Repo)
	got, ok := cfg.Dependencies.Find("third_party/kern")
	assert.True(t, ok)
	assert.Equal(t, "example.com/kern", got.Name)
	_, ok = cfg.Dependencies.Find("torch")
	assert.False(t, ok)
}

// A Python package's wheels directory resolves against the config's
// directory and its name is normalized as PEP 503 does, so the pin's
// spelling finds it; the directory need not exist at load.
func TestDependencyWheels(t *testing.T) {
	cfg, err := Parse([]byte(minimal+"dependencies:\n  - {name: FlashInfer_Python, wheels: ../wheels}\n  - {name: torch, wheels: /srv/wheels/torch}\n"), "/etc/perfbot/perfbot.yaml")
	require.NoError(t, err)
	assert.Equal(t, Dependency{Name: "flashinfer-python", Wheels: "/etc/wheels"}, cfg.Dependencies[0])
	got, ok := cfg.Dependencies.Find("flashinfer-python")
	require.True(t, ok)
	assert.Equal(t, "/etc/wheels", got.Wheels)
	assert.Equal(t, "/srv/wheels/torch", cfg.Dependencies[1].Wheels)
}

func TestParseReportsEveryError(t *testing.T) {
	data := strings.NewReplacer("format: gobench", "format: gobenc", "unit: tok/s", "unit: tok/s\n    colour: red").Replace(minimal)
	_, err := Parse([]byte(data), "perfbot.yaml")
	require.EqualError(t, err, `perfbot.yaml:6: benchmarks[0].format: unknown format "gobenc" (want one of `+strings.Join(bench.Formats(), ", ")+`)
perfbot.yaml:12: metrics[0].colour: unknown key (want one of name, benchmark, select, unit, better, primary, alert, min_effect)`)

	var one *Error
	require.ErrorAs(t, err, &one)
	assert.Equal(t, 6, one.Line)
	assert.Equal(t, "benchmarks[0].format", one.Key)
}

func TestInferBetter(t *testing.T) {
	for unit, want := range map[string]record.Better{
		"tok/s": record.Higher, "GB/s": record.Higher, "busbw-GB/s": record.Higher, "req/s": record.Higher,
		"token/s/gpu": record.Higher, "MB/s": record.Higher,
		"ms": record.Lower, "us": record.Lower, "s": record.Lower, "sec/op": record.Lower, "ns/op": record.Lower,
		"B/op": record.Lower, "ms/verify": record.Lower, "us/allreduce": record.Lower, "ttft-ms": record.Lower,
		"accept-len": "", "value": "", "%": "", "tokens": "",
	} {
		got, ok := inferBetter(unit)
		assert.Equal(t, want, got, unit)
		assert.Equal(t, want != "", ok, unit)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "perfbot.yaml")
	require.NoError(t, os.WriteFile(path, []byte(minimal), 0o644))

	c, err := Load(path)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(filepath.Dir(dir), "infer"), c.Repo.URL)

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestDefault(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	c, err := Default()
	require.NoError(t, err)
	assert.Empty(t, c.Path, "the embedded config has no file")
	assert.Equal(t, wd, c.Dir)
	assert.True(t, strings.HasPrefix(c.Store, wd+string(filepath.Separator)), "store %s resolves against the working directory", c.Store)
	assert.NotEmpty(t, c.Primary().Name)
}

func TestGitHubCommitURL(t *testing.T) {
	tests := []struct {
		name   string
		github GitHub
		want   string
	}{
		{name: "github.com", github: GitHub{Repo: "example/infer", APIURL: "https://api.github.com/"}, want: "https://github.com/example/infer/commit/%s"},
		{name: "the default API", github: GitHub{Repo: "example/infer"}, want: "https://github.com/example/infer/commit/%s"},
		{name: "GitHub Enterprise Server", github: GitHub{Repo: "infra/engine", APIURL: "https://ghe.example/api/v3/"}, want: "https://ghe.example/infra/engine/commit/%s"},
		{name: "GitHub Enterprise Server on a port", github: GitHub{Repo: "infra/engine", APIURL: "https://ghe.example:8443/api/v3/"}, want: "https://ghe.example:8443/infra/engine/commit/%s"},
		{name: "GitHub Enterprise Cloud", github: GitHub{Repo: "infra/engine", APIURL: "https://api.octo.ghe.com/"}, want: "https://octo.ghe.com/infra/engine/commit/%s"},
		{name: "a loopback test server", github: GitHub{Repo: "o/r", APIURL: "http://127.0.0.1:8080/api/v3/"}, want: "http://127.0.0.1:8080/o/r/commit/%s"},
		{name: "no repository: issues go to a directory", github: GitHub{APIURL: "https://api.github.com/"}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.github.CommitURL())
		})
	}
}

func TestHunkSearchDefaults(t *testing.T) {
	tests := []struct {
		name           string
		bisect         string
		wantConfidence float64
		wantRepeats    int
	}{
		{name: "the defaults", bisect: "", wantConfidence: 0.999, wantRepeats: 8},
		{name: "more repeats than the default raise the hunk search's", bisect: "bisect: {repeats: 12}\n", wantConfidence: 0.999, wantRepeats: 12},
		{name: "fewer repeats leave the hunk search's", bisect: "bisect: {repeats: 3}\n", wantConfidence: 0.999, wantRepeats: 8},
		{name: "set", bisect: "bisect: {repeats: 12, hunk_confidence: 0.99, hunk_repeats: 5}\n", wantConfidence: 0.99, wantRepeats: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(minimal+tt.bisect), "/srv/perf/perfbot.yaml")
			require.NoError(t, err)
			assert.Equal(t, tt.wantConfidence, c.Bisect.HunkConfidence)
			assert.Equal(t, tt.wantRepeats, c.Bisect.HunkRepeats)
		})
	}
}
