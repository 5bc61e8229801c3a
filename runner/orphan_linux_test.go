package runner_test

import (
	"context"
	"os"
	"os/exec"
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

// helperEnv makes the test binary act as a perfbot process that measures
// with a benchmark that hangs, for TestKilledPerfbotLeavesNothingRunning.
const helperEnv = "RUNNER_TEST_KILLED_HELPER"

func TestKilledPerfbotHelper(t *testing.T) {
	l, ws, script, _ := killedHelperTree(t, helperEnv, "TestKilledPerfbotLeavesNothingRunning")
	_, _ = l.Exec(context.Background(), 0, runner.Command{Dir: ws.Dir, Script: script, EnvFile: filepath.Join(ws.Scratch, "env"), Scratch: ws.Scratch})
}

// killedHelperTree is the start of a helper process that perfbot's test
// kills: it reads the source, workdir, commit and pid file from the
// environment variable env (skipping the test when it is unset, naming
// the test that runs it), holds tree 0 of slot 0 checked out at the commit,
// and returns the script of a benchmark that writes its sleeper's and its
// shell's pids to the pid file and then hangs, and the pid file.
func killedHelperTree(t *testing.T, env, runBy string) (*runner.Local, runner.Workspace, string, string) {
	args := os.Getenv(env)
	if args == "" {
		t.Skip("run by " + runBy)
	}
	parts := strings.Split(args, "|")
	require.Len(t, parts, 4)
	src, workdir, commit, pids := parts[0], parts[1], parts[2], parts[3]
	ctx := context.Background()
	repo, err := gitops.Open(ctx, src, workdir)
	require.NoError(t, err)
	l := &runner.Local{Repo: repo, Workdir: workdir, Trees: 1}
	_, err = l.Lock(ctx, 0, 0)
	require.NoError(t, err)
	ws, err := l.Materialize(ctx, 0, 0, runner.Source{Target: record.Target{Commit: commit}})
	require.NoError(t, err)
	return l, ws, "sleep 1000 & echo $! > " + proc.ShellQuote(pids) + "\necho $$ >> " + proc.ShellQuote(pids) + "\nwait", pids
}

// perfbot killed by SIGKILL while a benchmark runs: its shell dies with it
// (a parent-death signal), and the benchmark's process group and scratch
// files are gone once the next process takes the tree.
func TestKilledPerfbotLeavesNothingRunning(t *testing.T) {
	src, commits := gitopstest.NewRepo(t, 1)
	workdir := t.TempDir()
	pids := filepath.Join(t.TempDir(), "pids")
	helper := exec.Command(os.Args[0], "-test.run=^TestKilledPerfbotHelper$")
	helper.Env = append(os.Environ(), helperEnv+"="+strings.Join([]string{src, workdir, commits[0], pids}, "|"))
	require.NoError(t, helper.Start())
	var running []int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(pids)
		if err != nil || strings.Count(string(data), "\n") < 2 {
			return false
		}
		running = runnertest.ReadPids(t, pids)
		return true
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, helper.Process.Signal(syscall.SIGKILL))
	_ = helper.Wait()
	sleeper, shell := running[0], running[1]
	assert.Eventually(t, func() bool { return !proc.Alive(shell) }, 5*time.Second, 10*time.Millisecond, "the shell dies with perfbot")

	repo, err := gitops.Open(context.Background(), src, workdir)
	require.NoError(t, err)
	next := &runner.Local{Repo: repo, Workdir: workdir, Trees: 1}
	release, err := next.Lock(context.Background(), 0, 0)
	require.NoError(t, err)
	defer release()
	assert.False(t, proc.Alive(sleeper), "the next process on the tree reaps the benchmark's group")
	left, err := os.ReadDir(filepath.Join(workdir, "scratch", "0"))
	if err == nil {
		assert.Empty(t, left, "scratch files of the killed process are removed")
	}
	_ = syscall.Kill(sleeper, syscall.SIGKILL)
}

// serverHelperEnv makes the test binary a perfbot process that starts a
// benchmark's server and then hangs, for TestKilledPerfbotLeavesNoServer.
const serverHelperEnv = "RUNNER_TEST_KILLED_SERVER_HELPER"

func TestKilledPerfbotServerHelper(t *testing.T) {
	l, ws, script, pids := killedHelperTree(t, serverHelperEnv, "TestKilledPerfbotLeavesNoServer")
	_, err := l.StartServer(context.Background(), 0, runner.Command{Dir: ws.Dir, Script: script, Scratch: ws.Scratch}, 0)
	require.NoError(t, err)
	// StartServer has recorded the server's group: perfbot killed from
	// now on leaves what the next process needs to reap it.
	require.NoError(t, os.WriteFile(pids+".started", nil, 0o644))
	select {} // killed here
}

