package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
)

// Oracle is the one door through which everything is measured. It answers
// "give me at least n samples of metric M for target T": it looks in the
// store first, runs only what is missing on a lease of the host pool, and
// records every run before it returns.
//
// The pool decides where, unless the caller names the host (EnsureOn): a
// target measured again goes back to the slot whose tree holds it built,
// and then only its benchmarks run. Concurrent requests run at once on
// different leases, up to Parallel of them: for different targets, and
// for one target on different hosts; requests for one target on one host
// (or on any) take turns. Every run records the host that ran it.
type Oracle struct {
	store  *store.DB
	pool   *runner.Pool
	runner *runner.Runner
	spec   string
	log    *slog.Logger

	mu      sync.Mutex
	onHost  func(runner.HostState) // hears of a host that left the pool or came back
	patches map[string]*gitops.Patch
	pending map[string]*sync.Mutex // one measurement at a time per target
	runs    int
	builds  int
	stop    bool
}

// Stop makes every later measurement fail with ErrStopping; the ones
// under way finish and are recorded.
func (o *Oracle) Stop() {
	o.mu.Lock()
	o.stop = true
	o.mu.Unlock()
}

// resume undoes Stop: a Bot served again measures again.
func (o *Oracle) resume() {
	o.mu.Lock()
	o.stop = false
	o.mu.Unlock()
}

func (o *Oracle) stopping() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stop
}

// OracleOptions configures NewOracle.
type OracleOptions struct {
	Logger *slog.Logger
}

// NewOracle returns an Oracle that records in db and measures with r on
// the leases of pool.
func NewOracle(db *store.DB, pool *runner.Pool, r *runner.Runner, opts OracleOptions) *Oracle {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	o := &Oracle{
		store:   db,
		pool:    pool,
		runner:  r,
		spec:    r.Spec.Hash(),
		log:     opts.Logger,
		patches: map[string]*gitops.Patch{},
		pending: map[string]*sync.Mutex{},
	}
	pool.Watch(o.hostChanged)
	return o
}

// hostChanged tells whoever watches (the running job's trace) that a host
// left the pool or came back; with no watcher, the log.
func (o *Oracle) hostChanged(s runner.HostState) {
	o.mu.Lock()
	fn := o.onHost
	o.mu.Unlock()
	if fn == nil {
		o.log.Warn(s.String())
		return
	}
	fn(s)
}

// watchHosts makes fn hear of the hosts that leave the pool or come back
// until restore is called, which gives them back to the watcher before.
func (o *Oracle) watchHosts(fn func(runner.HostState)) (restore func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	prev := o.onHost
	o.onHost = fn
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.onHost = prev
	}
}

// HostStates is the health of every host of the pool (see runner.Policy).
func (o *Oracle) HostStates() []runner.HostState { return o.pool.States() }

// Parallel is the number of targets the Oracle measures at once: the
// size of its host pool.
func (o *Oracle) Parallel() int { return o.pool.Size() }

// Hosts names the host of each slot of the pool (a host of two slots
// twice): where Parallel measurements can be placed at once with
// EnsureOn.
func (o *Oracle) Hosts() []string { return o.pool.Slots() }

// SpecHash is the hash of the spec every measurement is keyed by.
func (o *Oracle) SpecHash() string { return o.spec }

// AddPatch registers the diff that targets with hunks refer to by Patch id.
func (o *Oracle) AddPatch(p *gitops.Patch) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.patches[p.ID] = p
}

// Counts returns the benchmark runs and builds this Oracle executed.
func (o *Oracle) Counts() (runs, builds int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.runs, o.builds
}

// Values returns every recorded value of metric for t, measuring until
// there are at least n ok runs. A target that fails to build or to
// benchmark is broken: the error wraps record.ErrBroken and the failure is
// recorded, so it is never built again for the same spec.
func (o *Oracle) Values(ctx context.Context, t record.Target, metric string, n int) ([]float64, error) {
	entry, err := o.Recorded(ctx, t, "", n)
	return entry.Values(metric), err
}

