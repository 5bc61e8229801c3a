package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	"github.com/perfbot/perfbot/runner/internal/proc"
)

func TestLocalExec(t *testing.T) {
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
		{name: "environment overrides", script: `echo "$NCCL_PROTO $HOME"`, env: map[string]string{"NCCL_PROTO": "LL", "HOME": "/nowhere"}, wantOutput: "LL /nowhere\n"},
		{name: "working directory", script: "cat marker", wantOutput: "here\n"},
		{name: "no stdin", script: "cat; echo eof", wantOutput: "eof\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "marker"), []byte("here\n"), 0o644))
			res, err := (&Local{}).Exec(context.Background(), 0, Command{Dir: dir, Script: tc.script, Env: tc.env, Timeout: time.Minute})
			require.NoError(t, err)
			assert.Equal(t, tc.wantOutput, string(res.Output))
			assert.Equal(t, tc.wantExit, res.ExitCode)
			assert.False(t, res.TimedOut)
			assert.False(t, res.Truncated)
		})
	}
}

// readPids reads the pids a script wrote, one a line.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	return pids
}

// hang starts two sleeps in the background and waits for them, writing
// every pid (theirs and the shell's) to pids.
const hang = `sleep 1000 & echo $! > pids
sleep 1000 & echo $! >> pids
echo $$ >> pids
echo started
wait`

func TestLocalTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	res, err := (&Local{}).Exec(context.Background(), 0, Command{Dir: dir, Script: hang, Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	assert.Equal(t, -1, res.ExitCode)
	assert.Equal(t, "started\n", string(res.Output), "output before the kill is kept")

	pids := readPids(t, filepath.Join(dir, "pids"))
	require.Len(t, pids, 3)
	for _, pid := range pids {
		assert.False(t, proc.Alive(pid), "pid %d survived the timeout", pid)
	}
}

func TestLocalCancelKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := (&Local{}).Exec(ctx, 0, Command{Dir: dir, Script: hang})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var infra *record.InfraError
	assert.False(t, errors.As(err, &infra), "a cancelled command is not an infrastructure failure")
	assert.Equal(t, -1, res.ExitCode)
	for _, pid := range readPids(t, filepath.Join(dir, "pids")) {
		assert.False(t, proc.Alive(pid), "pid %d survived the cancellation", pid)
	}
}

func TestLocalKillsLeftoverBackgroundProcesses(t *testing.T) {
	dir := t.TempDir()
	// A benchmark that forgets to stop the server it started.
	res, err := (&Local{}).Exec(context.Background(), 0, Command{Dir: dir, Script: "sleep 1000 & echo $! > pids; echo done", Timeout: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, "done\n", string(res.Output))
	assert.False(t, res.TimedOut)
	for _, pid := range readPids(t, filepath.Join(dir, "pids")) {
		assert.False(t, proc.Alive(pid), "background pid %d outlived its step", pid)
	}
}

func TestLocalOutputCap(t *testing.T) {
	l := &Local{OutputCap: 1000}
	res, err := l.Exec(context.Background(), 0, Command{Script: "echo FIRST; i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; echo LAST"})
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	out := string(res.Output)
	assert.True(t, strings.HasPrefix(out, "FIRST\n"), "head kept")
	assert.True(t, strings.HasSuffix(out, "line 1999\nLAST\n"), "tail kept")
	assert.Contains(t, out, "bytes of output omitted]")
	assert.Less(t, len(out), 1100)
}

func TestLocalInfraErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for name, dir := range map[string]string{
		"missing directory": filepath.Join(t.TempDir(), "gone"),
		"not a directory":   file,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := (&Local{HostName: "gpu1"}).Exec(context.Background(), 0, Command{Dir: dir, Script: "true"})
			var infra *record.InfraError
			require.ErrorAs(t, err, &infra)
			assert.Equal(t, "gpu1", infra.Host)
			assert.Equal(t, "open working directory", infra.Op)
		})
	}
}

