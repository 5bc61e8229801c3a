package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
)

var (
	targetA = record.Target{Commit: "aaaa"}
	targetB = record.Target{Commit: "bbbb"}
	targetC = record.Target{Commit: "cccc"}
)

// acquire leases a slot for t, failing the test when it cannot.
func acquire(t *testing.T, p *runner.Pool, target record.Target) *runner.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := p.Acquire(ctx, target)
	require.NoError(t, err)
	return l
}

// build materializes the lease's target and marks it built, as a
// successful Measure does.
func build(t *testing.T, l *runner.Lease, target record.Target) {
	t.Helper()
	_, err := l.Materialize(context.Background(), runner.Source{Target: target})
	require.NoError(t, err)
	l.MarkBuilt()
}

// where names a lease's place as host/slot/tree.
type where struct {
	Host       string
	Slot, Tree int
}

func placeOf(l *runner.Lease) where { return where{l.Host().Name(), l.Slot(), l.Tree()} }

func TestPool(t *testing.T) {
	tests := []struct {
		name  string
		hosts []*runnertest.Fake
		run   func(t *testing.T, p *runner.Pool)
	}{
		{
			name:  "size counts slots over hosts",
			hosts: []*runnertest.Fake{{HostName: "a", Slots: 1}, {HostName: "b", Slots: 3}, {HostName: "c"}},
			run: func(t *testing.T, p *runner.Pool) {
				assert.Equal(t, 5, p.Size())
				var names []string
				for _, h := range p.Hosts() {
					names = append(names, h.Name())
				}
				assert.Equal(t, []string{"a", "b", "c"}, names)
			},
		},
		{
			name:  "a lease goes back to the tree that holds its target built",
			hosts: []*runnertest.Fake{{HostName: "a", Slots: 1, Trees: 2}},
			run: func(t *testing.T, p *runner.Pool) {
				l := acquire(t, p, targetA)
				assert.False(t, l.Built())
				build(t, l, targetA)
				first := placeOf(l)
				l.Release()

				l = acquire(t, p, targetB)
				assert.False(t, l.Built())
				assert.NotEqual(t, first, placeOf(l), "a new target takes the unused tree, not A's")
				build(t, l, targetB)
				l.Release()

				l = acquire(t, p, targetA)
				assert.True(t, l.Built())
				assert.Equal(t, first, placeOf(l))
				assert.Equal(t, "fake:a/slots/0/trees/0", l.Workspace().Dir)
				l.Release()

				// A third target evicts the tree used least recently: B's.
				l = acquire(t, p, targetC)
				build(t, l, targetC)
				l.Release()
				assert.True(t, acquireBuilt(t, p, targetA))
				assert.False(t, acquireBuilt(t, p, targetB))
			},
		},
		{
			name:  "the built slot is reused on another host too",
			hosts: []*runnertest.Fake{{HostName: "a"}, {HostName: "b"}},
			run: func(t *testing.T, p *runner.Pool) {
				la := acquire(t, p, targetA)
				lb := acquire(t, p, targetB)
				build(t, la, targetA)
				build(t, lb, targetB)
				wantA, wantB := placeOf(la), placeOf(lb)
				la.Release()
				lb.Release()
				for range 3 {
					lb = acquire(t, p, targetB)
					assert.Equal(t, wantB, placeOf(lb))
					assert.True(t, lb.Built())
					lb.Release()
				}
				la = acquire(t, p, targetA)
				assert.Equal(t, wantA, placeOf(la))
				la.Release()
			},
		},
		{
			name:  "two leases at once get two slots",
			hosts: []*runnertest.Fake{{HostName: "a", Slots: 2}},
			run: func(t *testing.T, p *runner.Pool) {
				la := acquire(t, p, targetA)
				lb := acquire(t, p, targetB)
				assert.NotEqual(t, la.Slot(), lb.Slot())
				la.Release()
				lb.Release()
			},
		},
		{
			name:  "concurrent leases spread over hosts",
			hosts: []*runnertest.Fake{{HostName: "a", Slots: 2}, {HostName: "b", Slots: 2}},
			run: func(t *testing.T, p *runner.Pool) {
				la := acquire(t, p, targetA)
				lb := acquire(t, p, targetB)
				assert.Equal(t, "a", la.Host().Name())
				assert.Equal(t, "b", lb.Host().Name(), "the second lease goes to the idle host, not hosts[0]'s second slot")
				la.Release()
				lb.Release()
			},
		},
		{
			name:  "a busy target's slot is not waited for when another is free",
			hosts: []*runnertest.Fake{{HostName: "a", Slots: 2}},
			run: func(t *testing.T, p *runner.Pool) {
				l := acquire(t, p, targetA)
				c := acquire(t, p, targetC)
				build(t, l, targetA)
				l.Release()
				c.Release()
				l = acquire(t, p, targetB)
				require.Equal(t, 0, l.Slot(), "B takes the slot used least recently, A's")
				other := acquire(t, p, targetA)
				assert.False(t, other.Built(), "A's slot is busy with B: A is built again elsewhere")
				assert.NotEqual(t, l.Slot(), other.Slot())
				other.Release()
				l.Release()
			},
		},
		{
			name:  "a lease waits while every slot is busy",
			hosts: []*runnertest.Fake{{HostName: "a"}},
			run: func(t *testing.T, p *runner.Pool) {
				l := acquire(t, p, targetA)
				got := make(chan *runner.Lease)
				go func() {
					w, err := p.Acquire(context.Background(), targetB)
					if err != nil {
						close(got)
						return
					}
					got <- w
				}()
				select {
				case <-got:
					t.Fatal("a second lease was given while the only slot was busy")
				case <-time.After(50 * time.Millisecond):
				}
				l.Release()
				w, ok := <-got
				require.True(t, ok)
				assert.Equal(t, 0, w.Slot())
				w.Release()
			},
		},
		{
			name:  "ctx ends the wait",
			hosts: []*runnertest.Fake{{HostName: "a"}},
			run: func(t *testing.T, p *runner.Pool) {
				l := acquire(t, p, targetA)
				defer l.Release()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
				defer cancel()
				_, err := p.Acquire(ctx, targetB)
				require.ErrorIs(t, err, context.DeadlineExceeded)

				ctx, cancel = context.WithCancel(context.Background())
				cancel()
				_, err = p.Acquire(ctx, targetB)
				require.ErrorIs(t, err, context.Canceled)
			},
		},
		{
			name:  "a tree left unbuilt is not reused as built",
			hosts: []*runnertest.Fake{{HostName: "a"}},
			run: func(t *testing.T, p *runner.Pool) {
				l := acquire(t, p, targetA)
				build(t, l, targetA)
				l.Release()
				l = acquire(t, p, targetA)
				_, err := l.Materialize(context.Background(), runner.Source{Target: targetA})
				require.NoError(t, err)
				l.Release() // the build failed: no markBuilt
				assert.False(t, acquireBuilt(t, p, targetA))
			},
		},
		{
			name:  "targets that differ in their environment share a tree",
			hosts: []*runnertest.Fake{{HostName: "a"}},
			run: func(t *testing.T, p *runner.Pool) {
				l := acquire(t, p, targetA)
				build(t, l, targetA)
				l.Release()
				withEnv := targetA
				withEnv.Env = map[string]string{"NCCL_PROTO": "LL"}
				assert.True(t, acquireBuilt(t, p, withEnv))
			},
		},
		{
			name:  "a lease materializes only its own target",
			hosts: []*runnertest.Fake{{HostName: "a", Default: &runnertest.FakeCommit{}}},
			run: func(t *testing.T, p *runner.Pool) {
				l := acquire(t, p, targetA)
				defer l.Release()
				_, err := l.Materialize(context.Background(), runner.Source{Target: targetB})
				require.ErrorContains(t, err, "taken for another target")
			},
		},
		{
			name:  "releasing twice is harmless",
			hosts: []*runnertest.Fake{{HostName: "a"}},
			run: func(t *testing.T, p *runner.Pool) {
				l := acquire(t, p, targetA)
				l.Release()
				l.Release()
				la := acquire(t, p, targetA)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
				defer cancel()
				_, err := p.Acquire(ctx, targetB)
				require.ErrorIs(t, err, context.DeadlineExceeded, "the slot was freed once only")
				la.Release()
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hosts []runner.Host
			for _, h := range tt.hosts {
				if h.Default == nil && h.Commits == nil {
					h.Default = &runnertest.FakeCommit{}
				}
				hosts = append(hosts, h)
			}
			p, err := runner.NewPool(hosts...)
			require.NoError(t, err)
			tt.run(t, p)
		})
	}
}

