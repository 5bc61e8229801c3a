package slurm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/internal/slurmtest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// These tests run against a real single-node Slurm (package slurmtest).

func TestMain(m *testing.M) { slurmtest.Main(m) }

// newSlurm returns a slurm host named cluster over a fresh repository of
// n numbered commits, its clone and trees under a temporary workdir.
func newSlurm(t *testing.T, slots, n int) (*Host, []string) {
	t.Helper()
	slurmtest.Start(t)
	src, commits := gitopstest.NewRepo(t, n)
	return &Host{
		Local:     &runner.Local{HostName: "cluster", Workdir: t.TempDir(), Slots: slots},
		Origin:    src,
		Partition: slurmtest.Partition,
		RetryWait: 10 * time.Millisecond,
	}, commits
}

func TestSlurmExec(t *testing.T) {
	s, _ := newSlurm(t, 1, 1)
	for _, tc := range []struct {
		name       string
		script     string
		env        map[string]string
		wantOutput string
		wantExit   int
		wantEnv    map[string]string
	}{
		{name: "success", script: "echo hello", wantOutput: "hello\n"},
		{name: "stdout and stderr", script: "echo out; echo err >&2", wantOutput: "out\nerr\n"},
		{name: "a failing script is a result", script: "echo failing; exit 3", wantOutput: "failing\n", wantExit: 3},
		{name: "killed by a signal", script: "kill -TERM $$", wantExit: 143},
		{name: "working directory", script: "cat marker", wantOutput: "here\n"},
		{name: "environment", script: `export NCCL_ALGO=Tree; echo "$NCCL_PROTO"`, env: map[string]string{"NCCL_PROTO": "LL"},
			wantOutput: "LL\n", wantEnv: map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Tree"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "marker"), []byte("here\n"), 0o644))
			var envFile string
			if tc.wantEnv != nil {
				envFile = filepath.Join(dir, "env")
			}
			res, err := s.Exec(context.Background(), 0, runner.Command{Dir: dir, Script: tc.script, Env: tc.env, EnvFile: envFile, Scratch: dir, Timeout: time.Minute})
			require.NoError(t, err)
			assert.Equal(t, tc.wantOutput, string(res.Output))
			assert.Equal(t, tc.wantExit, res.ExitCode)
			assert.False(t, res.TimedOut)
			assert.Equal(t, slurmtest.Node, res.Node)
			for k, v := range tc.wantEnv {
				assert.Equal(t, v, res.Env[k], k)
			}
			if tc.wantEnv != nil {
				assert.NotEmpty(t, res.Env["SLURM_JOB_ID"], "the environment is the job's")
			}
			left, err := filepath.Glob(filepath.Join(dir, "perfbot-*"))
			require.NoError(t, err)
			assert.Empty(t, left, "the job's records are removed")
		})
	}
}

// A job perfbot ends, at the step's timeout or by cancelling ctx, is
// scancelled: nothing is left in squeue when Exec returns, and no process
// of the job is left running.
func TestSlurmCancelLeavesNothingQueued(t *testing.T) {
	s, _ := newSlurm(t, 1, 1)
	for _, tc := range []struct {
		name       string
		timeout    time.Duration
		cancel     bool
		ignoreTerm bool
	}{
		// The script ignores SIGTERM, as a stuck benchmark may.
		{name: "step timeout", timeout: time.Second, ignoreTerm: true},
		{name: "cancelled", cancel: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			started := filepath.Join(dir, "started")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				go func() {
					for {
						if _, err := os.Stat(started); err == nil {
							cancel()
							return
						}
						time.Sleep(20 * time.Millisecond)
					}
				}()
			}
			script := "echo $$ > started; echo running; sleep 1000 & echo $! >> started; wait"
			if tc.ignoreTerm {
				script = "trap '' TERM; " + script
			}
			res, err := s.Exec(ctx, 0, runner.Command{Dir: dir, Script: script, Scratch: dir, Timeout: tc.timeout})
			if tc.cancel {
				require.ErrorIs(t, err, context.Canceled)
			} else {
				require.NoError(t, err)
				assert.True(t, res.TimedOut)
			}
			assert.Equal(t, -1, res.ExitCode)
			assert.Contains(t, string(res.Output), "running")
			queue, err := slurmtest.Start(t).Queue()
			require.NoError(t, err)
			assert.Empty(t, queue, "squeue after the cancel")
			for _, pid := range runnertest.ReadPids(t, started) {
				assert.False(t, proc.Alive(pid), "process %d of the job still runs", pid)
			}
		})
	}
}

