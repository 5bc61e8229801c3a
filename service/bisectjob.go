package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
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
	// Expected is the size of the change the range is expected to hold
	// (a fraction; an alert's): see bisect.Options.Expected.
	Expected float64
	// Scan, when above 1, surveys the range every Scan commits and
	// bisects each pair of adjacent survey points that differ, so that a
	// change masked by a later opposite one is found (bisect.Scan).
	Scan int
}

// BisectReport is the outcome of a bisection as `perfbot bisect` prints it.
type BisectReport struct {
	Verdict    record.Outcome   `json:"verdict"`
	Metric     string           `json:"metric"`
	Unit       string           `json:"unit"`
	Direction  record.Direction `json:"direction"`
	Good       EndReport        `json:"good"`
	Bad        EndReport        `json:"bad"`
	Culprits   []CulpritReport  `json:"culprits"`
	Candidates []CommitRef      `json:"candidates"`
	Skipped    []CommitRef      `json:"skipped"`
	// SkippedInfra are the commits of Skipped whose runs failed on the
	// infrastructure more than two times in three: not judged.
	SkippedInfra []CommitRef   `json:"skipped_infra,omitempty"`
	Probes       []ProbeReport `json:"probes"`
	Warnings     []string      `json:"warnings,omitempty"`
	Runs         int           `json:"runs"`
	Samples      int           `json:"samples"`
	Builds       int           `json:"builds"`
	WallSeconds  float64       `json:"wall_seconds"`
	JobID        string        `json:"job_id"`
	// Hunks holds the hunk search of each culprit when asked for.
	Hunks []*HunksReport `json:"hunks,omitempty"`
	// Findings are the ids of the findings stored for this bisection.
	Findings []string `json:"findings,omitempty"`

	chain []record.Commit
}

// addCost adds c to the report's cost. BisectReport keeps its cost's
// fields apart, its samples among them, as `perfbot bisect --json` prints
// them.
func (r *BisectReport) addCost(c record.Cost) {
	r.Runs, r.Builds, r.WallSeconds = r.Runs+c.Runs, r.Builds+c.Builds, r.WallSeconds+c.WallSeconds
}

// Add adds c to the report's cost.
func (r *BisectReport) Add(c record.Cost) { r.addCost(c) }

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
	// Confirm is the confirmation's figures: its runs and interval.
	Confirm *record.Confirmation `json:"confirm,omitempty"`
	// ParentRuns and CulpritRuns summarize the runs of the parent and of
	// the culprit that the effect is estimated from: the evidence's
	// summary table shows them.
	ParentRuns  EndReport `json:"parent_runs"`
	CulpritRuns EndReport `json:"culprit_runs"`
}

