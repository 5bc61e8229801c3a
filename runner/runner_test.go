package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
	"github.com/perfbot/perfbot/secret"
)

// testSpec builds once and runs one Go benchmark step with two metrics.
var testSpec = record.Spec{
	Build: []record.Step{{Name: "compile", Run: "go test -c", Timeout: time.Minute}},
	Benchmarks: []record.BenchStep{{
		Step:   record.Step{Name: "engine", Run: "./engine.test -test.bench .", Timeout: time.Minute, Env: map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring"}},
		Format: "gobench",
	}},
	Metrics: []record.Metric{
		{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher, Primary: true},
		{Name: "decode_tok_s", Benchmark: "engine", Select: "BenchmarkDecode", Unit: "tok/s", Better: record.Higher},
	},
}

func goBench(verify, decode float64) string {
	return fmt.Sprintf("goos: linux\nBenchmarkVerifyStep-8 \t 10 \t %g tok/s\nBenchmarkDecode-8 \t 10 \t %g tok/s\nPASS\n", verify, decode)
}

// measure runs Measure on a lease of a pool of host alone and returns
// every recorded run.
func measure(t *testing.T, ctx context.Context, host runner.Host, target record.Target, repeats int) ([]record.Run, error) {
	t.Helper()
	pool, err := runner.NewPool(host)
	require.NoError(t, err)
	return runnertest.Measure(t, ctx, pool, &runner.Runner{Spec: testSpec, EnvKeep: []string{"SGLANG_*"}}, runner.Source{Target: target}, repeats)
}

func TestMeasureRecordsEveryRun(t *testing.T) {
	host := &runnertest.Fake{Commits: map[string]runnertest.FakeCommit{
		"c1": {Outputs: []string{goBench(100, 50), goBench(101, 51), goBench(99, 49)}},
	}}
	target := record.Target{Commit: "c1"}
	runs, err := measure(t, context.Background(), host, target, 4)
	require.NoError(t, err)
	require.Len(t, runs, 4)

	for i, run := range runs {
		assert.Equal(t, record.StatusOK, run.Status, "run %d", i)
		assert.Empty(t, run.Error)
		assert.Equal(t, target.Key(), run.TargetKey)
		assert.Equal(t, testSpec.Hash(), run.SpecHash)
		assert.Equal(t, "fake", run.Host)
		assert.Equal(t, "fake", run.Fingerprint.Host)
		assert.False(t, run.Started.IsZero())
		assert.GreaterOrEqual(t, run.Duration, run.Overhead)
		assert.Len(t, run.Samples, 2)
	}
	assert.Equal(t, map[string]float64{"verify_tok_s": 100, "decode_tok_s": 50}, runs[0].Values)
	assert.Equal(t, map[string]float64{"verify_tok_s": 101, "decode_tok_s": 51}, runs[1].Values)
	assert.Equal(t, map[string]float64{"verify_tok_s": 99, "decode_tok_s": 49}, runs[2].Values)
	assert.Equal(t, map[string]float64{"verify_tok_s": 100, "decode_tok_s": 50}, runs[3].Values, "outputs cycle")

	assert.Equal(t, []string{"compile", "engine"}, logSteps(runs[0]), "the build's log goes with the first run")
	assert.Equal(t, []string{"engine"}, logSteps(runs[1]))
	assert.Equal(t, 1, host.Builds("c1"), "one build serves every repeat")
	assert.Equal(t, 4, host.BenchRuns("c1"))
}

func logSteps(run record.Run) []string {
	var steps []string
	for _, l := range run.Logs {
		steps = append(steps, l.Step)
	}
	return steps
}

func TestMeasureFailures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		script     runnertest.FakeCommit
		wantStatus []record.Status
		wantError  string // in the last run's Error
		wantInfra  bool   // Measure returns a *record.InfraError
	}{
		{
			name:       "build fails",
			script:     runnertest.FakeCommit{BuildFails: true},
			wantStatus: []record.Status{record.StatusBuildFailed},
			wantError:  `build step "compile" exited with status 1: fake: build fails at c1`,
		},
		{
			name:       "benchmark exits non-zero",
			script:     runnertest.FakeCommit{Outputs: []string{"panic: index out of range\n"}, ExitCode: 2},
			wantStatus: []record.Status{record.StatusBenchFailed},
			wantError:  `benchmark step "engine" exited with status 2: panic: index out of range`,
		},
		{
			name:       "benchmark times out",
			script:     runnertest.FakeCommit{TimesOut: true},
			wantStatus: []record.Status{record.StatusBenchFailed},
			wantError:  `benchmark step "engine" timed out after 1m0s`,
		},
		{
			name:       "unreadable output",
			script:     runnertest.FakeCommit{Outputs: []string{"no benchmarks here\n"}},
			wantStatus: []record.Status{record.StatusBenchFailed},
			wantError:  `"no benchmarks here"`,
		},
		{
			name:       "metric missing from output",
			script:     runnertest.FakeCommit{Outputs: []string{"BenchmarkVerifyStep-8 10 100 tok/s\n"}},
			wantStatus: []record.Status{record.StatusBenchFailed},
			wantError:  `metric decode_tok_s: select "BenchmarkDecode"`,
		},
		{
			name:       "second run fails after a good one",
			script:     runnertest.FakeCommit{Outputs: []string{goBench(100, 50), "BenchmarkVerifyStep-8 10 100 tok/s\n"}},
			wantStatus: []record.Status{record.StatusOK, record.StatusBenchFailed},
			wantError:  `metric decode_tok_s`,
		},
		{
			name:       "host unreachable",
			script:     runnertest.FakeCommit{InfraErr: errors.New("connection refused")},
			wantStatus: []record.Status{record.StatusInfraError},
			wantError:  "host fake: fake checkout: connection refused",
			wantInfra:  true,
		},
		{
			name:       "hunks do not apply",
			script:     runnertest.FakeCommit{ApplyFails: true},
			wantStatus: []record.Status{record.StatusBuildFailed},
			wantError:  "fake: does not apply",
		},
		{
			name:       "the tree changed under the run",
			script:     runnertest.FakeCommit{Outputs: []string{goBench(100, 50)}, TreeChanges: true},
			wantStatus: []record.Status{record.StatusInfraError},
			wantError:  "verify tree of c1: the tree does not hold the target",
			wantInfra:  true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := &runnertest.Fake{Commits: map[string]runnertest.FakeCommit{"c1": tc.script}}
			runs, err := measure(t, context.Background(), host, record.Target{Commit: "c1"}, 3)
			var infra *record.InfraError
			if tc.wantInfra {
				require.ErrorAs(t, err, &infra)
			} else {
				require.NoError(t, err, "a broken revision is a recorded status, not an error")
			}
			var statuses []record.Status
			for _, r := range runs {
				statuses = append(statuses, r.Status)
			}
			require.Equal(t, tc.wantStatus, statuses)
			last := runs[len(runs)-1]
			assert.Contains(t, last.Error, tc.wantError)
			assert.Nil(t, last.Values, "a failed run holds no values")
			if last.Status == record.StatusInfraError {
				assert.Empty(t, last.Samples, "a failed infrastructure yields no samples")
			}
		})
	}
}

