package ssh

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/internal/sshdtest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// sshHost is an SSH host on srv whose workdir is a directory of its own,
// apart from the local clone's: what lies there was put there over SSH.
func sshHost(t *testing.T, srv *sshdtest.Server, repo *gitops.Repo) *Host {
	t.Helper()
	h := &Host{
		HostName:        "gpu1",
		Address:         srv.Addr,
		User:            srv.User,
		KeyFile:         srv.KeyFile,
		KnownHosts:      srv.KnownHosts,
		Workdir:         filepath.Join(t.TempDir(), "remote"),
		Repo:            repo,
		Trees:           2,
		ConnectAttempts: 2,
		ConnectBackoff:  time.Millisecond,
		KillGrace:       200 * time.Millisecond,
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestSSHExec(t *testing.T) {
	srv := sshdtest.Start(t)
	h := sshHost(t, srv, nil)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "marker"), []byte("here\n"), 0o644))
	for _, tc := range []struct {
		name       string
		script     string
		env        map[string]string
		wantOutput string
		wantExit   int
	}{
		{name: "success", script: "echo hello", wantOutput: "hello\n"},
		{name: "stdout and stderr interleaved", script: "echo out; echo err >&2; echo out2", wantOutput: "out\nerr\nout2\n"},
		{name: "exit status", script: "echo failing; exit 3", wantOutput: "failing\n", wantExit: 3},
		{name: "killed by a signal", script: "kill -TERM $$", wantExit: 128 + int(syscall.SIGTERM)},
		{name: "environment", script: `echo "$NCCL_PROTO $HOME"`, env: map[string]string{"NCCL_PROTO": "LL 'quoted' $x", "HOME": "/nowhere"}, wantOutput: "LL 'quoted' $x /nowhere\n"},
		{name: "working directory", script: "cat marker", wantOutput: "here\n"},
		{name: "no stdin", script: "cat; echo eof", wantOutput: "eof\n"},
		{name: "own process group", script: `[ "$(ps -o pgid= $$ | tr -d ' ')" = "$(ps -o sid= $$ | tr -d ' ')" ] && echo leader`, wantOutput: "leader\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := h.Exec(context.Background(), 0, runner.Command{Dir: dir, Script: tc.script, Env: tc.env, Timeout: time.Minute})
			require.NoError(t, err)
			assert.Equal(t, tc.wantOutput, string(res.Output))
			assert.Equal(t, tc.wantExit, res.ExitCode)
			assert.False(t, res.TimedOut)
		})
	}
}

func TestSSHExecEnvFileAndCap(t *testing.T) {
	srv := sshdtest.Start(t)
	h := sshHost(t, srv, nil)
	h.OutputCap = 1000
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	res, err := h.Exec(context.Background(), 0, runner.Command{Dir: dir, Script: "export NCCL_ALGO=Tree; seq 1 5000",
		Env: map[string]string{"NCCL_PROTO": "LL"}, EnvFile: envFile, Timeout: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, "LL", res.Env["NCCL_PROTO"], "the command's environment")
	assert.Equal(t, "Tree", res.Env["NCCL_ALGO"], "what the script exported itself")
	assert.True(t, res.Truncated)
	assert.LessOrEqual(t, len(res.Output), 1100)
	assert.True(t, strings.HasPrefix(string(res.Output), "1\n2\n"), "the head is kept")
	assert.True(t, strings.HasSuffix(string(res.Output), "4999\n5000\n"), "the tail is kept")

	_, err = h.Exec(context.Background(), 0, runner.Command{Dir: filepath.Join(dir, "missing"), Script: "true"})
	require.Error(t, err)
	assert.True(t, record.IsInfra(err), "a missing directory is the host's failure: %v", err)
	assert.Contains(t, err.Error(), "host gpu1")
}

// A command that times out or is cancelled leaves nothing on the host:
// its background processes, and theirs, are killed with it.
func TestSSHStopLeavesNoProcess(t *testing.T) {
	srv := sshdtest.Start(t)
	h := sshHost(t, srv, nil)
	for _, tc := range []struct {
		name   string
		cancel bool
	}{
		{name: "timeout"},
		{name: "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := runnertest.Sleeper()
			script := fmt.Sprintf("(%s & %s; wait) & %s & echo started; wait", marker, marker, marker)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := runner.Command{Dir: t.TempDir(), Script: script, Scratch: t.TempDir()}
			if tc.cancel {
				go func() {
					require.Eventually(t, func() bool { return len(runnertest.Running(t, marker)) == 3 }, 30*time.Second, 10*time.Millisecond)
					cancel()
				}()
			} else {
				cmd.Timeout = 2 * time.Second
			}
			res, err := h.Exec(ctx, 0, cmd)
			if tc.cancel {
				require.ErrorIs(t, err, context.Canceled)
			} else {
				require.NoError(t, err)
				assert.True(t, res.TimedOut)
			}
			assert.Equal(t, -1, res.ExitCode)
			assert.Equal(t, "started\n", string(res.Output))
			assert.Empty(t, runnertest.Running(t, marker), "no process of the command is left")
			left, err := os.ReadDir(cmd.Scratch)
			require.NoError(t, err)
			assert.Empty(t, left, "the record of the group is removed")
		})
	}
}

