package slurm

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/internal/slurmtest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// serverHelperEnv makes the test binary a benchmark's server,
// "serve MODE ADDR DIR", or its load generator, "load URL". The server
// writes what it is to DIR/server (its pid, its Slurm job and step, the
// commands of its ancestors) and serves /health (200; 503 in MODE never;
// MODE die exits first) and /answer, a benchmark line whose value is its
// pid. The load generator prints what /answer says.
const serverHelperEnv = "RUNNER_TEST_SLURM_SERVER"

func TestServerHelper(t *testing.T) {
	args := strings.Fields(os.Getenv(serverHelperEnv))
	if len(args) == 0 {
		t.Skip("started as a benchmark's server or load generator by TestSlurmServerRunsInTheStepsJob")
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	if args[0] == "load" {
		resp, err := client.Get(args[1])
		require.NoError(t, err)
		defer resp.Body.Close()
		_, err = io.Copy(os.Stdout, resp.Body)
		require.NoError(t, err)
		return
	}
	mode, addr, dir := args[1], args[2], args[3]
	me := fmt.Sprintf("pid %d\njob %s\nstep %s\nancestors %s\n", os.Getpid(), os.Getenv("SLURM_JOB_ID"), os.Getenv("SLURM_STEP_ID"), strings.Join(ancestors(), " "))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "server"), []byte(me), 0o644))
	fmt.Println("host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4")
	if mode == "die" {
		fmt.Println("RuntimeError: CUDA out of memory")
		os.Exit(1)
	}
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	fmt.Println("server listening on", addr)
	_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case mode == "never":
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/answer":
			fmt.Fprintf(w, "BenchmarkLoad 1 %d tok/s\n", os.Getpid())
		}
	}))
}

// ancestors are the command names of this process's parent, its parent's,
// and so on up to init, and their pids.
func ancestors() []string {
	var out []string
	for pid := os.Getppid(); pid > 1; {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			break
		}
		s := string(data)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		out = append(out, s[open+1:closing]+":"+strconv.Itoa(pid))
		fields := strings.Fields(s[closing+1:])
		pid, _ = strconv.Atoi(fields[1])
	}
	return out
}

// A Slurm host runs a benchmark's server in the step's job, on the node:
// the server process descends from the job step's slurmstepd, not from
// perfbot; it is in the job the load generator runs in, and answers it;
// it is gone when the job is, its log and facts in the run. A server
// that dies or never gets ready fails the run as on a local host.
func TestSlurmServerRunsInTheStepsJob(t *testing.T) {
	bin, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		mode   string
		status record.Status
		err    []string
		// start is the server's start timeout: long where the server
		// exits on its own, so that a loaded machine does not turn its
		// death into a timeout, and long enough for a server that never
		// gets ready to be started under Slurm and answered at least once
		// (the error quotes that answer).
		start time.Duration
	}{
		{name: "a ready server", mode: "ok", status: record.StatusOK, start: time.Minute},
		{name: "a server that dies while starting", mode: "die", status: record.StatusBenchFailed, start: time.Minute,
			err: []string{`server of benchmark "load" exited before`, "its log ends:", "RuntimeError: CUDA out of memory"}},
		{name: "a server that never gets ready", mode: "never", status: record.StatusBenchFailed, start: 5 * time.Second,
			err: []string{"was not ready after 5s", "HTTP 503", "server listening on"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, commits := newSlurm(t, 1, 1)
			pool, err := runner.NewPool(s)
			require.NoError(t, err)
			dir, addr := t.TempDir(), freeAddr(t)
			q := proc.ShellQuote
			spec := record.Spec{
				Benchmarks: []record.BenchStep{{
					Step: record.Step{Name: "load", Timeout: time.Minute,
						Run: `echo "$SLURM_JOB_ID" > ` + q(filepath.Join(dir, "load")) + "\n" +
							serverHelperEnv + "=" + q("load http://"+addr+"/answer") + " " + q(bin) + " -test.run=^TestServerHelper$"},
					Format: "gobench",
					Server: &record.Server{
						Run:          q(bin) + " -test.run=^TestServerHelper$",
						Env:          map[string]string{serverHelperEnv: "serve " + tc.mode + " " + addr + " " + dir},
						ReadyURL:     "http://" + addr + "/health",
						StartTimeout: tc.start,
					},
				}},
				Metrics: []record.Metric{{Name: "tok_s", Benchmark: "load", Select: "BenchmarkLoad", Unit: "tok/s", Better: record.Higher, Primary: true}},
			}
			r := &runner.Runner{Spec: spec, TimeoutRetries: -1, ServerGrace: 200 * time.Millisecond}
			runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: commits[0]}}, 1)
			require.NoError(t, err)
			require.Len(t, runs, 1)
			run := runs[0]
			require.Equal(t, tc.status, run.Status, run.Error)
			for _, e := range tc.err {
				assert.Contains(t, run.Error, e)
			}

			data, err := os.ReadFile(filepath.Join(dir, "server"))
			require.NoError(t, err, "the server started")
			me := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				k, v, _ := strings.Cut(l, " ")
				me[k] = v
			}
			t.Logf("the server: %v", me)
			assert.NotEmpty(t, me["job"], "the server runs in a Slurm job")
			assert.Contains(t, me["ancestors"], "slurmstepd:", "the server belongs to the job's step on the node")
			assert.NotContains(t, " "+me["ancestors"]+" ", ":"+strconv.Itoa(os.Getpid())+" ", "perfbot did not start the server")
			pid, err := strconv.Atoi(me["pid"])
			require.NoError(t, err)
			assert.False(t, proc.Alive(pid), "the server ends with the job")
			if tc.status == record.StatusOK {
				load, err := os.ReadFile(filepath.Join(dir, "load"))
				require.NoError(t, err)
				assert.Equal(t, me["job"], strings.TrimSpace(string(load)), "the load generator runs in the server's job")
				assert.Equal(t, float64(pid), run.Values["tok_s"], "the server answered the load generator")
				assert.Equal(t, slurmtest.Node, run.Node)
				assert.Equal(t, "2.21.5+cuda12.4", run.Fingerprint.Env["server.nccl_version"], "the server's log is read")
			}
			var logged bool
			for _, l := range run.Logs {
				logged = logged || l.Step == "load (server)" && strings.Contains(l.Output, "NCCL version 2.21.5")
			}
			assert.True(t, logged, "the server's log is kept")
		})
	}
}

// A Slurm host starts no server on perfbot's machine: it is no
// runner.ServerHost, and runs servers in the step's job instead.
func TestSlurmHostRunsServersInItsJobs(t *testing.T) {
	var h runner.Host = &Host{Local: &runner.Local{}}
	_, local := h.(runner.ServerHost)
	assert.False(t, local, "a Slurm host must not start a server where perfbot runs")
	_, inJob := h.(runner.ServerJobHost)
	assert.True(t, inJob)
}

// freeAddr is a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}