func TestMeasureFactsFailure(t *testing.T) {
	host := &runnertest.Fake{FactsErr: errors.New("nvidia-smi: driver gone"), Default: &runnertest.FakeCommit{}}
	runs, err := measure(t, context.Background(), host, record.Target{Commit: "c1"}, 3)
	var infra *record.InfraError
	require.ErrorAs(t, err, &infra)
	require.Len(t, runs, 1)
	assert.Equal(t, record.StatusInfraError, runs[0].Status)
	assert.Empty(t, host.Calls(), "nothing runs on a host that cannot describe itself")
}

func TestMeasureCancelledRecordsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	host := &runnertest.Fake{Default: &runnertest.FakeCommit{Outputs: []string{goBench(1, 1)}}}
	runs, err := measure(t, ctx, host, record.Target{Commit: "c1"}, 3)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, runs)
}

func TestMeasureStopsWhenRecordFails(t *testing.T) {
	host := &runnertest.Fake{Default: &runnertest.FakeCommit{Outputs: []string{goBench(1, 1)}}}
	pool, err := runner.NewPool(host)
	require.NoError(t, err)
	lease, err := pool.Acquire(context.Background(), record.Target{Commit: "c1"})
	require.NoError(t, err)
	defer lease.Release()
	n := 0
	_, err = (&runner.Runner{Spec: testSpec}).Measure(context.Background(), lease, runner.Source{Target: record.Target{Commit: "c1"}}, 5, func(record.Run) error {
		n++
		if n == 2 {
			return errors.New("disk full")
		}
		return nil
	})
	require.ErrorContains(t, err, "record run: disk full")
	assert.False(t, lease.Built(), "a tree whose runs were not all recorded is not trusted")
	assert.Equal(t, 2, n)
	assert.Equal(t, 2, host.BenchRuns("c1"))
}

