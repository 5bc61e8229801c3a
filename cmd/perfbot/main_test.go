package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/secret"
)

// TestMain lets a test run perfbot as a child process (for SIGKILL tests)
// by re-executing the test binary.
func TestMain(m *testing.M) {
	if os.Getenv("PERFBOT_TEST_MAIN") == "1" {
		// As main does.
		ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// perfbot runs the command in-process and returns stdout, stderr and the
// exit status.
func perfbot(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	defer os.Chdir(wd)
	code := run(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// toyProject writes a repository whose "benchmark" is a shell script
// printing Go benchmark lines, with values set per commit, and a config
// measuring it. It returns the project directory (holding perfbot.yaml).
type toyCommit struct {
	tokS   float64 // value the benchmark reports
	broken bool    // the build step fails
	hang   bool    // the benchmark never finishes
	output string  // raw benchmark output instead of a value
}

func toyProject(t *testing.T, commits []toyCommit) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	b := gitopstest.NewBuilder(t)
	var hashes []string
	for i, c := range commits {
		files := map[string]string{"BROKEN": "", "bench.sh": benchScript(c)}
		if c.broken {
			files["BROKEN"] = "yes\n"
		}
		hashes = append(hashes, b.Commit(fmt.Sprint(i+1), files))
	}
	cfg := `repo:
  url: ` + b.Dir + `
build:
  - name: build
    run: test ! -f BROKEN
    timeout: 30s
benchmarks:
  - name: toy
    run: sh bench.sh
    format: gobench
    timeout: 2s
    env: {NCCL_PROTO: LL, API_TOKEN: hunter2}
metrics:
  - name: gen_tok_s
    benchmark: toy
    select: BenchmarkGen
    unit: tok/s
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), []byte(cfg), 0o644))
	return dir, hashes
}

func benchScript(c toyCommit) string {
	switch {
	case c.hang:
		return "echo $$ > \"$TOY_HANG_PID\"\nsleep 1000 & sleep 1000\n"
	case c.output != "":
		return "cat <<'EOF'\n" + c.output + "EOF\n"
	default:
		// A little noise from the run counter keeps samples distinct.
		return fmt.Sprintf("n=$(ls -1 /proc/self/fd | wc -l)\necho \"BenchmarkGen-2   100   1000 ns/op   %g tok/s\"\n", c.tokS)
	}
}

type historyJSON []struct {
	Metric      string  `json:"metric"`
	Value       float64 `json:"value"`
	Commit      string  `json:"commit"`
	Time        string  `json:"time"`
	Host        string  `json:"host"`
	Status      string  `json:"status"`
	Fingerprint *struct {
		Host string            `json:"host"`
		CPUs int               `json:"cpus"`
		Env  map[string]string `json:"env"`
	} `json:"fingerprint"`
}

func history(t *testing.T, dir string) historyJSON {
	t.Helper()
	out, errOut, code := perfbot(t, dir, "history", "--json")
	require.Equal(t, 0, code, errOut)
	var h historyJSON
	require.NoError(t, json.Unmarshal([]byte(out), &h), out)
	return h
}

func countByCommit(h historyJSON) map[string]int {
	n := map[string]int{}
	for _, r := range h {
		n[r.Commit]++
	}
	return n
}

func TestMeasureStoresAndReusesSamples(t *testing.T) {
	dir, hashes := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 90}})

	_, errOut, code := perfbot(t, dir, "measure", "HEAD~1", "HEAD", "--repeats", "5")
	require.Equal(t, 0, code, errOut)
	h := history(t, dir)
	require.Equal(t, map[string]int{hashes[0]: 5, hashes[1]: 5}, countByCommit(h))
	for _, r := range h {
		require.Equal(t, "gen_tok_s", r.Metric)
		require.Equal(t, "ok", r.Status)
		require.Equal(t, "local", r.Host)
		require.NotEmpty(t, r.Time)
		require.NotNil(t, r.Fingerprint)
		require.Positive(t, r.Fingerprint.CPUs)
		require.Equal(t, "LL", r.Fingerprint.Env["NCCL_PROTO"], "the variables the benchmark received are recorded")
		require.Equal(t, secret.Mask, r.Fingerprint.Env["API_TOKEN"], "secrets are redacted")
		want := map[string]float64{hashes[0]: 100, hashes[1]: 90}[r.Commit]
		require.Equal(t, want, r.Value)
	}

	// The same measure again runs nothing new.
	_, errOut, code = perfbot(t, dir, "measure", "HEAD~1", "HEAD", "--repeats", "5")
	require.Equal(t, 0, code, errOut)
	require.Len(t, history(t, dir), 10)

	// --repeats 8 runs only the 3 missing.
	out, errOut, code := perfbot(t, dir, "measure", hashes[0][:7], "main", "--repeats", "8", "--json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, map[string]int{hashes[0]: 8, hashes[1]: 8}, countByCommit(history(t, dir)))
	var ms []struct {
		Commit  string
		Status  string
		Metrics []struct{ N int }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ms))
	require.Len(t, ms, 2)
	require.Equal(t, 8, ms[0].Metrics[0].N)
}

func TestMeasureBrokenRevisions(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "hang.pid")
	t.Setenv("TOY_HANG_PID", pidFile)
	dir, hashes := toyProject(t, []toyCommit{
		{tokS: 100},
		{broken: true},
		{hang: true},
		{output: "PASS\nok  \texample.com/toy\t0.01s\n"},
		{output: "BenchmarkGen-2   100   1000 ns/op   12 tok/s\nBenchmarkGen-2 garbage here\n"},
	})
	out, errOut, code := perfbot(t, dir, "measure", hashes[1], hashes[2], hashes[3], hashes[4], "--repeats", "2", "--json")
	require.Equal(t, 0, code, "a broken revision is a result, not a failure: %s", errOut)
	var ms []struct {
		Commit, Status, Error string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ms))
	require.Len(t, ms, 4)
	require.Equal(t, "build_failed", ms[0].Status)
	require.Equal(t, "bench_failed", ms[1].Status)
	require.Contains(t, ms[1].Error, "timed out")
	require.Equal(t, "bench_failed", ms[2].Status)
	require.Contains(t, ms[2].Error, "PASS", "the parse error quotes the output")
	require.Equal(t, "bench_failed", ms[3].Status)
	require.Contains(t, ms[3].Error, "garbage here")

	// The hung benchmark's shell and its children are gone.
	pid, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	require.False(t, alive(strings.TrimSpace(string(pid))), "process %s survived its timeout", pid)

	// A broken revision is not built again.
	_, errOut, code = perfbot(t, dir, "measure", hashes[1], "--repeats", "2", "-v")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, errOut, "build failed")
}

func TestExitStatus(t *testing.T) {
	dir, _ := toyProject(t, []toyCommit{{tokS: 1}, {tokS: 2}})
	tests := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"unknown revision", []string{"measure", "nope"}, exitInput, `"nope"`},
		{"no revision", []string{"measure"}, exitInput, "requires at least 1 arg"},
		{"bad repeats", []string{"measure", "HEAD", "--repeats", "0"}, exitInput, "--repeats"},
		{"unknown flag", []string{"history", "--bogus"}, exitInput, "bogus"},
		{"bad since", []string{"history", "--since", "yesterday"}, exitInput, "--since"},
		{"bad format", []string{"history", "--format", "xml"}, exitInput, "xml"},
		{"missing config", []string{"--config", "nope.yaml", "history"}, exitInput, "nope.yaml"},
		{"bisect without ends", []string{"bisect", "--good", "HEAD"}, exitInput, "--bad"},
		{"negative scan", []string{"bisect", "--good", "HEAD~1", "--bad", "HEAD", "--scan", "-3"}, exitInput, "--scan -3"},
		{"negative limit", []string{"history", "--limit", "-1"}, exitInput, "--limit -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := perfbot(t, dir, tt.args...)
			require.Equal(t, tt.want, code, errOut)
			require.Empty(t, out)
			require.Contains(t, errOut, tt.msg)
		})
	}
}

func TestBadConfigNamesKeyAndLine(t *testing.T) {
	dir, _ := toyProject(t, []toyCommit{{tokS: 1}})
	bad := "repo:\n  url: ./repo\nbenchmarks:\n  - name: toy\n    run: sh bench.sh\n    format: gobenc\nmetrics:\n  - name: m\n    benchmark: toy\n    select: X\n    unit: tok/s\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), []byte(bad), 0o644))
	_, errOut, code := perfbot(t, dir, "measure", "HEAD")
	require.Equal(t, exitInput, code)
	require.Contains(t, errOut, "perfbot.yaml:6")
	require.Contains(t, errOut, "gobenc")
}

func TestHistoryFormats(t *testing.T) {
	dir, hashes := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 90}})
	_, errOut, code := perfbot(t, dir, "measure", "HEAD~1", "HEAD", "--repeats", "2")
	require.Equal(t, 0, code, errOut)

	out, errOut, code := perfbot(t, dir, "history", "--format", "csv")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5)
	require.Equal(t, "time,commit,metric,unit,value,host,status,run_id", lines[0])

	out, errOut, code = perfbot(t, dir, "history", "--format", "benchstat")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "commit: "+record.ShortHash(hashes[0]))
	require.Less(t, strings.Index(out, "commit: "+record.ShortHash(hashes[0])), strings.Index(out, "commit: "+record.ShortHash(hashes[1])), "oldest first")
	require.NotContains(t, out, "Benchmarkgen_tok_s", "named after the benchmark, not the metric")

	out, _, code = perfbot(t, dir, "history", "--limit", "1", "--json")
	require.Equal(t, 0, code)
	var h historyJSON
	require.NoError(t, json.Unmarshal([]byte(out), &h))
	require.Len(t, h, 1)
	require.Equal(t, hashes[1], h[0].Commit, "newest first")
}

func TestMeasureSurvivesSIGKILL(t *testing.T) {
	dir, hashes := toyProject(t, []toyCommit{{output: "BenchmarkGen-2   100   1000 ns/op   50 tok/s\n"}})
	// Each run takes a while, so the kill lands mid-measurement.
	script := filepath.Join(dir, "slow.sh")
	require.NoError(t, os.WriteFile(script, []byte("sleep 0.2\necho 'BenchmarkGen-2   100   1000 ns/op   50 tok/s'\necho x >> "+filepath.Join(dir, "runs.log")+"\n"), 0o755))
	cfg, err := os.ReadFile(filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	cfg = []byte(strings.Replace(string(cfg), "run: sh bench.sh", "run: sh "+script, 1))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), cfg, 0o644))

	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "measure", "HEAD", "--repeats", "40")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PERFBOT_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// Wait until the benchmark has run a few times.
	waitFor(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "runs.log"))
		return bytes.Count(b, []byte("\n")) >= 5
	})
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	before := countByCommit(history(t, dir))[hashes[0]]
	require.Less(t, before, 40, "the kill landed before the end: %s", stderr.String())
	require.GreaterOrEqual(t, before, 3, "the runs completed before the kill were kept")

	_, errOut, code := perfbot(t, dir, "measure", "HEAD", "--repeats", "40")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 40, countByCommit(history(t, dir))[hashes[0]], "every completed run was kept and only the missing ones ran")
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 600; i++ {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("condition not reached in 12s")
}

// alive reports whether a process exists and is not a zombie (a killed
// child of a process that does not reap, such as a container's PID 1).
func alive(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// TestFindingsFiledAndRead bisects a toy regression with --file-issue into
// the issues directory, then reads it back through findings and report.
func TestFindingsFiledAndRead(t *testing.T) {
	dir, hashes := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 100}, {tokS: 80}})
	out, errOut, code := perfbot(t, dir, "bisect", "--good", "HEAD~2", "--bad", "HEAD", "--file-issue", "--json")
	require.Equal(t, 0, code, errOut)
	var rep struct {
		Verdict  string
		Culprits []struct{ Commit string }
		Findings []string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, "culprit", rep.Verdict, errOut)
	require.Len(t, rep.Culprits, 1)
	require.Equal(t, hashes[2], rep.Culprits[0].Commit)
	require.Len(t, rep.Findings, 1)
	id := rep.Findings[0]
	require.Contains(t, errOut, "finding "+id+": issue #1 ")

	out, errOut, code = perfbot(t, dir, "findings", "--json")
	require.Equal(t, 0, code, errOut)
	var fs []struct {
		ID, State string
		Issue     int
	}
	require.NoError(t, json.Unmarshal([]byte(out), &fs), out)
	require.Len(t, fs, 1)
	require.Equal(t, id, fs[0].ID)
	require.Equal(t, "filed", fs[0].State)
	require.Equal(t, 1, fs[0].Issue)

	out, errOut, code = perfbot(t, dir, "findings")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, id)

	tests := []struct {
		name   string
		args   []string
		want   int
		stdout string
		stderr string
	}{
		{name: "render by prefix", args: []string{"report", id}, want: exitOK, stdout: "# gen_tok_s"},
		{name: "file again: nothing new", args: []string{"report", id, "--file-issue"}, want: exitOK, stderr: "issue #1"},
		{name: "retry: nothing unfiled", args: []string{"report", "--retry-unfiled"}, want: exitOK, stderr: "0 unfiled findings"},
		{name: "an unknown finding", args: []string{"report", "perfbotfpzz"}, want: exitInput, stderr: `no finding "perfbotfpzz"`},
		{name: "a short prefix", args: []string{"report", id[:4], "--file-issue"}, want: exitOK, stderr: "issue #1"},
		{name: "the fingerprint an older perfbot showed", args: []string{"report", "perfbotfp" + id}, want: exitOK, stdout: "perfbot finding `" + id + "`"},
		{name: "neither finding nor retry", args: []string{"report"}, want: exitInput, stderr: "--retry-unfiled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := perfbot(t, dir, tt.args...)
			require.Equal(t, tt.want, code, errOut)
			require.Contains(t, out, tt.stdout)
			require.Contains(t, errOut, tt.stderr)
		})
	}
	issues, err := filepath.Glob(filepath.Join(dir, ".perfbot", "issues", "*.md"))
	require.NoError(t, err)
	require.Len(t, issues, 1, "one issue, however often it is filed")

	// For CI: the same bisection again (all its runs are stored) fails
	// the job, after printing its report.
	out, errOut, code = perfbot(t, dir, "bisect", "--good", "HEAD~2", "--bad", "HEAD", "--fail-on-culprit")
	require.Equal(t, exitCulprit, code, errOut)
	require.Contains(t, out, "culprit "+record.ShortHash(hashes[2]))
	require.Contains(t, errOut, "a confirmed regression was found (--fail-on-culprit)")
	_, errOut, code = perfbot(t, dir, "bisect", "--good", "HEAD~1", "--bad", "HEAD", "--direction", "improvement", "--fail-on-culprit")
	require.Equal(t, exitOK, code, "no regression looked for, no failure: %s", errOut)

	out, errOut, code = perfbot(t, dir, "findings", "--json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &fs), out)
	require.Equal(t, "filed", fs[len(fs)-1].State, "found again, the finding keeps its issue: %s", out)
	require.Equal(t, 1, fs[len(fs)-1].Issue)

	// A GitHub repository without its token files nothing: the user's
	// mistake, said before anything is sent.
	cfg, err := os.ReadFile(filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	cfg = append(cfg, "github: {repo: example/infer, token_env: PERFBOT_TEST_UNSET_TOKEN}\n"...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), cfg, 0o644))
	_, errOut, code = perfbot(t, dir, "report", id, "--file-issue")
	require.Equal(t, exitInput, code, errOut)
	require.Contains(t, errOut, "$PERFBOT_TEST_UNSET_TOKEN is empty")
}