func TestLocalEnvFile(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "env")
	res, err := (&Local{}).Exec(context.Background(), 0, Command{
		Script:  "export LATE=1; echo ran",
		Env:     map[string]string{"NCCL_ALGO": "Ring", "ODD": "a=b c"},
		EnvFile: envFile,
	})
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(res.Output), "the dump prints nothing")
	assert.Equal(t, "Ring", res.Env["NCCL_ALGO"])
	assert.Equal(t, "a=b c", res.Env["ODD"])
	assert.Equal(t, os.Getenv("PATH"), res.Env["PATH"], "the inherited environment is seen")
	assert.Equal(t, "1", res.Env["LATE"], "what the script exports itself is what its benchmark sees")
	assert.NoFileExists(t, envFile, "the dump, which holds secrets in clear, is removed once read")
}

// fakeNvidiaSMI puts an nvidia-smi on PATH that prints what the real one
// printed for perfbot's query on an H200, and logs its arguments.
func fakeNvidiaSMI(t *testing.T) (calls string) {
	dir := t.TempDir()
	sample, err := filepath.Abs("testdata/nvidia_smi_perfbot_query.csv")
	require.NoError(t, err)
	calls = filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$@\" >> " + proc.ShellQuote(calls) + "\ncat " + proc.ShellQuote(sample) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

func TestLocalFacts(t *testing.T) {
	calls := fakeNvidiaSMI(t)
	l := &Local{}
	fp, err := l.Facts(context.Background())
	require.NoError(t, err)

	host, _ := os.Hostname()
	assert.Equal(t, host, fp.Host)
	assert.True(t, strings.HasPrefix(fp.OS, "linux/"), fp.OS)
	assert.NotEmpty(t, fp.Kernel)
	assert.Positive(t, fp.CPUs)
	assert.Nil(t, fp.Env, "facts describe the machine; the environment is per run")
	require.Len(t, fp.GPUs, 1)
	assert.Equal(t, "NVIDIA H200", fp.GPUs[0].Name)

	again, err := l.Facts(context.Background())
	require.NoError(t, err)
	assert.Equal(t, fp, again)
	data, err := os.ReadFile(calls)
	require.NoError(t, err)
	assert.Equal(t, "--query-gpu="+strings.Join(GPUQueryFields, ",")+" --format=csv,nounits\n", string(data), "nvidia-smi runs once per host")
}

func TestLocalFactsBrokenDriver(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn'\\''t communicate with the NVIDIA driver.'\nexit 9\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	_, err := (&Local{}).Facts(context.Background())
	var infra *record.InfraError
	require.ErrorAs(t, err, &infra)
	assert.Contains(t, err.Error(), "couldn't communicate with the NVIDIA driver")
}

func TestLocalMaterialize(t *testing.T) {
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	c1 := b.Commit("1", map[string]string{"f.txt": "one\n", "g.txt": "g\n"})
	c2 := b.Commit("2", map[string]string{"f.txt": "two\n", "g.txt": "g2\n"})
	c3 := b.Commit("3", map[string]string{"f.txt": "three\n"})
	workdir := t.TempDir()
	repo, err := gitops.Open(ctx, b.Dir, workdir)
	require.NoError(t, err)
	p, err := repo.Diff(ctx, c1, c2)
	require.NoError(t, err)
	hunk := map[string]string{}
	for _, h := range p.Hunks() {
		hunk[h.File] = h.ID
	}
	moved := *p
	moved.Base = c3

	a := &Local{HostName: "a", Repo: repo, Workdir: workdir, Slots: 2, Trees: 2}
	other := &Local{HostName: "b", Repo: repo, Workdir: workdir, FirstTree: a.Slots * a.Trees}
	tests := []struct {
		name       string
		host       *Local
		slot, tree int
		src        Source
		wantTree   string            // under workdir/slots
		wantFiles  map[string]string // in the tree
		wantApply  bool              // a *gitops.ApplyError
		wantInfra  string            // the *record.InfraError's Op
		wantErr    string            // a plain error: the caller's mistake
	}{
		{name: "a commit", host: a, slot: 1, tree: 1, src: Source{Target: record.Target{Commit: c2}},
			wantTree: "3", wantFiles: map[string]string{"f.txt": "two\n", "g.txt": "g2\n"}},
		{name: "hunks on the base", host: a, slot: 0, tree: 0,
			src:      Source{Target: record.Target{Commit: c1, Patch: p.ID, Hunks: []string{hunk["g.txt"]}}, Patch: p},
			wantTree: "0", wantFiles: map[string]string{"f.txt": "one\n", "g.txt": "g2\n"}},
		{name: "a second host on the clone takes its own trees", host: other, slot: 0, tree: 0, src: Source{Target: record.Target{Commit: c1}},
			wantTree: "4", wantFiles: map[string]string{"f.txt": "one\n"}},
		{name: "hunks that do not apply are the target's fault", host: a, slot: 0, tree: 1,
			src:       Source{Target: record.Target{Commit: c3, Patch: p.ID, Hunks: []string{hunk["f.txt"]}}, Patch: &moved},
			wantApply: true},
		{name: "an unknown commit is the host's failure", host: a, slot: 0, tree: 1, src: Source{Target: record.Target{Commit: strings.Repeat("d", 40)}},
			wantInfra: "check out dddddddddd"},
		{name: "no such tree", host: a, slot: 2, tree: 0, src: Source{Target: record.Target{Commit: c1}},
			wantErr: "no tree 0 in slot 2 of host a"},
		{name: "hunks without their patch", host: a, slot: 0, tree: 0, src: Source{Target: record.Target{Commit: c1, Patch: p.ID, Hunks: []string{hunk["g.txt"]}}},
			wantErr: "are not given"},
		{name: "a host without a clone", host: &Local{HostName: "bare"}, src: Source{Target: record.Target{Commit: c1}},
			wantErr: "host bare has no repository or workdir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := tt.host.Materialize(ctx, tt.slot, tt.tree, tt.src)
			var ae *gitops.ApplyError
			var infra *record.InfraError
			switch {
			case tt.wantApply:
				require.ErrorAs(t, err, &ae)
				assert.False(t, record.IsInfra(err))
			case tt.wantInfra != "":
				require.ErrorAs(t, err, &infra)
				assert.Equal(t, tt.host.Name(), infra.Host)
				assert.Equal(t, tt.wantInfra, infra.Op)
			case tt.wantErr != "":
				require.ErrorContains(t, err, tt.wantErr)
				assert.False(t, record.IsInfra(err))
			default:
				require.NoError(t, err)
				assert.Equal(t, filepath.Join(workdir, "slots", tt.wantTree), ws.Dir)
				for name, want := range tt.wantFiles {
					got, err := os.ReadFile(filepath.Join(ws.Dir, name))
					require.NoError(t, err)
					assert.Equal(t, want, string(got), name)
				}
				assert.Equal(t, filepath.Join(workdir, "scratch", tt.wantTree), ws.Scratch)
				assert.NotEmpty(t, ws.Stamp)
				assert.NoError(t, tt.host.Verify(ctx, tt.slot, tt.tree, ws, tt.src))
				assert.DirExists(t, ws.Scratch)
			}
		})
	}
}

