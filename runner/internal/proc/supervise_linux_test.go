package proc

import (
	"bytes"
	"fmt"
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
)

// A command under a supervisor runs as it would without one: its output,
// exit status (128+n for signal n), working directory and environment are
// its own, the supervisor's variable aside, and it runs in the
// supervisor's process group, the supervisor its parent.
func TestSupervisedCommand(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		script   string
		wantOut  string
		wantExit int
	}{
		{name: "output", script: "echo out; echo err >&2", wantOut: "out\nerr\n"},
		{name: "a failing command", script: "exit 3", wantExit: 3},
		{name: "killed by a signal", script: "kill -TERM $$", wantExit: 143},
		{name: "working directory", script: "pwd", wantOut: dir + "\n"},
		{name: "environment", script: `echo "$STEP_VAR ${` + superviseEnv + `-unset}"`, wantOut: "set unset\n"},
		{name: "no input", script: "cat", wantOut: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := exec.Command("/bin/sh", "-c", tc.script)
			c.Dir = dir
			c.Env = append(os.Environ(), "STEP_VAR=set")
			var out bytes.Buffer
			c.Stdout, c.Stderr = &out, &out
			require.NoError(t, Supervise(c))
			err := c.Run()
			code := 0
			if err != nil {
				exit, ok := err.(*exec.ExitError)
				require.True(t, ok, "%v", err)
				code = ExitCode(exit.ProcessState)
			}
			assert.Equal(t, tc.wantExit, code)
			assert.Equal(t, tc.wantOut, out.String())
		})
	}
	t.Run("its parent and group", func(t *testing.T) {
		c := exec.Command("/bin/sh", "-c", `echo "$PPID $(cut -d' ' -f5 /proc/$$/stat)"`)
		var out bytes.Buffer
		c.Stdout = &out
		require.NoError(t, Supervise(c))
		require.NoError(t, c.Run())
		sup := strconv.Itoa(c.Process.Pid)
		assert.Equal(t, sup+" "+sup, strings.TrimSpace(out.String()), "the supervisor is the shell's parent and leads its group")
	})
}

// dropHelperEnv makes the test binary a perfbot that starts a supervised
// command and hangs, for TestSupervisorWhenPerfbotDies.
const dropHelperEnv = "PROC_TEST_DROP_HELPER"

func TestSupervisorDropHelper(t *testing.T) {
	args := os.Getenv(dropHelperEnv)
	if args == "" {
		t.Skip("run by TestSupervisorWhenPerfbotDies")
	}
	script, dropped, _ := strings.Cut(args, "|")
	c := exec.Command("/bin/sh", "-c", script)
	require.NoError(t, Supervise(c, "/bin/sh", "-c", "echo dropped > "+ShellQuote(dropped)))
	require.NoError(t, c.Start())
	select {} // killed here
}

// When perfbot dies by SIGKILL, its supervisors run their drop command and
// kill every process below them at once: the command's own, a grandchild
// in its group, and one that left the group and the session.
func TestSupervisorWhenPerfbotDies(t *testing.T) {
	dir := t.TempDir()
	sleeper := fmt.Sprintf("sleep 987.%09d", time.Now().UnixNano()%1e9)
	script := "setsid " + sleeper + " & (" + sleeper + ") & " + sleeper + "; python3 bench.py"
	dropped := filepath.Join(dir, "dropped")
	helper := exec.Command(os.Args[0], "-test.run=^TestSupervisorDropHelper$")
	helper.Env = append(os.Environ(), dropHelperEnv+"="+script+"|"+dropped)
	require.NoError(t, helper.Start())
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
	require.Eventually(t, func() bool { return len(running(sleeper)) == 3 }, 30*time.Second, 10*time.Millisecond)

	require.NoError(t, helper.Process.Signal(syscall.SIGKILL))
	_ = helper.Wait()
	assert.Eventually(t, func() bool { return len(running(sleeper)) == 0 }, 5*time.Second, 10*time.Millisecond, "every sleep dies with perfbot")
	data, err := os.ReadFile(dropped)
	require.NoError(t, err, "the drop command ran")
	assert.Equal(t, "dropped\n", string(data))
	for _, pid := range running(sleeper) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// running lists the live processes whose command line is cmdline.
func running(cmdline string) []int {
	var out []int
	for _, pid := range pids() {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || string(bytes.ReplaceAll(bytes.TrimSuffix(data, []byte{0}), []byte{0}, []byte{' '})) != cmdline {
			continue
		}
		if st, ok := stat(pid); ok && st.live() {
			out = append(out, pid)
		}
	}
	return out
}

func TestParseSupervised(t *testing.T) {
	drop, path, argv, err := parseSupervised([]string{"2", "scancel", "--name=j", "/usr/bin/srun", "srun", "sh"})
	require.NoError(t, err)
	assert.Equal(t, []string{"scancel", "--name=j"}, drop)
	assert.Equal(t, "/usr/bin/srun", path)
	assert.Equal(t, []string{"srun", "sh"}, argv)
	for _, bad := range [][]string{nil, {"x", "/bin/sh", "sh"}, {"1", "/bin/sh", "sh"}, {"-1", "a", "b"}} {
		_, _, _, err := parseSupervised(bad)
		assert.Error(t, err, "%q", bad)
	}
}