func TestSSHMeasure(t *testing.T) {
	srv := sshdtest.Start(t)
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 4)
	localWork := t.TempDir()
	repo, err := gitops.Open(ctx, src, localWork)
	require.NoError(t, err)
	h := sshHost(t, srv, repo)
	pool, err := runner.NewPool(h)
	require.NoError(t, err)
	r := &runner.Runner{Spec: runnertest.CounterSpec}

	for i, c := range []string{commits[1], commits[3], commits[1]} {
		runs, err := runnertest.Measure(t, ctx, pool, r, runner.Source{Target: record.Target{Commit: c}}, 2)
		require.NoError(t, err)
		require.Len(t, runs, 2)
		for _, run := range runs {
			require.Equal(t, record.StatusOK, run.Status, run.Error)
			assert.Equal(t, "gpu1", run.Host)
		}
		want := map[int]float64{0: 2, 1: 4, 2: 2}[i]
		assert.Equal(t, want, runs[0].Values["verify_tok_s"])
	}
	// The trees are on the remote side, in its own clone; the local clone
	// made none.
	assert.NoDirExists(t, filepath.Join(localWork, "slots"))
	data, err := os.ReadFile(filepath.Join(h.Workdir, "trees", "0", "counter.txt"))
	require.NoError(t, err)
	assert.Equal(t, "2\n", string(data))
	refs, err := exec.Command("git", "-C", filepath.Join(h.Workdir, "repo"), "for-each-ref", "--format=%(refname)").Output()
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(refs), "refs/perfbot/have/"), "two bundles sent, the second holding only what the first lacked")
}

// After a run over SSH, no file on the host that another user could read
// holds a secret of the benchmark's environment: the scratch directories
// are the owner's only and the environment dumps are removed once read.
func TestSSHMeasureLeavesNoSecretReadableByOthers(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	srv := sshdtest.Start(t)
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 2)
	repo, err := gitops.Open(ctx, src, t.TempDir())
	require.NoError(t, err)
	h := sshHost(t, srv, repo)
	pool, err := runner.NewPool(h)
	require.NoError(t, err)
	secrets := []string{"hf_" + strings.Repeat("S3cr3tV4lue", 3), "pr0xyPassw0rd"}
	spec := runnertest.CounterSpec
	spec.Build = slices.Clone(spec.Build)
	spec.Benchmarks = slices.Clone(spec.Benchmarks)
	for i := range spec.Build {
		spec.Build[i].Env = map[string]string{"HF_TOKEN": secrets[0]}
	}
	spec.Benchmarks[0].Env = map[string]string{"HF_TOKEN": secrets[0], "GOPROXY": "https://bot:" + secrets[1] + "@goproxy.example/"}
	r := &runner.Runner{Spec: spec}
	runs, err := runnertest.Measure(t, ctx, pool, r, runner.Source{Target: record.Target{Commit: commits[1]}}, 1)
	require.NoError(t, err)
	require.Equal(t, record.StatusOK, runs[0].Status, runs[0].Error)
	assert.Empty(t, runnertest.Exposed(t, h.Workdir, secrets), "files other users can read that hold a secret")
	info, err := os.Stat(filepath.Join(h.Workdir, "scratch", "0"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())
}