// bisectState is what a bisection job persists while it runs and reads back
// when it resumes: the confirmation of every culprit, so that the same
// command after a crash does not confirm a culprit again. The probes are
// in the store (every run) and in the job's trace (every line).
type bisectState struct {
	// Confirmations is stored under a name of its own since a
	// confirmation's effect became one record.Effect: the state an older
	// perfbot saved is not read, and its culprits are confirmed again
	// rather than taken with no effect.
	Confirmations map[string]bisect.Confirmation `json:"culprit_confirmations,omitempty"`
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
// Oracle (bisect.Locate: the search, the confirmation of every culprit, the
// search again where one is not confirmed) and, when asked, the hunk search
// of every culprit. It is a job: every measurement is recorded as it
// happens, the confirmations are persisted as they are made, the same
// request after a crash re-runs nothing that was recorded, and after the
// job finished it returns the stored report.
func (b *Bot) Bisect(ctx context.Context, req BisectRequest) (*BisectReport, error) {
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
	params := map[string]any{
		"good": good.Hash, "bad": bad.Hash, "metric": metric.Name, "direction": req.Direction,
		"scan": req.Scan, "min_effect": req.MinEffect, "hunks": req.Hunks, "spec": b.Oracle.SpecHash(),
	}
	if req.Expected > 0 {
		params["expected"] = req.Expected
	}
	rep, err := runJob(b, record.JobBisect, params, func(jb *Bot, load, save func(any)) (*BisectReport, error) {
		return jb.bisect(ctx, req, metric, chain, hashes, load, save)
	})
	if err != nil {
		return nil, err
	}
	rep.chain = chain // not part of the stored report
	return rep, nil
}

// bisect is the body of the bisection job.
func (b *Bot) bisect(ctx context.Context, req BisectRequest, metric record.Metric, chain []record.Commit, hashes []string, load, save func(any)) (*BisectReport, error) {
	meter := b.startMeter()
	good, bad := chain[0], chain[len(chain)-1]
	b.progressf("bisect %s..%s (%d commits) on %s, direction %s, job %s", good.Short(), bad.Short(), len(chain)-1, metric.Name, req.Direction, b.job.rec.ID)

	var state bisectState
	load(&state)
	if state.Confirmations == nil {
		state.Confirmations = map[string]bisect.Confirmation{}
	}
	opts := bisect.Options{
		Confidence:  b.Config.Bisect.Confidence,
		MinEffect:   b.Config.Bisect.MinEffect,
		MaxRuns:     b.Config.Bisect.MaxRuns,
		Better:      metric.Better,
		Direction:   req.Direction,
		Hosts:       b.Oracle.Hosts(),
		InitialRuns: b.Config.Bisect.Repeats,
		Logger:      b.Logger,
		OnProbe:     func(e bisect.ProbeEvent) { b.progressf("%s", probeLine(e)) },
	}
	if req.MinEffect > 0 {
		opts.MinEffect = req.MinEffect
	}
	opts.Expected = req.Expected
	opts.Scan = req.Scan
	opts.Known = state.Confirmations
	opts.OnConfirm = func(c bisect.Confirmation) {
		b.progressf("%s", confirmLine(c))
		state.Confirmations[c.Commit] = c
		save(state)
	}
	opts.OnSearchAgain = func(attempt, unconfirmed int) {
		b.progressf("%d culprit(s) not confirmed by interleaved runs; searching the range again with them (attempt %d of %d)", unconfirmed, attempt, bisect.DefaultAttempts)
	}
	res, err := bisect.Locate(ctx, hashes, commitOracle{o: b.Oracle, metric: metric.Name}, opts)
	if err != nil {
		return nil, fmt.Errorf("bisect %s..%s: %w", good.Short(), bad.Short(), err)
	}
	res.Warnings = append(res.Warnings, b.gpuStateWarnings(res)...)
	rep := b.bisectReport(res, chain, metric)
	rep.JobID = b.job.rec.ID
	if req.Hunks {
		for _, c := range rep.Culprits {
			hr, err := b.Hunks(ctx, HunksRequest{Rev: c.Commit, Metric: metric.Name, Direction: c.Direction, Known: knownEffect(c)})
			if errors.Is(err, minimize.ErrEndsAlike) || errors.Is(err, minimize.ErrNotWorse) {
				// The culprit stands; only its hunks could not be told
				// apart (a host too noisy for the search between them).
				b.progressf("%v", err)
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("The hunks of %s were not searched: %v.", record.ShortHash(c.Commit), err))
				rep.Hunks = append(rep.Hunks, nil)
				continue
			}
			if err != nil {
				return nil, err
			}
			rep.Hunks = append(rep.Hunks, hr)
		}
	}
	rep.addCost(meter.read())
	return rep, nil
}

func (b *Bot) bisectReport(res *bisect.Result, chain []record.Commit, metric record.Metric) *BisectReport {
	byHash := map[string]record.Commit{}
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
			DeltaPct: c.Effect.Pct, CIPct: [2]float64{c.Effect.Lo, c.Effect.Hi}, Direction: c.Direction,
			ParentRuns: end(c.Parent), CulpritRuns: end(c.Self),
		}
		if c.Confirmation != nil {
			cr.Confirmed, cr.Confirmation = c.Confirmation.Confirmed, c.Confirmation.String()
			cr.Confirm = confirmationOf(*c.Confirmation)
		}
		rep.Culprits = append(rep.Culprits, cr)
	}
	for _, h := range res.Candidates {
		rep.Candidates = append(rep.Candidates, ref(h))
	}
	for _, h := range res.Skipped {
		rep.Skipped = append(rep.Skipped, ref(h))
	}
	for _, h := range res.SkippedInfra {
		rep.SkippedInfra = append(rep.SkippedInfra, ref(h))
	}
	for _, p := range res.Probes {
		rep.Probes = append(rep.Probes, ProbeReport{Commit: p.Commit, Subject: byHash[p.Commit].Subject, Index: p.Index, N: p.N, Median: p.Median, Status: p.Status, Side: p.Side})
	}
	return rep
}

// summarize summarizes the stored values of metric for t.
func (b *Bot) summarize(t record.Target, metric string) (stats.Summary, []float64, error) {
	vals, err := b.Store.Values(b.Oracle.SpecHash(), t.Key(), metric)
	if err != nil {
		return stats.Summary{}, nil, err
	}
	return stats.Summarize(vals, 0.95), vals, nil
}
