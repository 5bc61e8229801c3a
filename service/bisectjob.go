package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
	"github.com/perfbot/perfbot/store"
)

// BisectRequest is a manual or scheduled bisection.
type BisectRequest struct {
	Good, Bad string
	// Metric is the metric followed; "" is the configured primary.
	Metric string
	// Direction is regression (default), improvement or any.
	Direction record.Direction
	// Hunks continues from each culprit into its hunks.
	Hunks bool
	// MinEffect overrides bisect.min_effect (a fraction) when positive:
	// a scan of a long history uses the detection threshold.
	MinEffect float64
	// Scan, when above 1, surveys the range every Scan commits and
	// bisects each pair of adjacent survey points that differ, so that a
	// change masked by a later opposite one is found (bisect.Scan).
	Scan int
}

// BisectReport is the outcome of a bisection as `perfbot bisect` prints it.
type BisectReport struct {
	Verdict     record.Outcome   `json:"verdict"`
	Metric      string           `json:"metric"`
	Unit        string           `json:"unit"`
	Direction   record.Direction `json:"direction"`
	Good        EndReport        `json:"good"`
	Bad         EndReport        `json:"bad"`
	Culprits    []CulpritReport  `json:"culprits"`
	Candidates  []CommitRef      `json:"candidates"`
	Skipped     []CommitRef      `json:"skipped"`
	Probes      []ProbeReport    `json:"probes"`
	Warnings    []string         `json:"warnings,omitempty"`
	Runs        int              `json:"runs"`
	Samples     int              `json:"samples"`
	Builds      int              `json:"builds"`
	WallSeconds float64          `json:"wall_seconds"`
	JobID       string           `json:"job_id"`
	// Hunks holds the hunk search of each culprit when asked for.
	Hunks []*HunksReport `json:"hunks,omitempty"`
	// Findings are the ids of the findings stored for this bisection.
	Findings []string `json:"findings,omitempty"`

	chain []gitops.Commit
}

// EndReport is one end of the range as measured.
type EndReport struct {
	Commit  string     `json:"commit"`
	Subject string     `json:"subject"`
	N       int        `json:"n"`
	Median  float64    `json:"median"`
	CI      [2]float64 `json:"ci"`
}

// CulpritReport is one culprit commit.
type CulpritReport struct {
	Commit     string           `json:"commit"`
	Subject    string           `json:"subject"`
	Author     string           `json:"author"`
	Confidence float64          `json:"confidence"`
	DeltaPct   float64          `json:"delta_pct"`
	CIPct      [2]float64       `json:"ci_pct"`
	Direction  record.Direction `json:"direction"`
	// Confirmed reports whether interleaved runs of the culprit and its
	// parent show the change (bisect.Confirm); Confirmation says what they
	// showed (or why there are none).
	Confirmed    bool   `json:"confirmed"`
	Confirmation string `json:"confirmation,omitempty"`
	// ParentRuns and CulpritRuns summarize the runs of the parent and of
	// the culprit that the effect is estimated from: the evidence's
	// summary table shows them.
	ParentRuns  EndReport `json:"parent_runs"`
	CulpritRuns EndReport `json:"culprit_runs"`
}

// bisectState is what a bisection job persists: every probe, and the
// confirmation of every culprit, so that the same command after a crash or
// after the end re-runs nothing that already confirmed a culprit.
type bisectState struct {
	Probes        []bisect.ProbeEvent            `json:"probes"`
	Confirmations map[string]bisect.Confirmation `json:"confirmations,omitempty"`
}

// CommitRef names a commit.
type CommitRef struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
}

// ProbeReport is one measured commit.
type ProbeReport struct {
	Commit  string  `json:"commit"`
	Subject string  `json:"subject"`
	Index   int     `json:"index"`
	N       int     `json:"n"`
	Median  float64 `json:"median"`
	Status  string  `json:"status"`
	Side    string  `json:"side,omitempty"`
}

