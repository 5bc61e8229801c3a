package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/testbed"
)

// serverProject generates the testbed repository and writes a config
// whose benchmarks start the engine's server (cmd/serve) with speculation
// on and off, each driven by perfbot loadgen (this test binary) through
// the runner's server lifecycle. load replaces the load's flags; each
// server writes its pid to a file of pids.
func serverProject(t *testing.T, load string) (dir string, addrs []string, pids string) {
	t.Helper()
	dir = t.TempDir()
	repo := filepath.Join(dir, "infer")
	_, err := testbed.Generate(context.Background(), repo, 1)
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	pids = filepath.Join(dir, "pids")
	addrs = []string{freeAddr(t), freeAddr(t)}
	step := func(name, addr, spec, ratio string) string {
		return `  - name: ` + name + `
    run: ` + exe + ` loadgen http://` + addr + ` ` + load + ratio + `
    env: {PERFBOT_TEST_MAIN: "1"}
    format: openai
    timeout: 2m
    server:
      run: echo $$ >> ` + pids + `; exec ./serve -addr ` + addr + ` -spec=` + spec + `
      env: {NCCL_DEBUG: INFO}
      ready_url: http://` + addr + `/health
      start_timeout: 1m
`
	}
	metric := func(bench, name, sel, unit, better string) string {
		return "  - {name: " + name + ", benchmark: " + bench + ", select: " + sel + ", unit: " + unit + ", better: " + better + "}\n"
	}
	cfg := "repo:\n  url: " + repo + "\nbuild:\n  - name: build\n    run: go build -o serve ./cmd/serve\n    timeout: 5m\nbenchmarks:\n" +
		step("spec", addrs[0], "true", " --server-ratio verify_ms=testbed:verify_cpu_seconds/testbed:verify_steps*1000") +
		step("plain", addrs[1], "false", " --server-ratio decode_ms=testbed:decode_cpu_seconds/testbed:decode_steps*1000") + "metrics:\n" +
		"  - {name: spec_tok_s, benchmark: spec, select: output_throughput, unit: tok/s, primary: true}\n" +
		metric("spec", "spec_req_s", "request_throughput", "req/s", "higher") +
		metric("spec", "spec_ttft_ms", "median_ttft_ms", "ms", "lower") +
		metric("spec", "spec_tpot_ms", "p90_tpot_ms", "ms", "lower") +
		metric("spec", "spec_itl_ms", "p99_itl_ms", "ms", "lower") +
		metric("spec", "spec_e2e_ms", "mean_e2el_ms", "ms", "lower") +
		metric("spec", "spec_goodput", "request_goodput", "req/s", "higher") +
		metric("spec", "spec_accept_length", "spec_decode_acceptance_length", "value", "higher") +
		metric("spec", "verify_ms", "verify_ms", "ms", "lower") +
		metric("plain", "decode_ms", "decode_ms", "ms", "lower") +
		metric("plain", "plain_tok_s", "output_throughput", "tok/s", "higher") +
		metric("plain", "plain_tpot_ms", "mean_tpot_ms", "ms", "lower") +
		metric("plain", "plain_itl_ms", "median_itl_ms", "ms", "lower")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), []byte(cfg), 0o644))
	return dir, addrs, pids
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// serversGone checks that every server that started is gone and its port
// free.
func serversGone(t *testing.T, pids string, addrs []string, started int) {
	t.Helper()
	data, err := os.ReadFile(pids)
	require.NoError(t, err)
	list := strings.Fields(string(data))
	assert.Len(t, list, started, "servers started")
	for _, pid := range list {
		assert.False(t, alive(pid), "server %s is gone", pid)
	}
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if assert.NoError(t, err, "port %s is free", addr) {
			l.Close()
		}
	}
}

type measureOut []struct {
	Status  string `json:"status"`
	Error   string `json:"error"`
	Metrics []struct {
		Metric string  `json:"metric"`
		Median float64 `json:"median"`
	} `json:"metrics"`
}

