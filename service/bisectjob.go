package service

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

// BisectRequest is a manual or scheduled bisection.
type BisectRequest struct {
	Good, Bad string
	// Metric is the metric followed; "" is the configured primary.
	Metric string
	// Direction is regression (default), improvement or any.
	Direction record.Direction
	// Hunks continues from each confirmed culprit into its hunks
	// (searchHunks) and into the dependencies it bumps (descend).
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

// Bisection is what a bisection job found: the search's result, the
// commits it names, the hunk search of each confirmed culprit when the
// request asked for them, and what it cost. StoreFindings makes it into
// findings; `perfbot bisect` prints it.
type Bisection struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	// Result is bisect.Locate's, with the job's own warnings added: a
	// probe that met a GPU in another state, a culprit whose hunks could
	// not be searched.
	bisect.Result
	// Commits are the commits of the searched chain that Result names
	// (its ends, probes, culprits and their parents, candidates and
	// skipped commits), in chain order.
	Commits []record.Commit `json:"commits"`
	// Hunks are the hunk searches of the culprits, by the culprit's hash.
	Hunks map[string]*HunksReport `json:"hunks,omitempty"`
	// Descents are the descents into the dependency bumps of the
	// culprits, by the culprit's hash (see descend).
	Descents map[string][]record.Descent `json:"descents,omitempty"`
	record.Cost
	JobID string `json:"job_id"`
	// Findings are the ids of the findings stored for it.
	Findings []string `json:"findings,omitempty"`
}

