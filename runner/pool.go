package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/perfbot/perfbot/record"
)

// Pool hands out the slots of its hosts as leases: a lease is one slot of
// one host, held by one measurement until it is released. Its size, the
// number of leases it can give at once, is the sum of its hosts' slots;
// that is how many targets can be measured in parallel.
//
// The pool remembers which target each tree of each slot holds built, so
// a lease for a target goes back to the slot where it is built whenever
// that slot is free. Otherwise a lease goes to the host with the fewest
// busy slots (concurrent requests spread over the hosts), to its slot
// that was used least recently, and there to the tree used least
// recently, which is materialized anew. A pool serves one Spec: what it
// remembers as built was built by the one Runner measuring on it, and
// another process on the same host may have changed the tree since, so
// the Runner verifies a built tree before it trusts it. A host that keeps
// failing leaves the pool for a while (see Policy). Pool is safe for
// concurrent use.
type Pool struct {
	mu       sync.Mutex
	hosts    []*poolHost
	size     int
	clock    uint64        // ticks at every release, for least-recently-used
	wake     chan struct{} // closed and replaced at every release and change of health
	policy   Policy
	watchers map[int]func(HostState)
	watchN   int
}

type poolHost struct {
	host   Host
	slots  []*poolSlot
	busy   int
	health health
}

type poolSlot struct {
	n     int
	busy  bool
	used  uint64
	trees []*poolTree
}

// poolTree is one tree of a slot. key is the tree key of the target it
// holds built, "" while it holds nothing known (never materialized, being
// materialized, or left by a failed build).
type poolTree struct {
	n    int
	key  string
	ws   Workspace
	used uint64
}

// NewPool returns a pool over hosts, which must have distinct names and
// at least one slot and one tree each.
func NewPool(hosts ...Host) (*Pool, error) {
	if len(hosts) == 0 {
		return nil, errors.New("host pool: no hosts")
	}
	p := &Pool{wake: make(chan struct{})}
	p.SetPolicy(Policy{})
	names := map[string]bool{}
	for _, h := range hosts {
		lay := h.Layout()
		switch {
		case names[h.Name()]:
			return nil, fmt.Errorf("host pool: two hosts are named %q", h.Name())
		case lay.Slots < 1:
			return nil, fmt.Errorf("host pool: host %s has %d slots, want at least 1", h.Name(), lay.Slots)
		case lay.Trees < 1:
			return nil, fmt.Errorf("host pool: host %s keeps %d trees per slot, want at least 1", h.Name(), lay.Trees)
		}
		names[h.Name()] = true
		ph := &poolHost{host: h}
		for s := range lay.Slots {
			slot := &poolSlot{n: s}
			for k := range lay.Trees {
				slot.trees = append(slot.trees, &poolTree{n: k})
			}
			ph.slots = append(ph.slots, slot)
		}
		p.hosts = append(p.hosts, ph)
		p.size += lay.Slots
	}
	return p, nil
}

// Size is the number of leases the pool gives at once: the slots of all
// its hosts.
func (p *Pool) Size() int { return p.size }

// Hosts returns the pool's hosts in the order they were given.
func (p *Pool) Hosts() []Host {
	hs := make([]Host, len(p.hosts))
	for i, h := range p.hosts {
		hs[i] = h.host
	}
	return hs
}

// Acquire leases a slot for measuring t, waiting while every slot is
// busy. It returns ctx's error when ctx ends first, and a
// *record.InfraError wrapping ErrOutOfPool, naming every host and why,
// when every host left the pool. The lease's tree is locked on its host
// (Host.Lock), so that another perfbot process sharing the host's workdir
// never measures in it at the same time; a tree that stays locked by
// another process is the host's *record.InfraError. The lease must be
// released.
func (p *Pool) Acquire(ctx context.Context, t record.Target) (*Lease, error) {
	return p.acquire(ctx, t, nil)
}

// AcquireOn is Acquire on the named host: it leases a slot of that host
// only, the one whose tree holds t built when that slot is free, waiting
// while all its slots are busy. A search that compares runs of one host
// places them so (the ends of a bisection on every host that measures a
// probe). A name the pool does not hold is an error, and so is a host
// that left the pool: a *record.InfraError wrapping ErrOutOfPool.
func (p *Pool) AcquireOn(ctx context.Context, t record.Target, host string) (*Lease, error) {
	for _, h := range p.hosts {
		if h.host.Name() == host {
			return p.acquire(ctx, t, h)
		}
	}
	return nil, fmt.Errorf("host pool: no host named %q", host)
}

// Slots returns the name of each host once per slot, in the order the
// hosts were given: where Size leases can be placed at once.
func (p *Pool) Slots() []string {
	var out []string
	for _, h := range p.hosts {
		for range h.slots {
			out = append(out, h.host.Name())
		}
	}
	return out
}

// acquire leases a slot for t, of host only when it is set.
func (p *Pool) acquire(ctx context.Context, t record.Target, only *poolHost) (*Lease, error) {
	key := treeKey(t)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p.mu.Lock()
		l := p.take(key, only)
		wake := p.wake
		var gone error
		if l == nil {
			hosts := p.hosts
			if only != nil {
				hosts = []*poolHost{only}
			}
			gone = p.unavailable(hosts)
		}
		p.mu.Unlock()
		if gone != nil {
			return nil, gone
		}
		if l != nil {
			unlock, err := l.host.host.Lock(ctx, l.slot.n, l.tree.n)
			if err != nil {
				if ctx.Err() == nil {
					l.Report(err)
				}
				l.Release()
				return nil, err
			}
			l.unlock = unlock
			return l, nil
		}
		select {
		case <-ctx.Done():
		case <-wake:
		}
	}
}