// The testbed engine's server with speculation on and off, started and
// stopped by the runner, driven by perfbot loadgen: every metric of the
// load is read, the acceptance length comes from the server's counters,
// and the servers are gone afterwards.
func TestServerBenchmarkEndToEnd(t *testing.T) {
	dir, addrs, pids := serverProject(t, "--requests 6 --warmup 1 --concurrency 2 --prompt-tokens 16 --output-tokens 16 --ttft-limit 1m --itl-limit 1m")
	out, errOut, code := perfbot(t, dir, "measure", "HEAD", "--repeats", "1", "--json")
	require.Equal(t, 0, code, errOut)
	var m measureOut
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	require.Len(t, m, 1)
	require.Equal(t, "ok", m[0].Status, m[0].Error)
	got := map[string]float64{}
	for _, v := range m[0].Metrics {
		got[v.Metric] = v.Median
	}
	for _, name := range []string{"spec_tok_s", "spec_req_s", "spec_ttft_ms", "spec_tpot_ms", "spec_itl_ms", "spec_e2e_ms", "plain_tok_s", "plain_tpot_ms", "plain_itl_ms", "verify_ms", "decode_ms"} {
		assert.Positive(t, got[name], name)
	}
	assert.InDelta(t, 6/got["spec_req_s"], 6/got["spec_goodput"], 1e-9, "every request within limits of a minute")
	// Three draft tokens a step: an acceptance length between 1 and 4.
	assert.Greater(t, got["spec_accept_length"], 1.0)
	assert.LessOrEqual(t, got["spec_accept_length"], 4.0)
	serversGone(t, pids, addrs, 2)

	h := history(t, dir)
	require.NotEmpty(t, h)
	env := h[0].Fingerprint.Env
	assert.Equal(t, "INFO", env["NCCL_DEBUG"], "the server's environment is in the fingerprint")
}

// A load whose requests the server refuses (longer than its context) fails
// the benchmark, quoting the server's answer; the servers are gone all the
// same.
func TestServerBenchmarkFailed(t *testing.T) {
	dir, addrs, pids := serverProject(t, "--requests 2 --prompt-tokens 8 --output-tokens 5000")
	out, errOut, code := perfbot(t, dir, "measure", "HEAD", "--repeats", "1", "--json")
	require.Equal(t, 0, code, errOut)
	var m measureOut
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	require.Len(t, m, 1)
	assert.Equal(t, "bench_failed", m[0].Status)
	assert.Contains(t, m[0].Error, "2 of 2 requests failed")
	assert.Contains(t, m[0].Error, "HTTP 400")
	serversGone(t, pids, addrs, 1)
}

// perfbot told to stop (SIGTERM) while the load runs: it exits as
// interrupted, and the server is gone.
func TestServerBenchmarkSIGTERM(t *testing.T) {
	dir, addrs, pids := serverProject(t, "--requests 1 --prompt-tokens 8 --output-tokens 4")
	started := filepath.Join(dir, "started")
	cfg, err := os.ReadFile(filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	// The first benchmark's load hangs once its server is ready.
	exe, _ := os.Executable()
	hang := "    run: touch " + started + "; sleep 1000\n"
	cfg = []byte(regexp.MustCompile(`    run: \S+ loadgen http://`+regexp.QuoteMeta(addrs[0])+`.*\n`).ReplaceAllLiteralString(string(cfg), hang))
	require.Contains(t, string(cfg), hang)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), cfg, 0o644))

	cmd := exec.Command(exe, "measure", "HEAD", "--repeats", "1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PERFBOT_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	waitForLong(t, func() bool { _, err := os.Stat(started); return err == nil })
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, stderr.String())
	assert.Equal(t, exitInterrupted, exit.ExitCode(), stderr.String())
	serversGone(t, pids, addrs, 1)
}

// waitForLong is waitFor for a condition behind a build of the engine.
func waitForLong(t *testing.T, cond func() bool) {
	t.Helper()
	for range 10 {
		for i := 0; i < 600; i++ {
			if cond() {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Fatal("condition not reached in two minutes")
}
