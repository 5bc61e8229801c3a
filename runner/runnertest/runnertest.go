// Package runnertest holds what tests of packages that measure need of
// runner: a Fake host that answers commands from a script per target, a
// function that measures a target on a lease of a pool, a benchmark spec
// that measures what a numbered test repository holds, a clock that moves
// only when told, and a stand-in nvidia-smi.
package runnertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
)

// Measure runs r.Measure on a lease of pool and returns the runs it
// recorded.
func Measure(t testing.TB, ctx context.Context, pool *runner.Pool, r *runner.Runner, src runner.Source, repeats int) ([]record.Run, error) {
	t.Helper()
	lease, err := pool.Acquire(ctx, src.Target)
	if err != nil {
		return nil, err
	}
	defer lease.Release()
	var runs []record.Run
	_, err = r.Measure(ctx, lease, src, repeats, func(run record.Run) error {
		runs = append(runs, run)
		return nil
	})
	return runs, err
}

// CounterSpec benchmarks what the tree holds: commit k of a numbered
// repository (gitopstest.NewRepo) reports k tok/s, read from its
// counter.txt while the benchmark runs.
var CounterSpec = record.Spec{
	Build: []record.Step{{Name: "build", Run: "true", Timeout: time.Minute}},
	Benchmarks: []record.BenchStep{{
		Step:   record.Step{Name: "engine", Run: `sleep 0.05; echo "BenchmarkVerifyStep 1 $(cat counter.txt) tok/s"`, Timeout: time.Minute},
		Format: "gobench",
	}},
	Metrics: []record.Metric{{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher, Primary: true}},
}

// Clock is a runner.Policy clock that moves only when told.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock that reads now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// ReadPids reads the pids a script wrote to path, one a line.
func ReadPids(t testing.TB, path string) []int {
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

// Sleeper is a command line that no other process has: a sleep of 987
// seconds and a fraction, which Running finds.
func Sleeper() string {
	return fmt.Sprintf("sleep 987.%09d", time.Now().UnixNano()%1e9)
}

// Running lists the processes whose command line is exactly cmdline
// (pgrep -x -f).
func Running(t testing.TB, cmdline string) []string {
	t.Helper()
	out, err := exec.Command("pgrep", "-x", "-f", cmdline).Output()
	if err != nil {
		return nil // pgrep exits 1 when nothing matches
	}
	return strings.Fields(string(out))
}