// Ensure makes sure t has at least n ok runs recorded, measuring the
// missing ones wherever the pool has a slot.
func (o *Oracle) Ensure(ctx context.Context, t record.Target, n int) error {
	_, err := o.ensure(ctx, t, "", n, nil)
	return err
}

// EnsureEach is Ensure that calls each after every run it records, from
// the goroutine that called it: a caller that measures many runs at once
// can say so run by run.
func (o *Oracle) EnsureEach(ctx context.Context, t record.Target, n int, each func(record.Run)) error {
	_, err := o.ensure(ctx, t, "", n, each)
	return err
}

// EnsureOn makes sure host has at least n ok runs of t recorded,
// measuring the missing ones on a slot of host. Calls for one target on
// different hosts run at once.
func (o *Oracle) EnsureOn(ctx context.Context, t record.Target, host string, n int) error {
	if host == "" {
		return fmt.Errorf("measure %s: no host named", t.Short())
	}
	_, err := o.ensure(ctx, t, host, n, nil)
	return err
}

// Recorded is Ensure, or EnsureOn when host is named, that returns t's
// recorded runs as the store's cache holds them: read when nothing was
// missing, or as the transaction that recorded the last missing run left
// them, without reading them back.
func (o *Oracle) Recorded(ctx context.Context, t record.Target, host string, n int) (store.CacheEntry, error) {
	return o.ensure(ctx, t, host, n, nil)
}

// ensure measures t until it has n ok runs, of host when host is set.
// Where no host is named, a measurement that its host failed (the host
// down: unreachable, its connection dropped) goes on on another lease
// while another host is in the pool: the other hosts carry on, and the
// failing one leaves the pool after its failures in a row. A named host's
// failure, and the last host's, is the caller's.
func (o *Oracle) ensure(ctx context.Context, t record.Target, host string, n int, each func(record.Run)) (store.CacheEntry, error) {
	lock := o.targetLock(t.Key() + "\x00" + host)
	lock.Lock()
	defer lock.Unlock()
	for {
		entry, err := o.ensureOnce(ctx, t, host, n, each)
		var ie *record.InfraError
		if host != "" || !errors.Is(err, runner.ErrHostDown) || ctx.Err() != nil ||
			!errors.As(err, &ie) || !o.pool.HasOther(ie.Host) {
			return entry, err
		}
		o.log.Info("host failed; measuring on another lease", "target", t.Short(), "err", err)
	}
}

// ensureOnce measures what t lacks of n ok runs on one lease and returns
// t's cache entry with them. The caller holds the target's lock.
func (o *Oracle) ensureOnce(ctx context.Context, t record.Target, host string, n int, each func(record.Run)) (store.CacheEntry, error) {
	key := t.Key()
	entry, err := o.store.Cached(o.spec, key)
	if err != nil {
		return entry, fmt.Errorf("read cache of %s: %w", t.Short(), err)
	}
	if len(entry.Failed) > 0 && len(entry.OK) == 0 {
		return entry, o.brokenError(t, entry.Failed[len(entry.Failed)-1].ID)
	}
	have := len(entry.OK)
	if host != "" {
		if have, err = o.runsOn(entry, host); err != nil {
			return entry, err
		}
	}
	missing := n - have
	if missing <= 0 {
		return entry, nil
	}
	if err := ctx.Err(); err != nil {
		return entry, err
	}
	if o.stopping() {
		return entry, ErrStopping
	}
	last, err := o.measure(ctx, t, host, missing, each)
	if err != nil {
		return entry, err
	}
	if last != nil {
		return *last, nil
	}
	if entry, err = o.store.Cached(o.spec, key); err != nil {
		return entry, fmt.Errorf("read cache of %s: %w", t.Short(), err)
	}
	return entry, nil
}