func TestMeasureEnvironment(t *testing.T) {
	host := &runnertest.Fake{Default: &runnertest.FakeCommit{Outputs: []string{goBench(1, 1)}}}
	target := record.Target{Commit: "c1", Env: map[string]string{"NCCL_PROTO": "Simple", "HF_TOKEN": "hf_secret"}}
	runs, err := measure(t, context.Background(), host, target, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)

	calls := host.Calls()
	require.Len(t, calls, 2)
	build, run := calls[0], calls[1]
	assert.Equal(t, runner.PhaseBuild, build.Phase)
	assert.NotContains(t, build.Env, "NCCL_PROTO", "target overrides are for benchmark steps")
	assert.Equal(t, runner.PhaseBench, run.Phase)
	assert.Equal(t, "Simple", run.Env["NCCL_PROTO"], "the target overrides the step")
	assert.Equal(t, "Ring", run.Env["NCCL_ALGO"])
	assert.Equal(t, "c1", run.Env[runner.EnvCommit])
	assert.Equal(t, target.Key(), run.Env[runner.EnvTarget])
	assert.Equal(t, "engine", run.Env[runner.EnvStep])

	assert.Equal(t, map[string]string{
		"NCCL_PROTO": "Simple",
		"NCCL_ALGO":  "Ring",
		"HF_TOKEN":   secret.Mask,
	}, runs[0].Fingerprint.Env, "perfbot's own variables are not part of the fingerprint")
}

// A benchmark that prints a secret leaves it in no stored log, while its
// numbers are still read from the output.
func TestMeasureScrubsLogs(t *testing.T) {
	ghp := "ghp_" + strings.Repeat("b", 36)
	host := &runnertest.Fake{Default: &runnertest.FakeCommit{Outputs: []string{"MY_PASSWORD_VALUE=hunter2-long-value " + ghp + "\n" + goBench(7, 3)}}}
	pool, err := runner.NewPool(host)
	require.NoError(t, err)
	r := &runner.Runner{Spec: testSpec, Secrets: []string{"hunter2-long-value"}}
	runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: "c1"}}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, 7.0, runs[0].Values["verify_tok_s"])
	log := runs[0].Logs[len(runs[0].Logs)-1].Output
	assert.NotContains(t, log, "hunter2-long-value")
	assert.NotContains(t, log, ghp)
	assert.Contains(t, log, secret.Mask)
}

func TestFakeTargetsOverrideCommits(t *testing.T) {
	withHunk := record.Target{Commit: "c1", Patch: "c0..c1", Hunks: []string{"h2"}}
	host := &runnertest.Fake{
		Commits: map[string]runnertest.FakeCommit{"c1": {Outputs: []string{goBench(80, 40)}}},
		Targets: map[string]runnertest.FakeCommit{withHunk.Key(): {Outputs: []string{goBench(100, 50)}}},
	}
	plain, err := measure(t, context.Background(), host, record.Target{Commit: "c1"}, 1)
	require.NoError(t, err)
	patched, err := measure(t, context.Background(), host, withHunk, 1)
	require.NoError(t, err)
	assert.Equal(t, 80.0, plain[0].Values["verify_tok_s"])
	assert.Equal(t, 100.0, patched[0].Values["verify_tok_s"])

	_, err = measure(t, context.Background(), host, record.Target{Commit: "c9"}, 1)
	require.ErrorContains(t, err, `no script for commit "c9"`)
}

// localHost returns a Local host over a clone of a repository whose one
// commit holds files, and that commit.
func localHost(t testing.TB, name string, files map[string]string) (*runner.Local, string) {
	t.Helper()
	b := gitopstest.NewBuilder(t)
	commit := b.Commit("first", files)
	workdir := t.TempDir()
	repo, err := gitops.Open(context.Background(), b.Dir, workdir)
	require.NoError(t, err)
	return &runner.Local{HostName: name, Repo: repo, Workdir: workdir}, commit
}

// localSpec builds by writing a file and benchmarks by printing $SPEED
// when the build's file is there.
var localSpec = record.Spec{
	Build: []record.Step{{Name: "build", Run: "echo compiled > built", Timeout: time.Minute}},
	Benchmarks: []record.BenchStep{{
		Step: record.Step{
			Name:    "engine",
			Run:     `test -f built && printf 'BenchmarkVerifyStep-2 1 %s tok/s\n' "$SPEED"`,
			Timeout: time.Minute,
			Env:     map[string]string{"SPEED": "123.5", "NCCL_P2P_LEVEL": "SYS", "API_KEY": "k"},
		},
		Format: "gobench",
	}},
	Metrics: []record.Metric{{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher, Primary: true}},
}