// A target's hunks are applied on the host, and a tree changed behind the
// runner's back fails verification.
func TestSSHHunksAndVerify(t *testing.T) {
	srv := sshdtest.Start(t)
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 3)
	repo, err := gitops.Open(ctx, src, t.TempDir())
	require.NoError(t, err)
	p, err := repo.Diff(ctx, commits[0], commits[2])
	require.NoError(t, err)
	var ids []string
	for _, hk := range p.Hunks() {
		ids = append(ids, hk.ID)
	}
	h := sshHost(t, srv, repo)
	target := record.Target{Commit: commits[0], Patch: p.ID, Hunks: ids}
	srcT := runner.Source{Target: target, Patch: p}
	release, err := h.Lock(ctx, 0, 1)
	require.NoError(t, err)
	defer release()
	ws, err := h.Materialize(ctx, 0, 1, srcT)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(h.Workdir, "trees", "1"), ws.Dir)
	res, err := h.Exec(ctx, 0, runner.Command{Dir: ws.Dir, Script: "cat counter.txt; git rev-parse HEAD"})
	require.NoError(t, err)
	assert.Equal(t, "3\n"+commits[0]+"\n", string(res.Output), "the hunk applied on the base commit")
	require.NoError(t, h.Verify(ctx, 0, 1, ws, srcT))

	for _, tc := range []struct {
		name   string
		tamper string
		want   string
	}{
		{name: "a hunk's file rewritten", tamper: "echo 9 > counter.txt", want: "counter.txt does not hold what the hunks wrote"},
		{name: "HEAD moved", tamper: "git -c user.name=x -c user.email=x@x commit -q --allow-empty -m moved", want: "HEAD is"},
		{name: "checked out again", tamper: "", want: "checked out again since"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := h.Materialize(ctx, 0, 1, srcT)
			require.NoError(t, err)
			stale := ws
			if tc.tamper == "" {
				_, err = h.Materialize(ctx, 0, 1, srcT)
				require.NoError(t, err)
			} else {
				res, err := h.Exec(ctx, 0, runner.Command{Dir: ws.Dir, Script: tc.tamper})
				require.NoError(t, err)
				require.Equal(t, 0, res.ExitCode, string(res.Output))
			}
			err = h.Verify(ctx, 0, 1, stale, srcT)
			require.ErrorIs(t, err, runner.ErrTreeChanged)
			assert.True(t, record.IsInfra(err))
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Two perfbot processes sharing the remote workdir never share a tree:
// the second waits for the first and fails naming it.
func TestSSHLockExcludesAnotherProcess(t *testing.T) {
	srv := sshdtest.Start(t)
	ctx := context.Background()
	a := sshHost(t, srv, nil)
	b := sshHost(t, srv, nil)
	b.Workdir = a.Workdir
	b.LockWait = 300 * time.Millisecond
	release, err := a.Lock(ctx, 0, 0)
	require.NoError(t, err)
	_, err = b.Lock(ctx, 0, 0)
	require.Error(t, err)
	assert.True(t, record.IsInfra(err))
	assert.Contains(t, err.Error(), fmt.Sprintf("held by pid %d", os.Getpid()))
	other, err := b.Lock(ctx, 0, 1)
	require.NoError(t, err, "another tree is free")
	other()
	release()
	again, err := b.Lock(ctx, 0, 0)
	require.NoError(t, err, "a released tree can be taken")
	again()
}

// What cannot connect is an infrastructure failure naming the host; a
// refused host key is not retried.
func TestSSHConnectErrors(t *testing.T) {
	srv := sshdtest.Start(t)
	closed := sshdtest.Start(t)
	closed.Kill()
	for _, tc := range []struct {
		name  string
		setup func(h *Host)
		want  []string
	}{
		{name: "wrong host key", setup: func(h *Host) { h.KnownHosts = srv.WrongKnownHosts(t) },
			want: []string{"REFUSED: the host key of " + srv.Addr, "is not the one"}},
		{name: "unknown host", setup: func(h *Host) {
			h.KnownHosts = filepath.Join(t.TempDir(), "known_hosts")
			require.NoError(t, os.WriteFile(h.KnownHosts, nil, 0o600))
		}, want: []string{"is not in", "insecure_ignore_host_key"}},
		{name: "refused key", setup: func(h *Host) { h.KeyFile = closed.KeyFile }, want: []string{"unable to authenticate"}},
		{name: "unreachable", setup: func(h *Host) { h.Address = closed.Addr; h.KnownHosts = closed.KnownHosts },
			want: []string{"connection refused", "tried 2 times"}},
		{name: "no key", setup: func(h *Host) { h.KeyFile = ""; t.Setenv("SSH_AUTH_SOCK", "") }, want: []string{"no SSH agent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := sshHost(t, srv, nil)
			tc.setup(h)
			_, err := h.Exec(context.Background(), 0, runner.Command{Script: "echo should not run"})
			require.Error(t, err)
			assert.True(t, record.IsInfra(err), "%v", err)
			assert.Contains(t, err.Error(), "host gpu1")
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			if tc.name != "unreachable" {
				assert.NotContains(t, err.Error(), "tried", "not retried")
			}
		})
	}
	// With the check switched off by name, the same wrong key is accepted.
	h := sshHost(t, srv, nil)
	h.KnownHosts, h.InsecureIgnoreHostKey = "", true
	res, err := h.Exec(context.Background(), 0, runner.Command{Script: "echo ok"})
	require.NoError(t, err)
	assert.Equal(t, "ok\n", string(res.Output))
}

func TestSSHFacts(t *testing.T) {
	srv := sshdtest.Start(t)
	h := sshHost(t, srv, nil)
	fp, err := h.Facts(context.Background())
	require.NoError(t, err)
	local, err := (&runner.Local{}).Facts(context.Background())
	require.NoError(t, err)
	// The same machine probed both ways.
	assert.Equal(t, local.Host, fp.Host)
	assert.Equal(t, local.OS, fp.OS)
	assert.Equal(t, local.Kernel, fp.Kernel)
	assert.Equal(t, local.CPUs, fp.CPUs)
	assert.Equal(t, local.CPUModel, fp.CPUModel)
	// Python and Go are the ones on the login PATH of the host's user,
	// which need not be this process's.
}

func TestParseRemoteFacts(t *testing.T) {
	head := "os Linux x86_64\nkernel 6.8.0\nhost gpu-a\ncpus 224\ncpu Intel(R) Xeon(R) Platinum 8480+\n" +
		"distro Ubuntu 22.04.4 LTS\ngo go version go1.26.0 linux/amd64\npython Python 3.10.12\n"
	for _, tc := range []struct {
		name    string
		out     string
		gpus    int
		wantErr string
	}{
		{name: "no GPU", out: head},
		{name: "GPU host", out: head + "gpu-query\nindex, name, driver_version, clocks.current.sm [MHz], clocks.current.memory [MHz], temperature.gpu, power.draw [W], clocks_throttle_reasons.active\n" +
			"0, NVIDIA H200, 570.86.15, 1980, 3201, 34, 120.5, 0x0000000000000000\n1, NVIDIA H200, 570.86.15, 1980, 3201, 33, 118.0, 0x0000000000000000\n", gpus: 2},
		{name: "broken driver", out: head + "gpu-query\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\ngpu-failed 9\n",
			wantErr: "nvidia-smi failed (gpu-failed 9): NVIDIA-SMI has failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp, err := parseFacts([]byte(tc.out))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "linux/amd64 (Ubuntu 22.04.4 LTS)", fp.OS)
			assert.Equal(t, record.Fingerprint{Host: "gpu-a", OS: fp.OS, Kernel: "6.8.0", CPUModel: "Intel(R) Xeon(R) Platinum 8480+", CPUs: 224,
				GoVersion: "go1.26.0 linux/amd64", Python: "Python 3.10.12", GPUs: fp.GPUs}, fp)
			require.Len(t, fp.GPUs, tc.gpus)
			if tc.gpus > 0 {
				assert.Equal(t, 1980.0, fp.GPUs[1].SMClockMHz)
				assert.Equal(t, "NVIDIA H200", fp.GPUs[0].Name)
			}
		})
	}
}

// A host that goes away in the middle of a measurement is an
// infrastructure failure naming it: the runs recorded before stay, the
// run in flight is recorded as infra_error without samples, and once the
// host is back the next measurement reconnects.
func TestSSHHostGoesAwayMidJob(t *testing.T) {
	srv := sshdtest.Start(t)
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 2)
	repo, err := gitops.Open(ctx, src, t.TempDir())
	require.NoError(t, err)
	h := sshHost(t, srv, repo)
	pool, err := runner.NewPool(h)
	require.NoError(t, err)
	state := t.TempDir()
	ready := filepath.Join(state, "second run started")
	spec := runnertest.CounterSpec
	spec.Benchmarks = []record.BenchStep{spec.Benchmarks[0]}
	spec.Benchmarks[0].Env = map[string]string{"COUNT": filepath.Join(state, "count"), "READY": ready}
	spec.Benchmarks[0].Run = `n=$(($(cat "$COUNT" 2> /dev/null || echo 0) + 1)); echo $n > "$COUNT"
if [ $n -eq 2 ]; then touch "$READY"; sleep 60; fi
echo "BenchmarkVerifyStep 1 $(cat counter.txt) tok/s"`
	r := &runner.Runner{Spec: spec}
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		assert.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, time.Minute, 10*time.Millisecond)
		srv.Kill()
	}()
	runs, err := runnertest.Measure(t, ctx, pool, r, runner.Source{Target: record.Target{Commit: commits[1]}}, 3)
	require.Error(t, err)
	assert.True(t, record.IsInfra(err), "%v", err)
	assert.Contains(t, err.Error(), "host gpu1")
	require.Len(t, runs, 2)
	assert.Equal(t, record.StatusOK, runs[0].Status)
	assert.Equal(t, 2.0, runs[0].Values["verify_tok_s"])
	assert.Equal(t, record.StatusInfraError, runs[1].Status)
	assert.Empty(t, runs[1].Values)
	assert.Contains(t, runs[1].Error, "host gpu1")
	t.Logf("the measurement failed with: %v", err)

	// The host comes back once it is wholly gone: an sshd still dying
	// would hold the port the new one binds.
	<-killed
	srv.Restart(t)
	runs, err = runnertest.Measure(t, ctx, pool, r, runner.Source{Target: record.Target{Commit: commits[1]}}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, record.StatusOK, runs[0].Status, runs[0].Error)
}