// Bisect resolves the range, runs the noise-aware bisection through the
// Oracle and, when asked, the hunk search of every culprit. Every
// measurement is recorded as it happens, and the job's probes are persisted
// after each one: the same request after a crash re-runs nothing that was
// recorded.
func (b *Bot) Bisect(ctx context.Context, req BisectRequest) (*BisectReport, error) {
	meter := b.startMeter()
	metric, err := b.metric(req.Metric)
	if err != nil {
		return nil, err
	}
	if req.Direction == "" {
		req.Direction = record.Regression
	}
	good, err := b.resolve(ctx, req.Good)
	if err != nil {
		return nil, err
	}
	bad, err := b.resolve(ctx, req.Bad)
	if err != nil {
		return nil, err
	}
	chain, err := b.Repo.Chain(ctx, good.Hash, bad.Hash)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if len(chain) < 2 {
		return nil, &InputError{Err: fmt.Errorf("bisect: %s and %s are the same commit", req.Good, req.Bad)}
	}
	hashes := make([]string, len(chain))
	for i, c := range chain {
		hashes[i] = c.Hash
		if err := b.putCommit(c); err != nil {
			return nil, err
		}
	}
	job := b.startJob(record.JobBisect, map[string]any{"good": good.Hash, "bad": bad.Hash, "metric": metric.Name, "direction": req.Direction, "scan": req.Scan, "min_effect": req.MinEffect, "spec": b.Oracle.SpecHash()})
	b.progressf("bisect %s..%s (%d commits) on %s, direction %s, job %s", good.Short(), bad.Short(), len(chain)-1, metric.Name, req.Direction, job.ID)

	state := bisectState{Confirmations: map[string]bisect.Confirmation{}}
	if len(job.State) > 0 {
		// An older job's state may not decode; its confirmations are then
		// simply taken again.
		_ = json.Unmarshal(job.State, &state)
		if state.Confirmations == nil {
			state.Confirmations = map[string]bisect.Confirmation{}
		}
	}
	opts := bisect.Options{
		Confidence:  b.Config.Bisect.Confidence,
		MinEffect:   b.Config.Bisect.MinEffect,
		MaxRuns:     b.Config.Bisect.MaxRuns,
		Better:      record.Better(metric.Better),
		Direction:   req.Direction,
		Parallel:    b.Oracle.Parallel(),
		InitialRuns: b.Config.Bisect.Repeats,
		Logger:      b.Logger,
		OnProbe: func(e bisect.ProbeEvent) {
			state.Probes = append(state.Probes, e)
			line := fmt.Sprintf("  %-8s %s #%-4d n=%-3d median=%-10.4g %s", e.Phase, record.ShortHash(e.Commit), e.Index, e.N, e.Median, e.Status)
			if e.Best != "" {
				line += fmt.Sprintf("  best %s p=%.3f", record.ShortHash(e.Best), e.Posterior)
			}
			b.progressf("%s", line)
			b.saveJob(job, record.JobRunning, state)
		},
	}
	if req.MinEffect > 0 {
		opts.MinEffect = req.MinEffect
	}
	// The search, the confirmation of every culprit and the search again
	// over a range whose culprit is not confirmed are the engine's
	// (bisect.Locate); the job persists what it confirmed.
	opts.Scan = req.Scan
	opts.Known = state.Confirmations
	opts.OnConfirm = func(c bisect.Confirmation) {
		state.Confirmations[c.Commit] = c
		b.saveJob(job, record.JobRunning, state)
	}
	opts.OnSearchAgain = func(attempt, unconfirmed int) {
		state.Probes = state.Probes[:0]
		b.progressf("%d culprit(s) not confirmed by interleaved runs; searching the range again with them (attempt %d of %d)", unconfirmed, attempt, bisect.DefaultAttempts)
	}
	res, err := bisect.Locate(ctx, hashes, commitOracle{o: b.Oracle, metric: metric.Name}, opts)
	if err != nil {
		b.saveJob(job, record.JobFailed, state)
		return nil, fmt.Errorf("bisect %s..%s: %w", good.Short(), bad.Short(), err)
	}
	rep := b.bisectReport(res, chain, metric)
	rep.JobID = job.ID
	if req.Hunks {
		for _, c := range res.Culprits {
			hr, err := b.Hunks(ctx, HunksRequest{Rev: c.Commit, Metric: metric.Name})
			if err != nil {
				b.saveJob(job, record.JobFailed, state)
				return nil, err
			}
			rep.Hunks = append(rep.Hunks, hr)
		}
	}
	rep.Runs, rep.Builds, rep.WallSeconds = meter.read()
	b.saveJob(job, record.JobDone, state)
	return rep, nil
}