func TestMeasureOnLocalHost(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("SGLANG_ENABLE_SPEC_V2", "True")
	t.Setenv("UNRELATED_SETTING", "x")
	box, commit := localHost(t, "box", map[string]string{"README": "engine\n"})
	pool, err := runner.NewPool(box)
	require.NoError(t, err)
	r := &runner.Runner{Spec: localSpec, EnvKeep: []string{"SGLANG_*"}}
	target := record.Target{Commit: commit, Env: map[string]string{"SPEED": "99"}}
	runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: target}, 2)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	for _, run := range runs {
		require.Equal(t, record.StatusOK, run.Status, run.Error)
		assert.Equal(t, map[string]float64{"verify_tok_s": 99}, run.Values)
		assert.Equal(t, "box", run.Host)
		assert.Positive(t, run.Overhead)
		env := run.Fingerprint.Env
		assert.Equal(t, "True", env["SGLANG_ENABLE_SPEC_V2"], "configured globs record inherited variables")
		assert.Equal(t, "SYS", env["NCCL_P2P_LEVEL"])
		assert.Equal(t, "99", env["SPEED"])
		assert.Equal(t, secret.Mask, env["API_KEY"])
		assert.NotContains(t, env, "UNRELATED_SETTING")
		assert.NotContains(t, env, "PATH")
		assert.NotContains(t, env, runner.EnvCommit)
		assert.Regexp(t, `^\d+\.\d+ \d+\.\d+ \d+\.\d+$`, run.Fingerprint.LoadAvg, "the host's load before the run")
		assert.NotEmpty(t, run.Fingerprint.CPUAffinity, "the CPUs the benchmark could run on")
	}
	assert.Equal(t, "", runs[0].Logs[0].Output)
	assert.Equal(t, "BenchmarkVerifyStep-2 1 99 tok/s\n", runs[0].Logs[1].Output)

	// The tree is under the host's workdir; the environment dumps were
	// read and removed; nothing is left in the temp directory.
	assert.FileExists(t, filepath.Join(box.Workdir, "slots", "0", "built"))
	assert.NoFileExists(t, filepath.Join(box.Workdir, "scratch", "0", "bench-engine"))
	assert.NoFileExists(t, filepath.Join(box.Workdir, "scratch", "0", "build-build"))
	left, err := filepath.Glob(filepath.Join(tmp, "perfbot-*"))
	require.NoError(t, err)
	assert.Empty(t, left)

	// The same target in another environment runs in the same build.
	again := record.Target{Commit: commit, Env: map[string]string{"SPEED": "101"}}
	runs, err = runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: again}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, []string{"engine"}, logSteps(runs[0]), "no build for an environment change")
	assert.Equal(t, 101.0, runs[0].Values["verify_tok_s"])
}

// TestMeasureLeavesNoSecretReadableByOthers: after a run, no file under
// the host's workdir that another user could read holds a secret of the
// benchmark's environment, given or inherited (the environment dumps of
// every step hold all of it).
func TestMeasureLeavesNoSecretReadableByOthers(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	secrets := []string{"hf_" + strings.Repeat("S3cr3tV4lue", 3), "wJalrXUtnFEMIK7MDENGbPxRfiCY", "pr0xyPassw0rd"}
	t.Setenv("HF_TOKEN", secrets[0])
	box, commit := localHost(t, "box", map[string]string{"README": "engine\n"})
	pool, err := runner.NewPool(box)
	require.NoError(t, err)
	spec := localSpec
	spec.Benchmarks = slices.Clone(localSpec.Benchmarks)
	spec.Benchmarks[0].Env = map[string]string{"SPEED": "1", "AWS_SECRET_ACCESS_KEY": secrets[1],
		"GOPROXY": "https://bot:" + secrets[2] + "@goproxy.example/,direct"}
	r := &runner.Runner{Spec: spec}
	runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: commit}}, 1)
	require.NoError(t, err)
	require.Equal(t, record.StatusOK, runs[0].Status, runs[0].Error)
	assert.Empty(t, runnertest.Exposed(t, box.Workdir, secrets), "files other users can read that hold a secret")
	for _, dir := range []string{filepath.Join(box.Workdir, "scratch"), filepath.Join(box.Workdir, "scratch", "0")} {
		info, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), dir)
	}
}