// An ssh host whose sshd is stopped in the middle of a measurement, and
// stays away, leaves the pool after three failures in a row (the dropped
// connection, then two tries to connect, each retried by the host), with a
// state and an error that name it and say why; the other host of the
// pool measures meanwhile. Once sshd is back and the cool-down is over,
// one lease tries the host and it is in the pool again.
func TestSSHHostLeavesThePool(t *testing.T) {
	srv := sshdtest.Start(t)
	ctx := context.Background()
	src, commits := gitopstest.NewRepo(t, 2)
	repo, err := gitops.Open(ctx, src, t.TempDir())
	require.NoError(t, err)
	h := sshHost(t, srv, repo)
	spare := &runnertest.Fake{HostName: "spare", Default: &runnertest.FakeCommit{Outputs: []string{"BenchmarkVerifyStep 1 7 tok/s\n"}}}
	pool, err := runner.NewPool(h, spare)
	require.NoError(t, err)
	clock := runnertest.NewClock(time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC))
	pool.SetPolicy(runner.Policy{MaxFailures: 3, Cooldown: time.Hour, Now: clock.Now})
	var heard []runner.HostState
	var mu sync.Mutex
	defer pool.Watch(func(s runner.HostState) { mu.Lock(); heard = append(heard, s); mu.Unlock() })()

	state := t.TempDir()
	ready := filepath.Join(state, "first run started")
	spec := runnertest.CounterSpec
	spec.Benchmarks = []record.BenchStep{spec.Benchmarks[0]}
	spec.Benchmarks[0].Env = map[string]string{"READY": ready}
	spec.Benchmarks[0].Run = `if [ ! -e "$READY" ]; then touch "$READY"; sleep 60; fi
echo "BenchmarkVerifyStep 1 $(cat counter.txt) tok/s"`
	r := &runner.Runner{Spec: spec}
	target := record.Target{Commit: commits[1]}
	onGPU1 := func() error {
		l, err := pool.AcquireOn(ctx, target, "gpu1")
		if err != nil {
			return err
		}
		defer l.Release()
		_, err = r.Measure(ctx, l, runner.Source{Target: target}, 1, func(record.Run) error { return nil })
		return err
	}
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		assert.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, time.Minute, 10*time.Millisecond)
		srv.Kill()
	}()
	err = onGPU1()
	require.ErrorIs(t, err, runner.ErrHostDown, "the dropped connection is the host's failure")
	<-killed
	for range 2 {
		err := onGPU1()
		require.ErrorIs(t, err, runner.ErrHostDown)
		assert.Contains(t, err.Error(), "connection refused")
	}
	st := pool.States()[0]
	assert.True(t, st.Out)
	assert.Equal(t, 3, st.Failures)
	assert.Contains(t, st.Error, "connect to "+srv.Addr)
	mu.Lock()
	require.Len(t, heard, 1)
	assert.Equal(t, "gpu1", heard[0].Name)
	mu.Unlock()
	t.Logf("%s", st)

	err = onGPU1()
	require.ErrorIs(t, err, runner.ErrOutOfPool)
	assert.Contains(t, err.Error(), "host gpu1: lease a slot: the host left the pool at 19:00:00 after 3 failures in a row (")
	runs, err := runnertest.Measure(t, ctx, pool, r, runner.Source{Target: target}, 2)
	require.NoError(t, err)
	for _, run := range runs {
		assert.Equal(t, "spare", run.Host, "the other host measures")
	}

	srv.Restart(t)
	clock.Add(time.Hour)
	require.NoError(t, onGPU1(), "the trial after the cool-down")
	assert.Equal(t, runner.HostState{Name: "gpu1"}, pool.States()[0])
}

