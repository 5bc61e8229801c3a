package runner_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// healthRig is a pool over fake hosts that all run every target, with a
// clock, and the host states its watcher heard.
type healthRig struct {
	pool   *runner.Pool
	hosts  map[string]*runnertest.Fake
	clock  *runnertest.Clock
	mu     sync.Mutex
	events []runner.HostState
}

func newHealthRig(t *testing.T, names ...string) *healthRig {
	t.Helper()
	rig := &healthRig{hosts: map[string]*runnertest.Fake{}, clock: runnertest.NewClock(time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC))}
	var hosts []runner.Host
	for _, n := range names {
		f := &runnertest.Fake{HostName: n, Default: &runnertest.FakeCommit{Outputs: []string{goBench(100, 50)}}}
		rig.hosts[n] = f
		hosts = append(hosts, f)
	}
	pool, err := runner.NewPool(hosts...)
	require.NoError(t, err)
	pool.SetPolicy(runner.Policy{MaxFailures: 3, Cooldown: 10 * time.Minute, Now: rig.clock.Now})
	t.Cleanup(pool.Watch(func(s runner.HostState) {
		rig.mu.Lock()
		defer rig.mu.Unlock()
		rig.events = append(rig.events, s)
	}))
	rig.pool = pool
	return rig
}

// measure makes one run of target on a lease of host ("" for any) and
// returns the host that ran it.
func (rig *healthRig) measure(t *testing.T, target record.Target, host string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var lease *runner.Lease
	var err error
	if host == "" {
		lease, err = rig.pool.Acquire(ctx, target)
	} else {
		lease, err = rig.pool.AcquireOn(ctx, target, host)
	}
	if err != nil {
		return "", err
	}
	defer lease.Release()
	_, err = (&runner.Runner{Spec: testSpec}).Measure(ctx, lease, runner.Source{Target: target}, 1, func(record.Run) error { return nil })
	return lease.Host().Name(), err
}

func (rig *healthRig) state(t *testing.T, name string) runner.HostState {
	t.Helper()
	for _, s := range rig.pool.States() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no host %s", name)
	return runner.HostState{}
}

func (rig *healthRig) heard() []string {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	var out []string
	for _, s := range rig.events {
		what := "back"
		if s.Out {
			what = "out"
		}
		out = append(out, s.Name+" "+what)
	}
	return out
}

var errUnreachable = errors.New("dial tcp 10.0.0.5:22: connect: no route to host")