// take leases a free slot for key, of host only when it is set, or
// returns nil when none is free. The caller holds p.mu.
func (p *Pool) take(key string, only *poolHost) *Lease {
	hosts := p.hosts
	if only != nil {
		hosts = []*poolHost{only}
	}
	for _, h := range hosts {
		if !p.usable(h) {
			continue
		}
		for _, s := range h.slots {
			if s.busy {
				continue
			}
			for _, t := range s.trees {
				if t.key == key {
					return p.lease(h, s, t, key)
				}
			}
		}
	}
	var host *poolHost
	for _, h := range hosts {
		if !p.usable(h) || h.busy == len(h.slots) {
			continue
		}
		if host == nil || h.busy < host.busy || (h.busy == host.busy && h.health.failures < host.health.failures) {
			host = h
		}
	}
	if host == nil {
		return nil
	}
	var slot *poolSlot
	for _, s := range host.slots {
		if !s.busy && (slot == nil || s.used < slot.used) {
			slot = s
		}
	}
	tree := slot.trees[0]
	for _, t := range slot.trees[1:] {
		if t.used < tree.used {
			tree = t
		}
	}
	return p.lease(host, slot, tree, key)
}

func (p *Pool) lease(h *poolHost, s *poolSlot, t *poolTree, key string) *Lease {
	s.busy = true
	h.busy++
	trial := h.health.out
	h.leased()
	return &Lease{pool: p, host: h, slot: s, tree: t, key: key, trial: trial}
}

// Lease is one slot of one host, held for measuring one target, with the
// tree of the slot the target is (or is to be) built in. Only a Runner
// materializes and builds in it, and only the Runner says the tree holds
// the target built. Its methods are for the one goroutine that holds it.
type Lease struct {
	pool     *Pool
	host     *poolHost
	slot     *poolSlot
	tree     *poolTree
	key      string
	unlock   func() // the host's lock of the tree
	released bool
	trial    bool // the host's one lease while it is out of the pool
	reported bool
}

// Report tells the pool how the lease's measurement went for its host:
// err nil when the host worked (whatever the target did), else the
// failure. Failures wrapping ErrHostDown count against the host (see
// Policy); a Runner reports every measurement it makes. Only the first
// report of a lease counts.
func (l *Lease) Report(err error) {
	l.pool.mu.Lock()
	if l.reported || l.released {
		l.pool.mu.Unlock()
		return
	}
	l.reported = true
	l.pool.mu.Unlock()
	l.pool.reportHost(l.host, err, l.trial)
}

// Host is the leased host.
func (l *Lease) Host() Host { return l.host.host }

// Slot is the number of the leased slot on its host.
func (l *Lease) Slot() int { return l.slot.n }

// Tree is the number of the slot's tree the target goes in.
func (l *Lease) Tree() int { return l.tree.n }

// Built reports whether the lease's tree holds the target built, so that
// only its benchmarks need to run.
func (l *Lease) Built() bool {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	return l.tree.key == l.key
}

// Workspace is where the tree lies; zero until it was materialized.
func (l *Lease) Workspace() Workspace {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	return l.tree.ws
}

// materialize makes the lease's tree a clean copy of src, which must be
// the target the lease was taken for. The tree counts as built only once
// markBuilt says so.
func (l *Lease) materialize(ctx context.Context, src Source) (Workspace, error) {
	if k := treeKey(src.Target); k != l.key {
		return Workspace{}, fmt.Errorf("materialize %s: the lease was taken for another target", src.Target.Short())
	}
	l.forget()
	ws, err := l.host.host.Materialize(ctx, l.slot.n, l.tree.n, src)
	if err != nil {
		return Workspace{}, err
	}
	l.pool.mu.Lock()
	l.tree.ws = ws
	l.pool.mu.Unlock()
	return ws, nil
}

// verify checks that the lease's tree still holds src as it was
// materialized.
func (l *Lease) verify(ctx context.Context, ws Workspace, src Source) error {
	return l.host.host.Verify(ctx, l.slot.n, l.tree.n, ws, src)
}

// markBuilt records that the tree holds the lease's target built.
func (l *Lease) markBuilt() {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	l.tree.key = l.key
}

// forget records that the tree holds nothing known: a failed build or
// benchmark may have left anything behind.
func (l *Lease) forget() {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	l.tree.key = ""
}

// Release gives the slot back to the pool and the tree's lock back to its
// host. Releasing twice is harmless.
func (l *Lease) Release() {
	p := l.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.released {
		return
	}
	l.released = true
	if l.unlock != nil {
		l.unlock()
	}
	p.clock++
	l.slot.busy, l.slot.used, l.tree.used = false, p.clock, p.clock
	l.host.busy--
	if l.trial && !l.reported {
		l.host.health.trial = false
	}
	p.wakeLocked()
}

// wakeLocked wakes every Acquire that waits. The caller holds p.mu.
func (p *Pool) wakeLocked() {
	close(p.wake)
	p.wake = make(chan struct{})
}