// When perfbot's connection goes away under a running command (perfbot
// killed, the network cut), the host kills the command's group itself:
// the end of the session's input is its signal.
func TestSSHLostConnectionKillsTheCommand(t *testing.T) {
	srv := sshdtest.Start(t)
	h := sshHost(t, srv, nil)
	marker := runnertest.Sleeper()
	failed := make(chan error, 1)
	go func() {
		_, err := h.Exec(context.Background(), 0, runner.Command{Script: marker + " & wait"})
		failed <- err
	}()
	require.Eventually(t, func() bool { return len(runnertest.Running(t, marker)) == 1 }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, h.Close())
	err := <-failed
	require.Error(t, err)
	assert.True(t, record.IsInfra(err), "%v", err)
	assert.Eventually(t, func() bool { return len(runnertest.Running(t, marker)) == 0 }, 30*time.Second, 10*time.Millisecond,
		"the host killed the command")
}

// sshHelperEnv makes the test binary a perfbot process that runs a
// command over SSH and hangs in it, for TestKilledPerfbotLeavesNothingOnTheHost.
const sshHelperEnv = "RUNNER_TEST_SSH_KILLED_HELPER"

func TestKilledPerfbotSSHHelper(t *testing.T) {
	f := strings.Split(os.Getenv(sshHelperEnv), "|")
	if len(f) != 6 {
		t.Skip("run by TestKilledPerfbotLeavesNothingOnTheHost")
	}
	h := &Host{Address: f[0], User: f[1], KeyFile: f[2], KnownHosts: f[3], Workdir: f[4]}
	_, _ = h.Exec(context.Background(), 0, runner.Command{Script: f[5]})
}