// acquireBuilt leases a slot for target and reports whether it held the
// target built.
func acquireBuilt(t *testing.T, p *runner.Pool, target record.Target) bool {
	t.Helper()
	l := acquire(t, p, target)
	defer l.Release()
	return l.Built()
}

func TestNewPoolRejects(t *testing.T) {
	tests := []struct {
		name  string
		hosts []runner.Host
		want  string
	}{
		{"no hosts", nil, "no hosts"},
		{"two hosts of one name", []runner.Host{&runnertest.Fake{HostName: "a"}, &runnertest.Fake{HostName: "a"}}, `two hosts are named "a"`},
		{"a host without slots", []runner.Host{shaped{&runnertest.Fake{HostName: "a"}, runner.Layout{Slots: 0, Trees: 1}}}, "host a has 0 slots"},
		{"a host without trees", []runner.Host{shaped{&runnertest.Fake{HostName: "a"}, runner.Layout{Slots: 1, Trees: 0}}}, "host a keeps 0 trees"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runner.NewPool(tt.hosts...)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// shaped is a host with a layout of the test's choosing.
type shaped struct {
	*runnertest.Fake
	layout runner.Layout
}

func (s shaped) Layout() runner.Layout { return s.layout }

// TestMeasureOnTwoSlotsAtOnce measures two targets through two leases of
// one pool; both benchmarks are in flight together.
func TestMeasureOnTwoSlotsAtOnce(t *testing.T) {
	hold := make(chan struct{})
	host := &runnertest.Fake{HostName: "a", Slots: 2, Hold: hold, Default: &runnertest.FakeCommit{Outputs: []string{goBench(1, 1)}}}
	p, err := runner.NewPool(host)
	require.NoError(t, err)
	r := &runner.Runner{Spec: testSpec}
	errs := make(chan error, 2)
	for _, target := range []record.Target{targetA, targetB} {
		go func() {
			_, err := runnertest.Measure(t, context.Background(), p, r, runner.Source{Target: target}, 1)
			errs <- err
		}()
	}
	require.Eventually(t, func() bool { return host.MaxConcurrent() == 2 }, 5*time.Second, time.Millisecond)
	close(hold)
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	slots := map[int]bool{}
	for _, tr := range host.Materialized() {
		slots[tr.Slot] = true
	}
	assert.Len(t, slots, 2)
}

func TestPoolAcquireOn(t *testing.T) {
	a := &runnertest.Fake{HostName: "a", Default: &runnertest.FakeCommit{}}
	b := &runnertest.Fake{HostName: "b", Slots: 2, Default: &runnertest.FakeCommit{}}
	p, err := runner.NewPool(a, b)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "b"}, p.Slots())
	ctx := context.Background()

	// A target built on a goes to b when b is asked for, to the slot of b
	// whose tree holds it built once it is built there.
	l, err := p.AcquireOn(ctx, targetA, "a")
	require.NoError(t, err)
	build(t, l, targetA)
	l.Release()
	l, err = p.AcquireOn(ctx, targetA, "b")
	require.NoError(t, err)
	assert.Equal(t, "b", l.Host().Name())
	assert.False(t, l.Built())
	build(t, l, targetA)
	slot := l.Slot()
	l.Release()
	l, err = p.AcquireOn(ctx, targetA, "b")
	require.NoError(t, err)
	assert.True(t, l.Built())
	assert.Equal(t, slot, l.Slot())

	// While both slots of b are busy, a request for b waits for one, and
	// a request for any host gets a.
	other, err := p.AcquireOn(ctx, targetB, "b")
	require.NoError(t, err)
	got := make(chan *runner.Lease)
	go func() {
		w, err := p.AcquireOn(ctx, targetC, "b")
		assert.NoError(t, err)
		got <- w
	}()
	anyHost := acquire(t, p, targetC)
	assert.Equal(t, "a", anyHost.Host().Name())
	l.Release()
	w := <-got
	assert.Equal(t, "b", w.Host().Name())
	for _, x := range []*runner.Lease{other, anyHost, w} {
		x.Release()
	}

	_, err = p.AcquireOn(ctx, targetA, "nosuch")
	assert.ErrorContains(t, err, `no host named "nosuch"`)
}