func TestMeasureVanishedTree(t *testing.T) {
	box, commit := localHost(t, "box", map[string]string{"README": "engine\n"})
	pool, err := runner.NewPool(box)
	require.NoError(t, err)
	r := &runner.Runner{Spec: localSpec}
	target := runner.Source{Target: record.Target{Commit: commit}}
	_, err = runnertest.Measure(t, context.Background(), pool, r, target, 1)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(box.Workdir, "slots", "0")))

	// The pool holds the tree built, but it is gone: it is built again.
	runs, err := runnertest.Measure(t, context.Background(), pool, r, target, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, record.StatusOK, runs[0].Status, runs[0].Error)
	assert.Equal(t, []string{"build", "engine"}, logSteps(runs[0]))
}

// A timeout is the machine's bad moment as often as the revision's fault:
// a step that timed out runs again, and only a step that times out every
// time makes the target broken. A configuration of some of a change's
// hunks is broken at its first timeout.
func TestMeasureRetriesTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		script      runnertest.FakeCommit
		target      record.Target // default: commit c1
		retries     int
		wantStatus  []record.Status
		wantInvoked int // benchmark invocations
		wantLogs    []string
	}{
		{name: "one timeout, then a sample", script: runnertest.FakeCommit{Outputs: []string{goBench(90, 40)}, TimesOutFirst: 1},
			wantStatus: []record.Status{record.StatusOK}, wantInvoked: 2, wantLogs: []string{"compile", "engine (timed out)", "engine"}},
		{name: "always times out", script: runnertest.FakeCommit{TimesOut: true},
			wantStatus: []record.Status{record.StatusBenchFailed}, wantInvoked: 2, wantLogs: []string{"compile", "engine (timed out)", "engine"}},
		{name: "as many retries as configured", script: runnertest.FakeCommit{Outputs: []string{goBench(90, 40)}, TimesOutFirst: 2}, retries: 2,
			wantStatus: []record.Status{record.StatusOK}, wantInvoked: 3, wantLogs: []string{"compile", "engine (timed out)", "engine (timed out)", "engine"}},
		{name: "no retries", script: runnertest.FakeCommit{Outputs: []string{goBench(90, 40)}, TimesOutFirst: 1}, retries: -1,
			wantStatus: []record.Status{record.StatusBenchFailed}, wantInvoked: 1, wantLogs: []string{"compile", "engine"}},
		{name: "some hunks of a change", script: runnertest.FakeCommit{Outputs: []string{goBench(90, 40)}, TimesOutFirst: 1},
			target:     record.Target{Commit: "c1", Patch: "p1", Hunks: []string{"p1-2", "p1-5"}},
			wantStatus: []record.Status{record.StatusBenchFailed}, wantInvoked: 1, wantLogs: []string{"compile", "engine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := &runnertest.Fake{Commits: map[string]runnertest.FakeCommit{"c1": tc.script}}
			pool, err := runner.NewPool(host)
			require.NoError(t, err)
			r := &runner.Runner{Spec: testSpec, TimeoutRetries: tc.retries}
			target := tc.target
			if target.Commit == "" {
				target = record.Target{Commit: "c1"}
			}
			runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: target}, 1)
			require.NoError(t, err)
			var statuses []record.Status
			for _, run := range runs {
				statuses = append(statuses, run.Status)
			}
			assert.Equal(t, tc.wantStatus, statuses)
			assert.Equal(t, tc.wantInvoked, host.BenchRuns("c1"))
			assert.Equal(t, tc.wantLogs, logSteps(runs[0]))
			if tc.wantStatus[0] == record.StatusOK {
				assert.Equal(t, 90.0, runs[0].Values["verify_tok_s"])
			}
		})
	}
}

// TestMeasureKeepsWhatTheBenchmarkReports: the configuration lines of a
// gobench step's output (a Python benchmark's torch and CUDA versions)
// are kept with the run, secret-named ones redacted.
func TestMeasureKeepsWhatTheBenchmarkReports(t *testing.T) {
	box, commit := localHost(t, "box", map[string]string{"README": "engine\n"})
	pool, err := runner.NewPool(box)
	require.NoError(t, err)
	spec := localSpec
	spec.Benchmarks = slices.Clone(localSpec.Benchmarks)
	spec.Benchmarks[0].Run = `printf 'torch: 2.11.0+cu128\ncuda: 12.8\napi_token: hunter2\n'; ` + spec.Benchmarks[0].Run
	r := &runner.Runner{Spec: spec}
	runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: commit}}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, record.StatusOK, runs[0].Status, runs[0].Error)
	rep := runs[0].Fingerprint.Reported
	assert.Equal(t, "2.11.0+cu128", rep["torch"])
	assert.Equal(t, "12.8", rep["cuda"])
	assert.NotContains(t, rep["api_token"], "hunter2")
}