// perfbot killed by SIGKILL while a command runs over SSH: its connection
// drops with it, and the host kills the command's process group, the
// benchmark's grandchild (the sleep of `sleep 987; python3 bench.py`)
// included, within the host's kill grace.
func TestKilledPerfbotLeavesNothingOnTheHost(t *testing.T) {
	srv := sshdtest.Start(t)
	sleeper := runnertest.Sleeper()
	helper := exec.Command(os.Args[0], "-test.run=^TestKilledPerfbotSSHHelper$")
	helper.Env = append(os.Environ(), sshHelperEnv+"="+strings.Join([]string{srv.Addr, srv.User, srv.KeyFile, srv.KnownHosts,
		filepath.Join(t.TempDir(), "remote"), sleeper + "; python3 bench.py"}, "|"))
	require.NoError(t, helper.Start())
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
	require.Eventually(t, func() bool { return len(runnertest.Running(t, sleeper)) == 1 }, 30*time.Second, 10*time.Millisecond)

	require.NoError(t, helper.Process.Signal(syscall.SIGKILL))
	_ = helper.Wait()
	assert.Eventually(t, func() bool { return len(runnertest.Running(t, sleeper)) == 0 }, DefaultKillGrace+5*time.Second, 10*time.Millisecond,
		"no %q survives perfbot on the host", sleeper)
}