func TestLocalEnvFileIsNeverStale(t *testing.T) {
	scratch := t.TempDir()
	envFile := filepath.Join(scratch, "env")
	require.NoError(t, os.WriteFile(envFile, []byte("STALE=1\x00"), 0o644))
	// PATH is emptied so that neither env nor cat can write a new dump.
	res, err := (&Local{}).Exec(context.Background(), 0, Command{Script: "echo ran", Env: map[string]string{"PATH": ""}, EnvFile: envFile, Scratch: scratch})
	require.NoError(t, err)
	assert.Nil(t, res.Env, "an earlier dump is not read back as this command's")
	entries, err := os.ReadDir(scratch)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), "perfbot-output", "the captured output is removed")
	}
}

// Commands never receive perfbot's own credentials, whatever the script
// prints; what a benchmark needs from the environment, and what its step
// sets, it gets.
func TestLocalWithholdsPerfbotSecrets(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_inherited0000000000000000000000000000")
	t.Setenv("PERFBOT_API_TOKEN", "perfbot-own-api-token")
	t.Setenv("BOT_GH_TOKEN", "configured-token-variable")
	t.Setenv("HF_TOKEN", "hf_the_benchmark_needs_this")
	t.Setenv("NCCL_PROTO", "LL")
	l := &Local{Withheld: []string{"BOT_GH_TOKEN"}}
	envFile := filepath.Join(t.TempDir(), "env")
	res, err := l.Exec(context.Background(), 0, Command{
		Script:  "env",
		Env:     map[string]string{EnvCommit: "c1", "STEP_TOKEN": "the step's own"},
		EnvFile: envFile,
	})
	require.NoError(t, err)
	for _, tc := range []struct {
		name, variable string
		given          bool
	}{
		{name: "the GitHub token", variable: "GITHUB_TOKEN"},
		{name: "perfbot's own variables", variable: "PERFBOT_API_TOKEN"},
		{name: "the configured token variable", variable: "BOT_GH_TOKEN"},
		{name: "a token the benchmark needs", variable: "HF_TOKEN", given: true},
		{name: "an ordinary variable", variable: "NCCL_PROTO", given: true},
		{name: "a variable the runner sets", variable: EnvCommit, given: true},
		{name: "a variable the step sets", variable: "STEP_TOKEN", given: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, inDump := res.Env[tc.variable]
			assert.Equal(t, tc.given, inDump, "in the environment dump")
			assert.Equal(t, tc.given, strings.Contains(string(res.Output), "\n"+tc.variable+"=") || strings.HasPrefix(string(res.Output), tc.variable+"="), "in the output")
		})
	}
}

