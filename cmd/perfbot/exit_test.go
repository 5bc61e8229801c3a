package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/store"
)

func TestExitCode(t *testing.T) {
	infra := &record.InfraError{Host: "gpu1", Op: "start shell", Err: errors.New("connection reset")}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"usage", usagef("unknown flag --bogus"), exitInput},
		{"input", &record.InputError{Err: errors.New(`resolve "nope": unknown revision`)}, exitInput},
		{"configuration", fmt.Errorf("load: %w", &config.Error{File: "perfbot.yaml", Line: 3, Key: "hosts[0].kind", Msg: "unknown"}), exitInput},
		{"ambiguous finding prefix", fmt.Errorf("finding 3f: %w", store.ErrAmbiguous), exitInput},
		{"store from a newer perfbot", fmt.Errorf("open store: %w", store.ErrNewerSchema), exitInput},
		{"unknown revision", fmt.Errorf("resolve: %w", gitops.ErrUnknownRevision), exitInput},
		{"an end that does not build", fmt.Errorf("bisect: end 3f2a: %w", record.ErrBroken), exitInput},
		{"infrastructure", infra, exitInfra},
		{"infrastructure deep down", fmt.Errorf("bisect: %w", fmt.Errorf("measure 3f2a: %w", infra)), exitInfra},
		{"infrastructure among others", errors.Join(errors.New("record run: disk full"), infra), exitInfra},
		{"store held by another process", fmt.Errorf("open: %w", store.ErrLocked), exitInfra},
		{"every host left the pool", fmt.Errorf("bisect: measure 3f2a: %w", noHostLeft(t)), exitInfra},
		{"a deadline", fmt.Errorf("github: %w", context.DeadlineExceeded), exitInfra},
		{"interrupted", fmt.Errorf("bisect: measure 3f2a: %w", context.Canceled), exitInterrupted},
		{"interrupted while a host worked", &record.InfraError{Host: "local", Op: "check out 3f2a", Err: context.Canceled}, exitInterrupted},
		{"--fail-on-culprit found one", fmt.Errorf("culprit 3f2a: %w", errCulprit), exitCulprit},
		{"anything else is a bug", errors.New("assignment to entry in nil map"), exitBug},
		{"a wrapped surprise is a bug too", fmt.Errorf("record run of 3f2a: %w", errors.New("encode: unsupported value NaN")), exitBug},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, exitCode(tt.err))
		})
	}
}

// noHostLeft is the error of a pool whose one host left it.
func noHostLeft(t *testing.T) error {
	t.Helper()
	pool, err := runner.NewPool(&runnertest.Fake{HostName: "gpu1"})
	require.NoError(t, err)
	pool.SetPolicy(runner.Policy{MaxFailures: 1})
	target := record.Target{Commit: "3f2a"}
	lease, err := pool.Acquire(context.Background(), target)
	require.NoError(t, err)
	lease.Report(&record.InfraError{Host: "gpu1", Op: "connect", Err: runner.HostDown(errors.New("connection refused"))})
	lease.Release()
	_, err = pool.Acquire(context.Background(), target)
	require.ErrorIs(t, err, runner.ErrOutOfPool)
	return err
}

func TestReportError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
		code int
	}{
		{"a bug says so", errors.New("index out of range"), "perfbot: internal error (a bug; please report it): index out of range\n", exitBug},
		{"infrastructure is not a bug", &record.InfraError{Host: "gpu1", Op: "start shell", Err: errors.New("no such file")}, "perfbot: host gpu1: start shell: no such file\n", exitInfra},
		{"input is not a bug", &record.InputError{Err: errors.New("bad --since")}, "perfbot: bad --since\n", exitInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			assert.Equal(t, tt.code, reportError(&stderr, tt.err))
			assert.Equal(t, tt.want, stderr.String())
		})
	}
}

// TestUsageMistakes: what a newcomer mistypes is a usage error (exit 1)
// that says what to do, never help printed with exit 0, never the
// embedded testbed configuration standing in for a missing one.
func TestUsageMistakes(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"an unknown command", []string{"mesure", "HEAD"}, `unknown command "mesure" for "perfbot"; its commands: bisect,`},
		{"an unknown subcommand", []string{"testbed", "foo"}, `unknown command "foo" for "perfbot testbed"; its commands: init, verify`},
		{"a group without its command", []string{"testbed"}, "perfbot testbed needs a command: init, verify"},
		{"no configuration", []string{"measure", "HEAD"}, "has no perfbot.yaml and --config names none"},
		{"no configuration for history", []string{"history"}, "run `perfbot demo` to try perfbot"},
		{"extra arguments", []string{"testbed", "init", "a", "b"}, "accepts 1 arg(s), received 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := perfbot(t, empty, tt.args...)
			assert.Equal(t, exitInput, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.stderr)
		})
	}
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, entries, "a mistake creates nothing: no store, no clone")
}