// A command a vanished perfbot left running on the host (recorded in the
// tree's scratch directory, marked) is killed by the next lock of the
// tree; a group whose mark is not the recorded one is left alone.
func TestSSHLockReapsWhatADeadPerfbotLeft(t *testing.T) {
	srv := sshdtest.Start(t)
	h := sshHost(t, srv, nil)
	start := func(mark string) (*exec.Cmd, <-chan struct{}) {
		c := exec.Command("sleep", "1000")
		c.Env = append(os.Environ(), proc.RunMark+"="+mark)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		require.NoError(t, c.Start())
		exited := make(chan struct{})
		go func() { _ = c.Wait(); close(exited) }()
		t.Cleanup(func() { _ = c.Process.Kill(); <-exited })
		return c, exited
	}
	for _, tc := range []struct {
		name     string
		recorded string // the mark in the record
		reaped   bool
	}{
		{name: "its own group", recorded: "a1b2", reaped: true},
		{name: "another group with the number", recorded: "ffff", reaped: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			left, exited := start("a1b2")
			scratch := h.scratch(0)
			require.NoError(t, os.MkdirAll(scratch, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(scratch, proc.GroupFile), []byte(fmt.Sprintf("%d %s\n", left.Process.Pid, tc.recorded)), 0o600))
			release, err := h.Lock(context.Background(), 0, 0)
			require.NoError(t, err)
			defer release()
			select {
			case <-exited:
				assert.True(t, tc.reaped, "a group of another mark was killed")
			case <-time.After(2 * time.Second):
				assert.False(t, tc.reaped, "the left group still runs")
			}
			entries, err := os.ReadDir(scratch)
			require.NoError(t, err)
			assert.Empty(t, entries, "the scratch directory is emptied")
		})
	}
}

// perfbot killed by SIGKILL while a command runs over SSH, the command
// having started a process that left its group (setsid) as well as the
// benchmark: the host kills both, the one that left by its mark.
func TestKilledPerfbotLeavesNoEscapedProcessOnTheHost(t *testing.T) {
	srv := sshdtest.Start(t)
	sleeper := runnertest.Sleeper()
	helper := exec.Command(os.Args[0], "-test.run=^TestKilledPerfbotSSHHelper$")
	helper.Env = append(os.Environ(), sshHelperEnv+"="+strings.Join([]string{srv.Addr, srv.User, srv.KeyFile, srv.KnownHosts,
		filepath.Join(t.TempDir(), "remote"), "setsid " + sleeper + " &\n" + sleeper + "; python3 bench.py"}, "|"))
	require.NoError(t, helper.Start())
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
	defer func() {
		for _, pid := range runnertest.Running(t, sleeper) {
			n, _ := strconv.Atoi(pid)
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}()
	require.Eventually(t, func() bool { return len(runnertest.Running(t, sleeper)) == 2 }, 30*time.Second, 10*time.Millisecond,
		"the command's sleep and the one that left its group run")

	require.NoError(t, helper.Process.Signal(syscall.SIGKILL))
	_ = helper.Wait()
	assert.Eventually(t, func() bool { return len(runnertest.Running(t, sleeper)) == 0 }, DefaultKillGrace+5*time.Second, 10*time.Millisecond,
		"no %q survives perfbot on the host", sleeper)
}