// runsOn counts the ok runs of entry that host ran.
func (o *Oracle) runsOn(entry store.CacheEntry, host string) (int, error) {
	n := 0
	for _, r := range entry.OK {
		h, err := o.hostOf(r)
		if err != nil {
			return 0, err
		}
		if h == host {
			n++
		}
	}
	return n, nil
}

// hostOf is the host that ran r: the cache's, or, for a run cached before
// the cache recorded hosts, the run record's.
func (o *Oracle) hostOf(r store.RunRef) (string, error) {
	if r.Host != "" {
		return r.Host, nil
	}
	run, ok, err := o.store.Run(r.ID)
	switch {
	case err != nil:
		return "", fmt.Errorf("read run %d: %w", r.ID, err)
	case !ok:
		return "", fmt.Errorf("read run %d: the store holds no such run", r.ID)
	}
	return run.Host, nil
}

func (o *Oracle) brokenError(t record.Target, runID uint64) error {
	r, ok, err := o.store.Run(runID)
	if err != nil || !ok {
		return fmt.Errorf("%s: %w", t.Short(), record.ErrBroken)
	}
	first, _, _ := strings.Cut(r.Error, "\n")
	return fmt.Errorf("%s: %s: %s: %w", t.Short(), r.Status, first, record.ErrBroken)
}

func (o *Oracle) targetLock(key string) *sync.Mutex {
	o.mu.Lock()
	defer o.mu.Unlock()
	l, ok := o.pending[key]
	if !ok {
		l = &sync.Mutex{}
		o.pending[key] = l
	}
	return l
}

// measure runs missing more benchmark invocations of t on a lease of the
// pool (of host, when it is set), building first unless the lease's tree
// holds t built. It returns t's cache entry as the last run's record left
// it, nil when it recorded none.
func (o *Oracle) measure(ctx context.Context, t record.Target, host string, missing int, each func(record.Run)) (*store.CacheEntry, error) {
	src, err := o.source(t)
	if err != nil {
		return nil, err
	}
	var lease *runner.Lease
	if host != "" {
		lease, err = o.pool.AcquireOn(ctx, t, host)
	} else {
		lease, err = o.pool.Acquire(ctx, t)
	}
	if err != nil {
		return nil, err
	}
	defer lease.Release()
	o.log.Debug("measure", "target", t.Short(), "host", lease.Host().Name(), "slot", lease.Slot(), "built", lease.Built(), "runs", missing)

	var status record.Status
	var last *store.CacheEntry
	effort, err := o.runner.Measure(ctx, lease, src, missing, func(r record.Run) error {
		status = r.Status
		entry, err := o.store.AddRunEntry(&r)
		if err != nil {
			return fmt.Errorf("record run of %s: %w", r.Target.Short(), err)
		}
		last = &entry
		if each != nil {
			each(r)
		}
		return nil
	})
	o.count(effort.Runs, effort.Builds)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, err
	case status != record.StatusOK:
		return nil, o.brokenFromStore(t)
	}
	return last, nil
}

// source is what the hosts materialize for t: its commit and the patch
// its hunks come from.
func (o *Oracle) source(t record.Target) (runner.Source, error) {
	if len(t.Hunks) == 0 {
		return runner.Source{Target: t}, nil
	}
	o.mu.Lock()
	p, ok := o.patches[t.Patch]
	o.mu.Unlock()
	if !ok {
		return runner.Source{}, fmt.Errorf("target %s refers to unknown patch %s", t.Short(), t.Patch)
	}
	return runner.Source{Target: t, Patch: p}, nil
}

func (o *Oracle) brokenFromStore(t record.Target) error {
	entry, err := o.store.Cached(o.spec, t.Key())
	if err != nil || len(entry.Failed) == 0 {
		return fmt.Errorf("%s: %w", t.Short(), record.ErrBroken)
	}
	return o.brokenError(t, entry.Failed[len(entry.Failed)-1].ID)
}

func (o *Oracle) count(runs, builds int) {
	o.mu.Lock()
	o.runs += runs
	o.builds += builds
	o.mu.Unlock()
}
