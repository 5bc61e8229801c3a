package views

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
)

// Vitals is what /metrics exposes of the service: the jobs by state, the
// runs and their seconds by host and status, the findings by triage
// state, and when the last cycle got through (the time of the newest
// recorded night: a cycle records its night only once it measured).
type Vitals struct {
	Jobs      map[record.JobState]int
	Runs      map[store.RunKey]store.RunTotal
	Findings  map[record.Triage]int
	LastCycle time.Time
	// Hosts is the health of the pool's hosts; nil without
	// Views.HostStates (a reader with no pool at hand).
	Hosts []runner.HostState
}

// VitalsReader reads Vitals, counting each run of the store once: it
// keeps the run totals and adds only the runs recorded since its last
// read. It is safe for concurrent use.
type VitalsReader struct {
	views *Views

	mu     sync.Mutex
	after  uint64
	totals map[store.RunKey]store.RunTotal
}

// NewVitalsReader returns a reader of the vitals.
func (v *Views) NewVitalsReader() *VitalsReader { return &VitalsReader{views: v} }

// Read returns the vitals now.
func (r *VitalsReader) Read(ctx context.Context) (*Vitals, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v := &Vitals{Jobs: map[record.JobState]int{}, Findings: map[record.Triage]int{}}
	jobs, err := r.views.Store.Jobs()
	if err != nil {
		return nil, fmt.Errorf("vitals: jobs: %w", err)
	}
	for _, j := range jobs {
		v.Jobs[j.Status]++
	}
	fs, err := r.views.Store.Findings()
	if err != nil {
		return nil, fmt.Errorf("vitals: findings: %w", err)
	}
	for _, f := range fs {
		v.Findings[f.TriageState()]++
	}
	nights, err := r.views.Store.Nights()
	if err != nil {
		return nil, fmt.Errorf("vitals: nights: %w", err)
	}
	if len(nights) > 0 {
		v.LastCycle = nights[len(nights)-1].Time
	}
	if r.views.HostStates != nil {
		v.Hosts = r.views.HostStates()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.totals, r.after, err = r.views.Store.RunTotals(r.after, r.totals)
	if err != nil {
		return nil, fmt.Errorf("vitals: %w", err)
	}
	v.Runs = make(map[store.RunKey]store.RunTotal, len(r.totals))
	for k, t := range r.totals {
		v.Runs[k] = t
	}
	return v, nil
}