// A step's timeout runs from the start of its job: a job that waits in
// the queue longer than that, behind a job holding the whole node, runs
// and succeeds.
func TestSlurmTimeoutStartsWithTheJob(t *testing.T) {
	s, _ := newSlurm(t, 1, 1)
	blocker := exec.Command("srun", "--quiet", "--exclusive", "--job-name=blocker", "sleep", "3")
	require.NoError(t, blocker.Start())
	defer blocker.Wait()
	for {
		queue, err := slurmtest.Start(t).Queue()
		require.NoError(t, err)
		if slices.ContainsFunc(queue, func(j string) bool { return strings.HasSuffix(j, " blocker RUNNING") }) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	dir := t.TempDir()
	res, err := s.Exec(context.Background(), 0, runner.Command{Dir: dir, Script: "echo ran", Scratch: dir, Timeout: time.Second})
	require.NoError(t, err)
	assert.False(t, res.TimedOut, "the time in the queue is not the step's")
	assert.Equal(t, "ran\n", string(res.Output))
}

// cancelSelf is a script that has Slurm end its own job. On a loaded
// machine scancel can time out talking to slurmctld: it asks until it is
// answered. Then it waits as the shell itself (exec): proctrack/linuxproc
// finds a job's processes by their parents, and a child forked while
// slurmd signals the shell outlives it, reparented, holding the step's
// output open, which kept a CI run's job COMPLETING past a minute.
const cancelSelf = "until scancel $SLURM_JOB_ID; do sleep 1; done; exec sleep 100"

// A job that Slurm ends before its script does (here the script cancels
// its own job, as a preemption or a node failure would end it) is an
// infrastructure failure naming the host and the job, after the retries;
// a job that fails once is submitted again and its result stands.
func TestSlurmJobFailureIsInfra(t *testing.T) {
	s, _ := newSlurm(t, 1, 1)
	ctx := context.Background()

	t.Run("every attempt fails", func(t *testing.T) {
		dir := t.TempDir()
		res, err := s.Exec(ctx, 0, runner.Command{Dir: dir, Script: "echo attempt >> attempts; " + cancelSelf, Scratch: dir, Timeout: 5 * time.Minute})
		var infra *record.InfraError
		require.ErrorAs(t, err, &infra, "timed out %v, output %q", res.TimedOut, res.Output)
		assert.Equal(t, "cluster", infra.Host)
		assert.Regexp(t, `^slurm job \d+ \(perfbot-cluster-0-[0-9a-f]+\)$`, infra.Op)
		assert.ErrorContains(t, err, "the job ended before its script did")
		assert.ErrorContains(t, err, "(3 attempts)")
		data, err := os.ReadFile(filepath.Join(dir, "attempts"))
		require.NoError(t, err)
		assert.Equal(t, 3, strings.Count(string(data), "attempt"), "1 + DefaultRetries attempts")
		queue, err := slurmtest.Start(t).Queue()
		require.NoError(t, err)
		assert.Empty(t, queue)
	})
	t.Run("the first attempt fails", func(t *testing.T) {
		dir := t.TempDir()
		script := "if [ ! -e once ]; then touch once; " + cancelSelf + "; fi; echo second; exit 4"
		res, err := s.Exec(ctx, 0, runner.Command{Dir: dir, Script: script, Scratch: dir, Timeout: 5 * time.Minute})
		require.NoError(t, err, "output %q", res.Output)
		assert.Equal(t, 4, res.ExitCode, "the retry's own result")
		assert.Equal(t, "second\n", string(res.Output))
	})
	t.Run("the job never starts", func(t *testing.T) {
		bad := &Host{Local: s.Local, Partition: "nosuchpartition", Retries: -1}
		_, err := bad.Exec(ctx, 0, runner.Command{Script: "true", Scratch: t.TempDir(), Timeout: time.Minute})
		var infra *record.InfraError
		require.ErrorAs(t, err, &infra)
		assert.Regexp(t, `^slurm job perfbot-cluster-0-[0-9a-f]+$`, infra.Op)
		assert.ErrorContains(t, err, "the job never started, or its node does not see the shared workdir: srun: error: Unable to allocate resources: Invalid partition name specified")
	})
}

// Two targets measured at once through a slurm host of two slots: the
// trees are checked out on the shared workdir, each run is the sample
// of its own commit and records the host and the node that ran it; a
// failing benchmark is a failed run, not an infrastructure failure.
func TestSlurmMeasure(t *testing.T) {
	s, commits := newSlurm(t, 2, 3)
	pool, err := runner.NewPool(s)
	require.NoError(t, err)
	require.Equal(t, 2, pool.Size())
	ctx := context.Background()
	r := &runner.Runner{Spec: runnertest.CounterSpec}

	var wg sync.WaitGroup
	runs := make([][]record.Run, 2)
	errs := make([]error, 2)
	for i, c := range []string{commits[0], commits[2]} {
		wg.Go(func() {
			runs[i], errs[i] = runnertest.Measure(t, ctx, pool, r, runner.Source{Target: record.Target{Commit: c}}, 2)
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	for i, want := range []float64{1, 3} {
		require.Len(t, runs[i], 2)
		for _, run := range runs[i] {
			assert.Equal(t, record.StatusOK, run.Status, run.Error)
			assert.Equal(t, want, run.Values["verify_tok_s"])
			assert.Equal(t, "cluster", run.Host)
			assert.Equal(t, slurmtest.Node, run.Node)
		}
	}
	trees, err := filepath.Glob(filepath.Join(s.Local.Workdir, "slots", "*", ".git"))
	require.NoError(t, err)
	assert.Len(t, trees, 2, "one tree a slot, on the shared workdir")

	failing := runnertest.CounterSpec
	failing.Benchmarks = []record.BenchStep{runnertest.CounterSpec.Benchmarks[0]}
	failing.Benchmarks[0].Run = "echo 'engine: CUDA out of memory'; exit 1"
	failed, err := runnertest.Measure(t, ctx, pool, &runner.Runner{Spec: failing}, runner.Source{Target: record.Target{Commit: commits[1]}}, 2)
	require.NoError(t, err, "a failing benchmark is the target's failure")
	require.Len(t, failed, 1)
	assert.Equal(t, record.StatusBenchFailed, failed[0].Status)
	assert.Equal(t, `benchmark step "engine" exited with status 1: engine: CUDA out of memory`, failed[0].Error)
	assert.Equal(t, slurmtest.Node, failed[0].Node)
}

// After a run on a Slurm host, no file of the shared workdir that another
// user could read holds a secret of the benchmark's environment: the job
// files and scratch directories are the owner's only, and the
// environment dumps are removed once read.
func TestSlurmMeasureLeavesNoSecretReadableByOthers(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	s, commits := newSlurm(t, 1, 2)
	pool, err := runner.NewPool(s)
	require.NoError(t, err)
	secrets := []string{"hf_" + strings.Repeat("S3cr3tV4lue", 3), "pr0xyPassw0rd"}
	spec := runnertest.CounterSpec
	spec.Benchmarks = slices.Clone(spec.Benchmarks)
	spec.Benchmarks[0].Env = map[string]string{"HF_TOKEN": secrets[0], "GOPROXY": "https://bot:" + secrets[1] + "@goproxy.example/"}
	runs, err := runnertest.Measure(t, context.Background(), pool, &runner.Runner{Spec: spec}, runner.Source{Target: record.Target{Commit: commits[1]}}, 1)
	require.NoError(t, err)
	require.Equal(t, record.StatusOK, runs[0].Status, runs[0].Error)
	assert.Empty(t, runnertest.Exposed(t, s.Local.Workdir, secrets), "files other users can read that hold a secret")
}

// A benchmark whose job Slurm ends is recorded as an infrastructure
// failure, without samples, and Measure returns the *record.InfraError.
func TestSlurmMeasureInfraError(t *testing.T) {
	s, commits := newSlurm(t, 1, 1)
	s.Retries = -1
	pool, err := runner.NewPool(s)
	require.NoError(t, err)
	spec := runnertest.CounterSpec
	spec.Benchmarks = []record.BenchStep{runnertest.CounterSpec.Benchmarks[0]}
	spec.Benchmarks[0].Run = cancelSelf
	runs, err := runnertest.Measure(t, context.Background(), pool, &runner.Runner{Spec: spec}, runner.Source{Target: record.Target{Commit: commits[0]}}, 2)
	var infra *record.InfraError
	require.ErrorAs(t, err, &infra)
	assert.Equal(t, "cluster", infra.Host)
	require.Len(t, runs, 1)
	assert.Equal(t, record.StatusInfraError, runs[0].Status)
	assert.Contains(t, runs[0].Error, "host cluster: slurm job ")
	assert.Nil(t, runs[0].Values)
}

func TestSlurmArgs(t *testing.T) {
	s := &Host{Local: &runner.Local{HostName: "c"}, Partition: "h200", Gres: "gpu:8", TimeLimit: 90*time.Minute + time.Second,
		Exclusive: true, SrunArgs: []string{"--account=perf"}}
	assert.Equal(t, []string{"--quiet", "--nodes=1", "--ntasks=1", "--job-name=j", "--chdir=/tree",
		"--partition=h200", "--gres=gpu:8", "--time=91", "--exclusive", "--account=perf", "/bin/sh", "-c", "script"},
		s.srunArgs("j", "/tree", "script"))
	assert.Equal(t, []string{"--quiet", "--nodes=1", "--ntasks=1", "--job-name=j", "/bin/sh", "-c", "script"},
		(&Host{Local: &runner.Local{}}).srunArgs("j", "", "script"))
}

// slurmHelperEnv makes the test binary act as a perfbot process whose
// benchmark job hangs, for TestKilledPerfbotLeavesNoSlurmJob; it holds
// the directory the job runs in.
const slurmHelperEnv = "RUNNER_TEST_SLURM_KILLED_HELPER"

func TestKilledPerfbotSlurmHelper(t *testing.T) {
	dir, script, ok := strings.Cut(os.Getenv(slurmHelperEnv), "|")
	if !ok {
		t.Skip("run by TestKilledPerfbotLeavesNoSlurmJob")
	}
	s := &Host{Local: &runner.Local{HostName: "cluster", Workdir: dir}, Partition: slurmtest.Partition}
	_, _ = s.Exec(context.Background(), 0, runner.Command{Dir: dir, Script: script, Scratch: dir})
}

// perfbot killed by SIGKILL while its job runs: the supervisor srun runs
// under cancels the job at once, so that the benchmark's processes on the
// node (the sleep of `sleep 987; python3 bench.py`) die within seconds and
// the job leaves the queue.
func TestKilledPerfbotLeavesNoSlurmJob(t *testing.T) {
	c := slurmtest.Start(t)
	dir := t.TempDir()
	sleeper := runnertest.Sleeper()
	helper := exec.Command(os.Args[0], "-test.run=^TestKilledPerfbotSlurmHelper$")
	helper.Env = append(os.Environ(), slurmHelperEnv+"="+dir+"|echo started > started; "+sleeper+"; python3 bench.py")
	require.NoError(t, helper.Start())
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
	require.Eventually(t, func() bool { return len(runnertest.Running(t, sleeper)) == 1 }, time.Minute, 10*time.Millisecond, "the job runs")
	queue, err := c.Queue()
	require.NoError(t, err)
	require.Len(t, queue, 1)
	assert.Regexp(t, `^\d+ perfbot-cluster-0-[0-9a-f]+ RUNNING$`, queue[0])

	require.NoError(t, helper.Process.Signal(syscall.SIGKILL))
	_ = helper.Wait()
	assert.Eventually(t, func() bool { return len(runnertest.Running(t, sleeper)) == 0 }, 10*time.Second, 10*time.Millisecond,
		"no %q survives perfbot on the node", sleeper)
	assert.Eventually(t, func() bool {
		queue, err := c.Queue()
		return err == nil && len(queue) == 0
	}, time.Minute, 50*time.Millisecond, "the job of a dead perfbot leaves the queue")
}

// The node of a run on Slurm is in its fingerprint as Slurm describes it
// (the test node's CPUs, memory and its two GPUs), and the GPU state and
// topology are read on the node, inside each step's job, by the
// nvidia-smi there (a stand-in on PATH, which the job inherits).
func TestSlurmRunRecordsItsNode(t *testing.T) {
	gpu := runnertest.UseFakeGPU(t, "samples_busy.csv")
	s, commits := newSlurm(t, 1, 2)
	pool, err := runner.NewPool(s)
	require.NoError(t, err)
	r := &runner.Runner{Spec: runnertest.GPUSpec(runnertest.AwaitSampled+`printf 'BenchmarkVerifyStep-2 1 812.5 tok/s\n'`, nil)}
	runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: commits[1]}}, 2)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	run := runs[1]
	require.Equal(t, record.StatusOK, run.Status, run.Error)
	assert.Equal(t, slurmtest.Node, run.Node)
	node := run.Fingerprint.ClusterNode
	require.NotNil(t, node)
	assert.Equal(t, slurmtest.Node, node.Name)
	assert.Equal(t, slurmtest.Gres, node.Gres)
	assert.Equal(t, slurmtest.Start(t).CPUs, node.CPUs)
	assert.Equal(t, 1, node.RealMemoryMB, "the test node declares no memory: Slurm counts 1 MB")
	assert.Contains(t, node.CfgTRES, "cpu=")
	assert.Equal(t, slurmtest.Partition, node.Partitions)
	require.Len(t, run.Fingerprint.GPUState, 2, "sampled on the node during the step")
	assert.Equal(t, 1980.0, run.Fingerprint.GPUState[0].SMClockMHz.Median)
	calls := strings.Join(gpu.Calls(t), "\n")
	assert.Contains(t, calls, "--query-gpu=")
	assert.NotEmpty(t, run.Fingerprint.GPUTopology)
	assert.Equal(t, 2, strings.Count(calls, "topo -m"), "a cluster's steps may run on different nodes: each reads its node's topology")
}

func TestParseSlurmNode(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  string
		want record.ClusterNode
		err  string
	}{
		{
			// As the test cluster's Slurm 22.05 printed its node.
			name: "the test node",
			out: "NodeName=localhost Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=11.56 AvailableFeatures=(null) ActiveFeatures=(null) " +
				"Gres=gpu:fake:2 NodeAddr=127.0.0.1 NodeHostName=localhost Version=22.05.8 OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1 AllocMem=0 FreeMem=19061 " +
				"Sockets=2 Boards=1 State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  BootTime=2026-12-01T10:36:29 " +
				"SlurmdStartTime=2026-12-01T18:54:02 LastBusyTime=2026-12-01T18:54:03 CfgTRES=cpu=2,mem=1M,billing=2 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n",
			want: record.ClusterNode{Name: "localhost", Arch: "x86_64", OS: "Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0", CPUs: 2, RealMemoryMB: 1,
				Gres: "gpu:fake:2", CfgTRES: "cpu=2,mem=1M,billing=2", Partitions: "debug"},
		},
		{
			// Shaped as Slurm prints a node of eight GPUs with features
			// and accounting of GPUs (not a recording).
			name: "a GPU node",
			out: "NodeName=gpu-a01 Arch=x86_64 CoresPerSocket=56 CPUAlloc=0 CPUEfctv=224 CPUTot=224 CPULoad=0.41 AvailableFeatures=h200,nvlink ActiveFeatures=h200,nvlink " +
				"Gres=gpu:h200:8(S:0-1) NodeAddr=gpu-a01 NodeHostName=gpu-a01 Version=23.11.4 OS=Linux 5.15.0-119-generic #129-Ubuntu SMP Fri Aug 2 19:25:20 UTC 2024 " +
				"RealMemory=2063000 AllocMem=0 FreeMem=1990000 Sockets=2 Boards=1 State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=h200,all " +
				"CfgTRES=cpu=224,mem=2063000M,billing=224,gres/gpu=8,gres/gpu:h200=8 AllocTRES= CapWatts=n/a",
			want: record.ClusterNode{Name: "gpu-a01", Arch: "x86_64", OS: "Linux 5.15.0-119-generic #129-Ubuntu SMP Fri Aug 2 19:25:20 UTC 2024", CPUs: 224, RealMemoryMB: 2063000,
				Gres: "gpu:h200:8(S:0-1)", CfgTRES: "cpu=224,mem=2063000M,billing=224,gres/gpu=8,gres/gpu:h200=8", Features: "h200,nvlink", Partitions: "h200,all"},
		},
		{name: "no node", out: "Node gpu-x not found\n", err: `no NodeName in "Node gpu-x not found"`},
		{name: "CPUs not a number", out: "NodeName=n1 CPUTot=many", err: `scontrol show node n1: CPUTot="many" is not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSlurmNode(tc.out)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