func TestPoolHostHealth(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, rig *healthRig)
	}{
		{
			name: "a host that is down leaves after three failures and the other carries on",
			run: func(t *testing.T, rig *healthRig) {
				rig.hosts["a"].SetDown(errUnreachable)
				for i := range 3 {
					_, err := rig.measure(t, targetA, "a")
					require.Error(t, err)
					assert.True(t, errors.Is(err, runner.ErrHostDown), "%v", err)
					assert.Equal(t, i < 2, !rig.state(t, "a").Out, "after %d failures", i+1)
				}
				st := rig.state(t, "a")
				assert.Equal(t, 3, st.Failures)
				assert.Contains(t, st.Error, "no route to host")
				assert.Equal(t, rig.clock.Now(), st.Left)
				assert.Equal(t, rig.clock.Now().Add(10*time.Minute), st.Retry)
				assert.Equal(t, []string{"a out"}, rig.heard())

				// No lease of a: named, it fails at once; unnamed, b runs.
				_, err := rig.measure(t, targetA, "a")
				require.ErrorIs(t, err, runner.ErrOutOfPool)
				assert.True(t, record.IsInfra(err))
				assert.Contains(t, err.Error(), "host a: lease a slot")
				assert.Contains(t, err.Error(), "no route to host")
				for range 4 {
					host, err := rig.measure(t, targetB, "")
					require.NoError(t, err)
					assert.Equal(t, "b", host)
				}
				assert.Equal(t, 0, rig.hosts["a"].BenchRuns(targetB.Commit))
				assert.False(t, rig.state(t, "b").Out)
			},
		},
		{
			name: "failures that are not the host's keep it in the pool",
			run: func(t *testing.T, rig *healthRig) {
				rig.hosts["a"].Commits = map[string]runnertest.FakeCommit{targetA.Commit: {InfraErr: errors.New("git checkout: index.lock exists")}}
				for range 5 {
					_, err := rig.measure(t, targetA, "a")
					require.True(t, record.IsInfra(err), "%v", err)
				}
				assert.Equal(t, runner.HostState{Name: "a"}, rig.state(t, "a"))
				assert.Empty(t, rig.heard())
			},
		},
		{
			name: "a lease on which the host worked ends the row",
			run: func(t *testing.T, rig *healthRig) {
				a := rig.hosts["a"]
				for range 2 {
					a.SetDown(errUnreachable)
					for range 2 {
						_, err := rig.measure(t, targetA, "a")
						require.Error(t, err)
					}
					a.SetDown(nil)
					_, err := rig.measure(t, targetA, "a")
					require.NoError(t, err)
					assert.Equal(t, runner.HostState{Name: "a"}, rig.state(t, "a"))
				}
				a.Commits = map[string]runnertest.FakeCommit{targetB.Commit: {BuildFails: true}}
				a.SetDown(errUnreachable)
				_, _ = rig.measure(t, targetA, "a")
				a.SetDown(nil)
				_, err := rig.measure(t, targetB, "a")
				require.NoError(t, err, "a broken target is recorded, not an error")
				assert.Zero(t, rig.state(t, "a").Failures, "the host ran the broken build: it worked")
			},
		},
		{
			name: "every host out: Acquire names each and why",
			run: func(t *testing.T, rig *healthRig) {
				rig.hosts["a"].SetDown(errUnreachable)
				rig.hosts["b"].SetDown(errors.New("ssh: handshake failed: ssh: unable to authenticate"))
				for range 6 {
					_, err := rig.measure(t, targetA, "")
					require.ErrorIs(t, err, runner.ErrHostDown)
				}
				_, err := rig.measure(t, targetA, "")
				require.ErrorIs(t, err, runner.ErrOutOfPool)
				assert.True(t, record.IsInfra(err))
				assert.Contains(t, err.Error(), "no host is left in the pool")
				assert.Contains(t, err.Error(), "host a left the pool at 18:00:00 after 3 failures in a row (collect host facts: dial tcp 10.0.0.5:22: connect: no route")
				assert.Contains(t, err.Error(), "host b left the pool at 18:00:00 after 3 failures in a row (collect host facts: ssh: handshake failed")
				assert.ElementsMatch(t, []string{"a out", "b out"}, rig.heard())
			},
		},
		{
			name: "after the cool-down one lease tries the host: it comes back",
			run: func(t *testing.T, rig *healthRig) {
				a := rig.hosts["a"]
				a.SetDown(errUnreachable)
				for range 3 {
					_, _ = rig.measure(t, targetA, "a")
				}
				a.SetDown(nil)
				rig.clock.Add(9 * time.Minute)
				_, err := rig.measure(t, targetA, "a")
				require.ErrorIs(t, err, runner.ErrOutOfPool, "still cooling down")
				rig.clock.Add(time.Minute)
				host, err := rig.measure(t, targetA, "a")
				require.NoError(t, err)
				assert.Equal(t, "a", host)
				assert.Equal(t, runner.HostState{Name: "a"}, rig.state(t, "a"))
				assert.Equal(t, []string{"a out", "a back"}, rig.heard())
			},
		},
		{
			name: "a trial that fails puts the host out again at once",
			run: func(t *testing.T, rig *healthRig) {
				rig.hosts["a"].SetDown(errUnreachable)
				for range 3 {
					_, _ = rig.measure(t, targetA, "a")
				}
				rig.clock.Add(10 * time.Minute)
				_, err := rig.measure(t, targetA, "a")
				require.ErrorIs(t, err, runner.ErrHostDown, "the trial ran")
				st := rig.state(t, "a")
				assert.True(t, st.Out)
				assert.Equal(t, 4, st.Failures)
				assert.Equal(t, rig.clock.Now().Add(10*time.Minute), st.Retry)
				_, err = rig.measure(t, targetA, "a")
				require.ErrorIs(t, err, runner.ErrOutOfPool)
			},
		},
		{
			name: "Retry makes an out host due at once; a trial given back unused leaves it due",
			run: func(t *testing.T, rig *healthRig) {
				rig.hosts["a"].SetDown(errUnreachable)
				for range 3 {
					_, _ = rig.measure(t, targetA, "a")
				}
				rig.pool.Retry()
				ctx := context.Background()
				l, err := rig.pool.AcquireOn(ctx, targetA, "a")
				require.NoError(t, err, "due for its trial")
				l.Release()
				l, err = rig.pool.AcquireOn(ctx, targetA, "a")
				require.NoError(t, err, "the trial was not used")
				l.Report(nil)
				l.Release()
				assert.Equal(t, runner.HostState{Name: "a"}, rig.state(t, "a"))
			},
		},
		{
			name: "while a host is on trial, a caller waits for the outcome",
			run: func(t *testing.T, rig *healthRig) {
				rig.hosts["a"].SetDown(errUnreachable)
				for range 3 {
					_, _ = rig.measure(t, targetA, "a")
				}
				rig.pool.Retry()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				trial, err := rig.pool.AcquireOn(ctx, targetA, "a")
				require.NoError(t, err)
				got := make(chan error, 1)
				go func() {
					l, err := rig.pool.AcquireOn(ctx, targetB, "a")
					if err == nil {
						l.Release()
					}
					got <- err
				}()
				trial.Report(runner.HostDown(errUnreachable))
				trial.Release()
				assert.ErrorIs(t, <-got, runner.ErrOutOfPool, "the failed trial answers the waiter")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newHealthRig(t, "a", "b"))
		})
	}
}

func TestHostStateString(t *testing.T) {
	at := time.Date(2026, 12, 1, 18, 50, 1, 0, time.UTC)
	tests := []struct {
		name  string
		state runner.HostState
		want  string
	}{
		{"in", runner.HostState{Name: "gpu1"}, "host gpu1 is in the pool"},
		{"failing", runner.HostState{Name: "gpu1", Failures: 2, Error: "connect: refused"}, "host gpu1 is in the pool, 2 failures in a row (connect: refused)"},
		{"out", runner.HostState{Name: "gpu1", Failures: 3, Out: true, Left: at, Retry: at.Add(10 * time.Minute), Error: "connect: refused"},
			"host gpu1 left the pool at 18:50:01 after 3 failures in a row (connect: refused); a lease tries it again from 19:00:01"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.state.String())
		})
	}
}