func (b *Bot) bisectReport(res *bisect.Result, chain []gitops.Commit, metric record.Metric) *BisectReport {
	byHash := map[string]gitops.Commit{}
	for _, c := range chain {
		byHash[c.Hash] = c
	}
	ref := func(h string) CommitRef { return CommitRef{Commit: h, Subject: byHash[h].Subject} }
	end := func(e bisect.EndSummary) EndReport {
		return EndReport{Commit: e.Commit, Subject: byHash[e.Commit].Subject, N: e.N, Median: e.Median, CI: [2]float64{e.Lo, e.Hi}}
	}
	rep := &BisectReport{
		Verdict: res.Verdict, Metric: metric.Name, Unit: metric.Unit, Direction: res.Direction,
		Good: end(res.Good), Bad: end(res.Bad), Samples: res.Samples, Warnings: record.WarningStrings(res.Warnings),
		Culprits: []CulpritReport{}, Candidates: []CommitRef{}, Skipped: []CommitRef{}, Probes: []ProbeReport{},
		chain: chain,
	}
	for _, c := range res.Culprits {
		bc := byHash[c.Commit]
		cr := CulpritReport{
			Commit: c.Commit, Subject: bc.Subject, Author: bc.Author, Confidence: c.Confidence,
			DeltaPct: c.DeltaPct, CIPct: [2]float64{c.CILoPct, c.CIHiPct}, Direction: c.Direction,
			ParentRuns: end(c.Parent), CulpritRuns: end(c.Self),
		}
		if c.Confirmation != nil {
			cr.Confirmed, cr.Confirmation = c.Confirmation.Confirmed, c.Confirmation.String()
		}
		rep.Culprits = append(rep.Culprits, cr)
	}
	for _, h := range res.Candidates {
		rep.Candidates = append(rep.Candidates, ref(h))
	}
	for _, h := range res.Skipped {
		rep.Skipped = append(rep.Skipped, ref(h))
	}
	for _, p := range res.Probes {
		rep.Probes = append(rep.Probes, ProbeReport{Commit: p.Commit, Subject: byHash[p.Commit].Subject, Index: p.Index, N: p.N, Median: p.Median, Status: p.Status, Side: p.Side})
	}
	return rep
}

// startJob loads or creates the job record for the given parameters; its
// id is a hash of them, so the same command finds the same job.
func (b *Bot) startJob(kind record.JobKind, params map[string]any) store.Job {
	raw, _ := json.Marshal(params) // plain strings
	sum := sha256.Sum256(append([]byte(string(kind)+"|"), raw...))
	id := string(kind) + "-" + hex.EncodeToString(sum[:6])
	if j, ok, err := b.Store.Job(id); err == nil && ok {
		b.progressf("resuming job %s (last state %s, updated %s)", id, j.Status, j.Updated.Format(time.RFC3339))
		return j
	}
	return store.Job{ID: id, Kind: kind, Params: raw, Created: now()}
}

// saveJob persists the job's probes so far. A failure to persist is logged,
// not fatal: every measurement is already in the store.
func (b *Bot) saveJob(j store.Job, status record.JobState, state any) {
	raw, err := json.Marshal(state)
	if err == nil {
		j.State, j.Status, j.Updated = raw, status, now()
		err = b.Store.PutJob(j)
	}
	if err != nil {
		b.Logger.Warn("persist job", "job", j.ID, "err", err)
	}
}

// summarize summarizes the stored values of metric for t.
func (b *Bot) summarize(t record.Target, metric string) (stats.Summary, []float64, error) {
	vals, err := b.Store.Values(b.Oracle.SpecHash(), t.Key(), metric)
	if err != nil {
		return stats.Summary{}, nil, err
	}
	return stats.Summarize(vals, 0.95), vals, nil
}