// Commit is the commit with the hash among those b names; one that knows
// only its hash if b does not name it.
func (b *Bisection) Commit(hash string) record.Commit {
	if i := slices.IndexFunc(b.Commits, func(c record.Commit) bool { return c.Hash == hash }); i >= 0 {
		return b.Commits[i]
	}
	return record.Commit{Hash: hash}
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

// Bisect resolves the range, runs the noise-aware bisection through the
// Oracle (bisect.Locate: the search, the confirmation of every culprit, the
// search again where one is not confirmed) and, when asked, the hunk search
// of every confirmed culprit. It is a job: every measurement is recorded
// as it happens, the confirmations are persisted as they are made, the
// same request after a crash re-runs nothing that was recorded, and after
// the job finished it returns the stored bisection.
func (b *Bot) Bisect(ctx context.Context, req BisectRequest) (*Bisection, error) {
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
		return nil, &record.InputError{Err: err}
	}
	if len(chain) < 2 {
		return nil, &record.InputError{Err: fmt.Errorf("bisect: %s and %s are the same commit", req.Good, req.Bad)}
	}
	for _, c := range chain {
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
	return runJob(b, record.JobBisect, params, func(jb *Bot, load, save func(any)) (*Bisection, error) {
		return jb.bisect(ctx, req, metric, chain, load, save)
	})
}

// bisect is the body of the bisection job.
func (b *Bot) bisect(ctx context.Context, req BisectRequest, metric record.Metric, chain []record.Commit, load, save func(any)) (*Bisection, error) {
	meter := b.startMeter()
	good, bad := chain[0], chain[len(chain)-1]
	b.progressf("bisect %s..%s (%d commits) on %s, direction %s, job %s", good.Short(), bad.Short(), len(chain)-1, metric.Name, req.Direction, b.job.rec.ID)

	var state bisectState
	load(&state)
	if state.Confirmations == nil {
		state.Confirmations = map[string]bisect.Confirmation{}
	}
	opts := b.searchOptions(metric, req.Direction)
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
	hashes := make([]string, len(chain))
	for i, c := range chain {
		hashes[i] = c.Hash
	}
	res, err := bisect.Locate(ctx, hashes, commitOracle{o: b.Oracle, metric: metric.Name}, opts)
	if err != nil {
		return nil, fmt.Errorf("bisect %s..%s: %w", good.Short(), bad.Short(), err)
	}
	bis := &Bisection{Metric: metric.Name, Unit: metric.Unit, Result: *res, Commits: named(chain, res), JobID: b.job.rec.ID}
	gpu, err := b.gpuStateWarnings(res)
	if err != nil {
		return nil, err
	}
	bis.Warnings = append(bis.Warnings, gpu...)
	if req.Hunks {
		if bis.Hunks, err = b.searchHunks(ctx, bis); err != nil {
			return nil, err
		}
		confirmed := func(c bisect.Confirmation) {
			state.Confirmations[c.Commit] = c
			save(state)
		}
		if bis.Descents, err = b.descend(ctx, bis, metric, state.Confirmations, confirmed); err != nil {
			return nil, err
		}
	}
	bis.Cost = meter.read()
	return bis, nil
}

// searchOptions are the options of a search over a chain of commits
// for metric in direction: the configured confidence, minimum effect, run
// budget and repeats, the pool's hosts, and a probe line in the trace
// for every probe.
func (b *Bot) searchOptions(metric record.Metric, direction record.Direction) bisect.Options {
	return bisect.Options{
		Confidence:  b.Config.Bisect.Confidence,
		MinEffect:   b.Config.Bisect.MinEffect,
		MaxRuns:     b.Config.Bisect.MaxRuns,
		Better:      metric.Better,
		Direction:   direction,
		Hosts:       b.Oracle.Hosts(),
		InitialRuns: b.Config.Bisect.Repeats,
		Logger:      b.Logger,
		OnProbe:     func(e bisect.ProbeEvent) { b.progressf("%s", probeLine(e)) },
	}
}

// named returns the commits of chain that res names, in chain order: its
// ends, probes, culprits and their parents, candidates and skipped commits.
func named(chain []record.Commit, res *bisect.Result) []record.Commit {
	names := map[string]bool{res.Good.Commit: true, res.Bad.Commit: true}
	for _, p := range res.Probes {
		names[p.Commit] = true
	}
	for _, c := range res.Culprits {
		names[c.Commit] = true
		if c.Index > 0 {
			names[chain[c.Index-1].Hash] = true
		}
	}
	for _, h := range slices.Concat(res.Candidates, res.Skipped) {
		names[h] = true
	}
	return slices.DeleteFunc(slices.Clone(chain), func(c record.Commit) bool { return !names[c.Hash] })
}

// searchHunks searches the hunks of each confirmed culprit of bis, in the
// culprit's own direction and from the effect the bisection measured: the
// one place where a bisection continues into hunks, for `perfbot bisect
// --hunks` and an alert's job alike. A culprit that is not confirmed is
// not searched: it is reported, never filed. A culprit whose hunks cannot
// be searched (an *record.InputError: its effect too small to split, a diff
// without hunks) stands, with a warning that says why; any other error
// stops the job.
func (b *Bot) searchHunks(ctx context.Context, bis *Bisection) (map[string]*HunksReport, error) {
	hunks := map[string]*HunksReport{}
	for _, c := range bis.Culprits {
		known := knownEffect(c)
		if known == nil {
			continue
		}
		hr, err := b.Hunks(ctx, HunksRequest{Rev: c.Commit, Metric: bis.Metric, Direction: c.Direction, Known: known})
		var ie *record.InputError
		switch {
		case errors.As(err, &ie):
			b.progressf("the hunks of %s were not searched: %v", record.ShortHash(c.Commit), err)
			bis.Warnings = append(bis.Warnings, record.Warning{Kind: record.WarnHunksNotSearched, Commit: c.Commit, Text: err.Error()})
		case err != nil:
			return nil, fmt.Errorf("hunks of culprit %s: %w", record.ShortHash(c.Commit), err)
		default:
			hunks[c.Commit] = hr
		}
	}
	return hunks, nil
}

// knownEffect is the effect a confirmed culprit's bisection measured, for
// HunksRequest.Known; nil when it is not confirmed.
func knownEffect(c bisect.Culprit) *minimize.Effect {
	if c.Confirmation == nil || !c.Confirmation.Confirmed {
		return nil
	}
	return &minimize.Effect{Effect: c.Effect, N: min(c.Parent.N, c.Self.N)}
}