// perfbot killed by SIGKILL while a benchmark's server runs: the server's
// shell dies with it, and what is left of its group is reaped by the next
// process that takes the tree.
func TestKilledPerfbotLeavesNoServer(t *testing.T) {
	src, commits := gitopstest.NewRepo(t, 1)
	workdir := t.TempDir()
	pids := filepath.Join(t.TempDir(), "pids")
	helper := exec.Command(os.Args[0], "-test.run=^TestKilledPerfbotServerHelper$")
	helper.Env = append(os.Environ(), serverHelperEnv+"="+strings.Join([]string{src, workdir, commits[0], pids}, "|"))
	require.NoError(t, helper.Start())
	var running []int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(pids)
		if err != nil || strings.Count(string(data), "\n") < 2 {
			return false
		}
		if _, err := os.Stat(pids + ".started"); err != nil {
			return false
		}
		running = runnertest.ReadPids(t, pids)
		return true
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, helper.Process.Signal(syscall.SIGKILL))
	_ = helper.Wait()
	child, shell := running[0], running[1]
	assert.Eventually(t, func() bool { return !proc.Alive(shell) }, 5*time.Second, 10*time.Millisecond, "the server's shell dies with perfbot")

	repo, err := gitops.Open(context.Background(), src, workdir)
	require.NoError(t, err)
	next := &runner.Local{Repo: repo, Workdir: workdir, Trees: 1}
	release, err := next.Lock(context.Background(), 0, 0)
	require.NoError(t, err)
	defer release()
	assert.False(t, proc.Alive(child), "the next process on the tree reaps the server's group")
	_ = syscall.Kill(child, syscall.SIGKILL)
}

// stepHelperEnv makes the test binary a perfbot process that runs one
// step on a Local host, a benchmark's or a server's, whose script hangs,
// for TestKilledPerfbotKillsEveryProcessOfTheStep. The step's directory
// is the parent test's (stepDirEnv): the helper dies by SIGKILL, before
// its own temporary directories could be removed.
const (
	stepHelperEnv = "RUNNER_TEST_STEP_HELPER"
	stepDirEnv    = "RUNNER_TEST_STEP_DIR"
)

func TestKilledPerfbotStepHelper(t *testing.T) {
	kind, script, ok := strings.Cut(os.Getenv(stepHelperEnv), "|")
	if !ok {
		t.Skip("run by TestKilledPerfbotKillsEveryProcessOfTheStep")
	}
	l := &runner.Local{}
	cmd := runner.Command{Dir: os.Getenv(stepDirEnv), Script: script}
	if kind == "server" {
		_, err := l.StartServer(context.Background(), 0, cmd, 0)
		require.NoError(t, err)
		select {} // killed here
	}
	_, _ = l.Exec(context.Background(), 0, cmd)
}

// perfbot killed by SIGKILL while a step runs: every process the step
// started dies at once, without waiting for the next perfbot to take the
// tree. That includes the benchmark's grandchild (the sleep of
// `sleep 987; python3 bench.py`) and a process that left the step's
// process group (setsid): the supervisor the shell runs under kills them.
func TestKilledPerfbotKillsEveryProcessOfTheStep(t *testing.T) {
	for _, kind := range []string{"benchmark", "server"} {
		t.Run(kind, func(t *testing.T) {
			sleeper := runnertest.Sleeper()
			script := "setsid " + sleeper + " &\n" + sleeper + "; python3 bench.py"
			helper := exec.Command(os.Args[0], "-test.run=^TestKilledPerfbotStepHelper$")
			helper.Env = append(os.Environ(), stepHelperEnv+"="+kind+"|"+script, stepDirEnv+"="+t.TempDir())
			require.NoError(t, helper.Start())
			defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
			require.Eventually(t, func() bool { return len(runnertest.Running(t, sleeper)) == 2 }, 30*time.Second, 10*time.Millisecond,
				"the step's sleep and the sleep that left its group run")

			require.NoError(t, helper.Process.Signal(syscall.SIGKILL))
			_ = helper.Wait()
			assert.Eventually(t, func() bool { return len(runnertest.Running(t, sleeper)) == 0 }, 5*time.Second, 10*time.Millisecond,
				"no %q survives perfbot", sleeper)
			for _, pid := range runnertest.Running(t, sleeper) {
				n, _ := strconv.Atoi(pid)
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		})
	}
}
