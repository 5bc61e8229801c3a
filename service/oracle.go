package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
)

// Oracle is the one door through which everything is measured. It answers
// "give me at least n samples of metric M for target T": it looks in the
// store first, runs only what is missing, on a free worktree slot, and
// records every run before it returns.
//
// A slot keeps the last target it built, so asking again for a target that
// is still built runs only the benchmark; switching targets checks out a
// clean tree and builds again.
type Oracle struct {
	store  *store.DB
	repo   *gitops.Repo
	runner *runner.Runner
	spec   string
	log    *slog.Logger

	slots chan *slot

	mu      sync.Mutex
	patches map[string]*gitops.Patch
	pending map[string]*sync.Mutex // one measurement at a time per target
	runs    int
	builds  int
}

type slot struct {
	n     int
	built string // target key the slot holds, built; "" when dirty
	dir   string
}

// OracleOptions configures NewOracle.
type OracleOptions struct {
	// Slots is the number of worktree slots kept built (default 4).
	Slots  int
	Logger *slog.Logger
}

// NewOracle returns an Oracle over the given store, repository and runner.
func NewOracle(db *store.DB, repo *gitops.Repo, r *runner.Runner, opts OracleOptions) *Oracle {
	if opts.Slots <= 0 {
		opts.Slots = 4
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	o := &Oracle{
		store:   db,
		repo:    repo,
		runner:  r,
		spec:    r.Spec.Hash(),
		log:     opts.Logger,
		slots:   make(chan *slot, opts.Slots),
		patches: map[string]*gitops.Patch{},
		pending: map[string]*sync.Mutex{},
	}
	for i := 0; i < opts.Slots; i++ {
		o.slots <- &slot{n: i}
	}
	return o
}

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
// benchmark is broken: the error wraps bisect.ErrBroken and the failure is
// recorded, so it is never built again for the same spec.
func (o *Oracle) Values(ctx context.Context, t record.Target, metric string, n int) ([]float64, error) {
	if err := o.Ensure(ctx, t, n); err != nil {
		return nil, err
	}
	return o.store.Values(o.spec, t.Key(), metric)
}

// Ensure makes sure t has at least n ok runs recorded.
func (o *Oracle) Ensure(ctx context.Context, t record.Target, n int) error {
	key := t.Key()
	lock := o.targetLock(key)
	lock.Lock()
	defer lock.Unlock()

	entry, err := o.store.Cached(o.spec, key)
	if err != nil {
		return fmt.Errorf("read cache of %s: %w", t.Short(), err)
	}
	if len(entry.Failed) > 0 && len(entry.OK) == 0 {
		return o.brokenError(t, entry.Failed[len(entry.Failed)-1].ID)
	}
	missing := n - len(entry.OK)
	if missing <= 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return o.measure(ctx, t, missing)
}

func (o *Oracle) brokenError(t record.Target, runID uint64) error {
	r, ok, err := o.store.Run(runID)
	if err != nil || !ok {
		return fmt.Errorf("%s: %w", t.Short(), bisect.ErrBroken)
	}
	firstLine, _, _ := strings.Cut(r.Error, "\n")
	return fmt.Errorf("%s: %s: %s: %w", t.Short(), r.Status, firstLine, bisect.ErrBroken)
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

// measure runs missing more benchmark invocations of t on a slot, building
// first unless the slot still holds t built.
func (o *Oracle) measure(ctx context.Context, t record.Target, missing int) error {
	s, err := o.acquire(ctx, t.Key())
	if err != nil {
		return err
	}
	defer func() { o.slots <- s }()

	key := t.Key()
	run := o.runner.Bench
	if s.built != key {
		s.built = ""
		dir, err := o.checkout(ctx, s.n, t)
		if err != nil {
			var ae *gitops.ApplyError
			if errors.As(err, &ae) {
				return o.recordBroken(t, record.StatusBuildFailed, err)
			}
			return &record.InfraError{Op: "measure " + t.Short(), Err: err}
		}
		s.dir = dir
		o.log.Debug("build", "target", t.Short(), "slot", s.n)
		o.count(0, 1)
		run = o.runner.Measure
	}
	var status record.Status
	err = run(ctx, s.dir, t, missing, func(r record.Run) error {
		status = r.Status
		if r.Status == record.StatusOK || r.Status == record.StatusBenchFailed {
			o.count(1, 0)
		}
		return o.record(r)
	})
	if err != nil {
		s.built = ""
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &record.InfraError{Op: "measure " + t.Short(), Err: err}
	}
	if status != record.StatusOK {
		s.built = ""
		return o.brokenFromStore(t)
	}
	s.built = key
	return nil
}

func (o *Oracle) brokenFromStore(t record.Target) error {
	entry, err := o.store.Cached(o.spec, t.Key())
	if err != nil || len(entry.Failed) == 0 {
		return fmt.Errorf("%s: %w", t.Short(), bisect.ErrBroken)
	}
	return o.brokenError(t, entry.Failed[len(entry.Failed)-1].ID)
}

// recordBroken stores a failed run for a target that could not even be
// prepared (its hunks do not apply), so that it is not tried again.
func (o *Oracle) recordBroken(t record.Target, status record.Status, cause error) error {
	r := record.Run{
		TargetKey: t.Key(),
		SpecHash:  o.spec,
		Target:    t,
		Host:      o.runner.Host.Name(),
		Status:    status,
		Error:     cause.Error(),
		Started:   now(),
	}
	if err := o.record(r); err != nil {
		return err
	}
	return fmt.Errorf("%s: %v: %w", t.Short(), cause, bisect.ErrBroken)
}

func (o *Oracle) record(r record.Run) error {
	if _, err := o.store.AddRun(&r); err != nil {
		return fmt.Errorf("record run of %s: %w", r.Target.Short(), err)
	}
	return nil
}

func (o *Oracle) count(runs, builds int) {
	o.mu.Lock()
	o.runs += runs
	o.builds += builds
	o.mu.Unlock()
}

// acquire takes the slot that holds key built if it is free, else the
// least recently released one.
func (o *Oracle) acquire(ctx context.Context, key string) (*slot, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case s := <-o.slots:
		if s.built == key {
			return s, nil
		}
		// Look for a free slot that already holds the target; put the
		// others back in the order they were taken.
		var taken []*slot
		for {
			select {
			case other := <-o.slots:
				if other.built == key {
					o.slots <- s
					for _, t := range taken {
						o.slots <- t
					}
					return other, nil
				}
				taken = append(taken, other)
				continue
			default:
			}
			break
		}
		for _, t := range taken {
			o.slots <- t
		}
		return s, nil
	}
}

func (o *Oracle) checkout(ctx context.Context, n int, t record.Target) (string, error) {
	if len(t.Hunks) == 0 {
		return o.repo.Checkout(ctx, n, t.Commit)
	}
	o.mu.Lock()
	p, ok := o.patches[t.Patch]
	o.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("target %s refers to unknown patch %s", t.Short(), t.Patch)
	}
	return o.repo.CheckoutPatch(ctx, n, p, t.Hunks)
}
