package runner_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
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
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// serverEnv makes the test binary a benchmark's server:
// "ADDR MODE PIDFILE". It writes its pid to PIDFILE, prints NCCL's startup
// lines, and serves /health on ADDR with 200 (MODE ok), 503 (never), or
// exits before it listens (die); MODE noterm ignores SIGTERM.
const serverEnv = "RUNNER_TEST_SERVER"

func TestServerHelper(t *testing.T) {
	args := strings.Fields(os.Getenv(serverEnv))
	if len(args) == 0 {
		t.Skip("started as a benchmark's server by TestBenchServer")
	}
	addr, mode, pidfile := args[0], args[1], args[2]
	require.NoError(t, os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())), 0o600))
	fmt.Println("NCCL INFO NCCL_ALGO set by environment to Ring")
	fmt.Println("host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4")
	fmt.Println("host:1:1 [0] NCCL INFO Using network Socket")
	fmt.Println("torch: 2.11.0+cu130")
	if mode == "die" {
		fmt.Println("RuntimeError: CUDA out of memory")
		os.Exit(1)
	}
	if mode == "noterm" {
		signal.Ignore(syscall.SIGTERM)
	}
	status := http.StatusOK
	if mode == "never" {
		status = http.StatusServiceUnavailable
	}
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	fmt.Println("server listening on", addr)
	_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// serverSpec is a spec whose one benchmark runs script against the helper
// server in mode.
func serverSpec(t *testing.T, addr, mode, pidfile, script string, timeout time.Duration) record.Spec {
	bin, err := os.Executable()
	require.NoError(t, err)
	return record.Spec{
		Build: []record.Step{{Name: "build", Run: "true", Timeout: time.Minute}},
		Benchmarks: []record.BenchStep{{
			Step:   record.Step{Name: "load", Run: script, Timeout: timeout},
			Format: "gobench",
			Server: &record.Server{
				Run:          proc.ShellQuote(bin) + " -test.run=^TestServerHelper$",
				Env:          map[string]string{serverEnv: addr + " " + mode + " " + pidfile, "NCCL_DEBUG": "INFO"},
				ReadyURL:     "http://" + addr + "/health",
				StartTimeout: 20 * time.Second,
			},
		}},
		Metrics: []record.Metric{{Name: "tok_s", Benchmark: "load", Select: "BenchmarkLoad", Unit: "tok/s", Better: record.Higher, Primary: true}},
	}
}

// serverGone checks that the server's process is gone and its port free.
func serverGone(t *testing.T, pidfile, addr string) {
	t.Helper()
	data, err := os.ReadFile(pidfile)
	require.NoError(t, err, "the server started")
	pid, err := strconv.Atoi(string(data))
	require.NoError(t, err)
	assert.False(t, proc.Alive(pid), "the server's process is gone")
	l, err := net.Listen("tcp", addr)
	if assert.NoError(t, err, "the server's port is free") {
		l.Close()
	}
}