// The environment recorded is the one the benchmark saw: what the script
// exports before it starts the benchmark counts.
func TestLocalEnvDump(t *testing.T) {
	for _, tc := range []struct {
		name     string
		script   string
		want     map[string]string // variables in the dump
		wantExit int
	}{
		{name: "exported by the script", script: "export NCCL_ALGO=Tree; echo bench", want: map[string]string{"NCCL_ALGO": "Tree", "GIVEN": "1"}},
		{name: "overridden by the script", script: "GIVEN=2; export GIVEN; echo bench", want: map[string]string{"GIVEN": "2"}},
		{name: "a failing script", script: "export NCCL_ALGO=Tree; exit 4", want: map[string]string{"NCCL_ALGO": "Tree"}, wantExit: 4},
		{name: "a script that moves elsewhere", script: "cd /; export NCCL_ALGO=Tree", want: map[string]string{"NCCL_ALGO": "Tree"}},
		{name: "a script that replaces its shell", script: "exec env > /dev/null", want: map[string]string{"GIVEN": "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			res, err := (&Local{}).Exec(context.Background(), 0, Command{Script: tc.script, Env: map[string]string{"GIVEN": "1"}, EnvFile: "env.dump"})
			require.NoError(t, err)
			assert.Equal(t, tc.wantExit, res.ExitCode)
			for k, v := range tc.want {
				assert.Equal(t, v, res.Env[k], k)
			}
		})
	}
}

// A command that prints without end is kept to its head and tail while
// it writes: nothing of it grows on disk.
func TestLocalOutputIsCappedWhileWritten(t *testing.T) {
	scratch := t.TempDir()
	l := &Local{OutputCap: 1 << 16}
	res, err := l.Exec(context.Background(), 0, Command{
		Script:  `echo FIRST; head -c 20000000 /dev/zero | tr '\0' a; echo; echo "scratch $(du -sk "$SCRATCH" | cut -f1) KiB"`,
		Env:     map[string]string{"SCRATCH": scratch},
		Scratch: scratch,
		Timeout: time.Minute,
	})
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	assert.LessOrEqual(t, len(res.Output), 1<<16+100)
	out := string(res.Output)
	assert.True(t, strings.HasPrefix(out, "FIRST\n"), "the head is kept")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var kib int
	_, err = fmt.Sscanf(lines[len(lines)-1], "scratch %d KiB", &kib)
	require.NoError(t, err, lines[len(lines)-1])
	assert.Less(t, kib, 1024, "the scratch directory holds %d KiB while the command runs", kib)
	assert.True(t, strings.Contains(out, " bytes of output omitted]\n"), "the cut is marked")
}