func TestVersionFlag(t *testing.T) {
	out, errOut, code := perfbot(t, t.TempDir(), "--version")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `^perfbot \S+`, out)
}

// TestHistoryBeforeAnyMeasurement: history on a workspace where nothing was
// measured says so and creates no store.
func TestHistoryBeforeAnyMeasurement(t *testing.T) {
	dir, _ := toyProject(t, []toyCommit{{tokS: 1}})
	out, errOut, code := perfbot(t, dir, "history")
	require.Equal(t, exitOK, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "no samples yet")
	out, _, code = perfbot(t, dir, "history", "--json")
	require.Equal(t, exitOK, code)
	assert.JSONEq(t, "[]", out)
	_, err := os.Stat(filepath.Join(dir, ".perfbot", "perfbot.db"))
	assert.ErrorIs(t, err, os.ErrNotExist, "history creates no store")
}

// TestMetricUnitTypo: a metric whose unit is mistyped selects nothing at
// any revision; that is the configuration's fault (exit 1), said with the
// units the output has, not every revision reported bench_failed.
func TestMetricUnitTypo(t *testing.T) {
	dir, _ := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 90}})
	path := filepath.Join(dir, "perfbot.yaml")
	cfg, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, bytes.Replace(cfg, []byte("unit: tok/s"), []byte("unit: tokens/s"), 1), 0o644))

	out, errOut, code := perfbot(t, dir, "measure", "HEAD~1", "HEAD", "--repeats", "1")
	require.Equal(t, exitInput, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, `unit "tokens/s") matches nothing in the output of benchmark`)
	assert.Contains(t, errOut, "tok/s")
	assert.Contains(t, errOut, "at every revision measured")
}

// TestExitCodeOfEnvironmentFailures: what the environment does wrong is
// never reported as a bug. Each failure is produced the way perfbot meets
// it where that can be done in a test; EMFILE is the error os/exec returns.
func TestExitCodeOfEnvironmentFailures(t *testing.T) {
	tests := []struct {
		name string
		err  func(t *testing.T) error
		want int
	}{
		{"missing repo.url", func(t *testing.T) error {
			cfg := &config.Config{Store: filepath.Join(t.TempDir(), "perfbot.db"), Workdir: t.TempDir()}
			_, err := service.Open(context.Background(), cfg, service.Options{Progress: io.Discard})
			return err
		}, exitInput},
		{"repo.url names no directory", func(t *testing.T) error {
			cfg := &config.Config{Repo: config.Repo{URL: filepath.Join(t.TempDir(), "nope")}, Store: filepath.Join(t.TempDir(), "perfbot.db"), Workdir: t.TempDir()}
			_, err := service.Open(context.Background(), cfg, service.Options{Progress: io.Discard})
			return err
		}, exitInput},
		{"disk full", func(t *testing.T) error {
			if _, err := os.Stat("/dev/full"); err != nil {
				t.Skip("no /dev/full here")
			}
			err := os.WriteFile("/dev/full", []byte("a run"), 0o644)
			require.ErrorIs(t, err, syscall.ENOSPC)
			return fmt.Errorf("record run of 3f2a: %w", err)
		}, exitInfra},
		{"damaged store", func(t *testing.T) error {
			path := filepath.Join(t.TempDir(), "perfbot.db")
			require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("garbage!"), 4096), 0o600))
			_, err := store.Open(path)
			require.ErrorIs(t, err, store.ErrDamaged)
			return err
		}, exitInfra},
		{"github unreachable", func(t *testing.T) error {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			addr := ln.Addr().String()
			require.NoError(t, ln.Close())
			gh, err := report.NewGitHub(report.GitHubOptions{Repo: "o/r", Token: "t", APIURL: "http://" + addr + "/", Retries: -1})
			require.NoError(t, err)
			_, err = gh.Create(context.Background(), "title", "body", nil)
			require.Error(t, err)
			return err
		}, exitInfra},
		{"refused redirect", func(t *testing.T) error {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://127.0.0.2:1"+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			defer ts.Close()
			gh, err := report.NewGitHub(report.GitHubOptions{Repo: "o/r", Token: "t", APIURL: ts.URL + "/", Retries: -1})
			require.NoError(t, err)
			_, err = gh.Create(context.Background(), "title", "body", nil)
			require.ErrorContains(t, err, "redirect")
			return err
		}, exitInput},
		{"too many open files", func(t *testing.T) error {
			err := &os.PathError{Op: "fork/exec", Path: "/usr/bin/git", Err: syscall.EMFILE}
			return fmt.Errorf("bisect: measure 3f2a: check out 3f2a: %w", err)
		}, exitInfra},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err(t)
			require.Error(t, err)
			var stderr bytes.Buffer
			assert.Equal(t, tt.want, reportError(&stderr, err), stderr.String())
			assert.NotContains(t, stderr.String(), "a bug")
		})
	}
}