func TestBenchServer(t *testing.T) {
	ok := `echo "BenchmarkLoad 1 42 tok/s"`
	tests := []struct {
		name    string
		mode    string
		script  string
		timeout time.Duration
		start   time.Duration
		status  record.Status
		err     []string
	}{
		{name: "a benchmark against a ready server", mode: "ok", script: ok, status: record.StatusOK},
		{name: "a benchmark that fails", mode: "ok", script: "echo broken; exit 3", status: record.StatusBenchFailed, err: []string{"exited with status 3: broken"}},
		{name: "a benchmark that times out", mode: "ok", script: "sleep 30", timeout: 200 * time.Millisecond, status: record.StatusBenchFailed, err: []string{"timed out"}},
		{name: "a server that ignores SIGTERM", mode: "noterm", script: ok, status: record.StatusOK},
		{name: "a server that dies while starting", mode: "die", script: ok, status: record.StatusBenchFailed,
			err: []string{`server of benchmark "load" exited before`, "its log ends:", "RuntimeError: CUDA out of memory"}},
		{name: "a server that never gets ready", mode: "never", script: ok, start: 300 * time.Millisecond, status: record.StatusBenchFailed,
			err: []string{"was not ready after 300ms", "HTTP 503 Service Unavailable", "server listening on"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			src, commits := gitopstest.NewRepo(t, 1)
			workdir := t.TempDir()
			repo, err := gitops.Open(ctx, src, workdir)
			require.NoError(t, err)
			pool, err := runner.NewPool(&runner.Local{Repo: repo, Workdir: workdir, Trees: 1})
			require.NoError(t, err)
			addr, pidfile := freeAddr(t), filepath.Join(t.TempDir(), "pid")
			timeout := tt.timeout
			if timeout == 0 {
				timeout = time.Minute
			}
			spec := serverSpec(t, addr, tt.mode, pidfile, tt.script, timeout)
			if tt.start > 0 {
				spec.Benchmarks[0].Server.StartTimeout = tt.start
			}
			r := &runner.Runner{Spec: spec, TimeoutRetries: -1, ServerGrace: 200 * time.Millisecond}
			runs, err := runnertest.Measure(t, ctx, pool, r, runner.Source{Target: record.Target{Commit: commits[0], Env: map[string]string{"NCCL_PROTO": "LL"}}}, 1)
			require.NoError(t, err)
			require.Len(t, runs, 1)
			run := runs[0]
			assert.Equal(t, tt.status, run.Status, run.Error)
			for _, e := range tt.err {
				assert.Contains(t, run.Error, e)
			}
			serverGone(t, pidfile, addr)

			var server *record.Log
			for i := range run.Logs {
				if run.Logs[i].Step == "load (server)" {
					server = &run.Logs[i]
				}
			}
			require.NotNil(t, server, "the server's log is kept: %v", logSteps(run))
			assert.Contains(t, server.Output, "NCCL version 2.21.5")
			assert.Equal(t, "2.21.5+cuda12.4", run.Fingerprint.Env["server.nccl_version"])
			assert.Equal(t, "Socket", run.Fingerprint.Env["server.nccl_net"])
			assert.Equal(t, "Ring", run.Fingerprint.Env["NCCL_ALGO"])
			assert.Equal(t, "2.11.0+cu130", run.Fingerprint.Reported["torch"], "the software the server's log reports")
			assert.Equal(t, "INFO", run.Fingerprint.Env["NCCL_DEBUG"], "the server's own environment")
			assert.Equal(t, "LL", run.Fingerprint.Env["NCCL_PROTO"], "the target's override reaches the server")
			if tt.status == record.StatusOK {
				assert.Equal(t, 42.0, run.Values["tok_s"])
			}
		})
	}
}

// perfbot told to stop (SIGTERM cancels its context) while the benchmark
// runs: nothing is recorded, and the server is gone.
func TestBenchServerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, commits := gitopstest.NewRepo(t, 1)
	workdir := t.TempDir()
	repo, err := gitops.Open(ctx, src, workdir)
	require.NoError(t, err)
	pool, err := runner.NewPool(&runner.Local{Repo: repo, Workdir: workdir, Trees: 1})
	require.NoError(t, err)
	addr, pidfile := freeAddr(t), filepath.Join(t.TempDir(), "pid")
	started := filepath.Join(t.TempDir(), "started")
	spec := serverSpec(t, addr, "noterm", pidfile, "touch "+proc.ShellQuote(started)+"; sleep 30", time.Minute)
	go func() {
		for {
			if _, err := os.Stat(started); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	runs, err := runnertest.Measure(t, ctx, pool, &runner.Runner{Spec: spec, ServerGrace: 100 * time.Millisecond}, runner.Source{Target: record.Target{Commit: commits[0]}}, 1)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, runs)
	serverGone(t, pidfile, addr)
}

// A host that cannot run servers says so.
func TestBenchServerOnAHostWithoutServers(t *testing.T) {
	host := &runnertest.Fake{Commits: map[string]runnertest.FakeCommit{"c1": {Outputs: []string{goBench(1, 1)}}}}
	spec := record.Spec{
		Benchmarks: []record.BenchStep{{Step: record.Step{Name: "engine", Run: "x"}, Format: "gobench",
			Server: &record.Server{Run: "serve", ReadyURL: "http://127.0.0.1:1/"}}},
		Metrics: []record.Metric{{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher}},
	}
	pool, err := runner.NewPool(host)
	require.NoError(t, err)
	_, err = runnertest.Measure(t, context.Background(), pool, &runner.Runner{Spec: spec}, runner.Source{Target: record.Target{Commit: "c1"}}, 1)
	var infra *record.InfraError
	require.ErrorAs(t, err, &infra)
	assert.Contains(t, err.Error(), "cannot run benchmark servers")
}
