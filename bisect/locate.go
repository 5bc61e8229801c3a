package bisect

import (
	"context"
	"maps"

	"github.com/perfbot/perfbot/record"
)

// DefaultAttempts is the default of Options.Attempts.
const DefaultAttempts = 3

// Locate runs a whole bisection as `perfbot bisect` does: the search
// (Bisect, or Scan when Options.Scan is above 1), the confirmation of every
// culprit (Confirm against its parent, the commit before it on the chain),
// and a new search of the range when a culprit is not confirmed — the
// confirmation's runs are in the oracle then, so the new search sees what
// they showed — at most Options.Attempts searches in all.
//
// Every culprit of the result carries its Confirmation, and its effect is
// the confirmation's (stats.Delta of the paired runs). A culprit found in
// Options.Known as confirmed is taken as it is; one found there unconfirmed
// is confirmed again on runs taken since. Result.Samples counts every
// run requested, the confirmations' included, and Result.Rounds every round.
func Locate(ctx context.Context, chain []string, o Oracle, opts Options) (*Result, error) {
	if err := validateChain(chain); err != nil {
		return nil, err
	}
	checked, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	known := maps.Clone(opts.Known)
	if known == nil {
		known = map[string]Confirmation{}
	}
	index := make(map[string]int, len(chain))
	for i, c := range chain {
		index[c] = i
	}
	samples, rounds := 0, 0
	var warnings []record.Warning
	for attempt := 1; ; attempt++ {
		var res *Result
		if opts.Scan > 1 {
			res, err = Scan(ctx, chain, o, opts, opts.Scan)
		} else {
			res, err = Bisect(ctx, chain, o, opts)
		}
		if err != nil {
			return nil, err
		}
		samples += res.Samples
		rounds += res.Rounds
		unconfirmed := 0
		for i := range res.Culprits {
			c := &res.Culprits[i]
			conf, ok := known[c.Commit]
			if !ok || !conf.Confirmed {
				var since, recent uint64
				var noise Noise
				if ok {
					// Named again after it was not confirmed: judge it on
					// new runs, not on the same ones twice.
					since = conf.LastSeq
				}
				if !res.Drifting && len(checked.Hosts) < 2 {
					// One steady host: the search's runs count as they
					// are. Runs of several machines count in pairs only.
					recent, noise = res.Since, res.Noise
				}
				conf, err = confirmOnHosts(ctx, o, chain[c.Index-1], c.Commit, checked.Hosts, ConfirmOptions{
					Better:    checked.Better,
					Direction: c.Direction,
					MaxPairs:  opts.ConfirmPairs,
					After:     since,
					Recent:    recent,
					Noise:     noise,
					OnProbe:   confirmEvents(opts.OnProbe, index, &samples),
					Held:      res.held,
				})
				if err != nil {
					return nil, err
				}
				samples += conf.Fresh
				rounds += conf.Fresh
				known[c.Commit] = conf
				if opts.OnConfirm != nil {
					opts.OnConfirm(conf)
				}
			}
			c.Confirmation = &conf
			if conf.Pairs > 0 {
				c.Effect = conf.Effect
				c.Parent, c.Self = conf.ParentRuns, conf.SelfRuns
			}
			if !conf.Confirmed {
				unconfirmed++
				res.Warnings = append(res.Warnings, record.Warning{Kind: record.WarnUnconfirmed, Commit: c.Commit,
					Count: conf.Pairs, Pct: conf.Effect.Pct, LoPct: conf.Effect.Lo, HiPct: conf.Effect.Hi})
			}
		}
		if unconfirmed == 0 || attempt == attempts {
			if attempt > 1 {
				warnings = append(warnings, record.Warning{Kind: record.WarnSearchedAgain, Count: unconfirmedTotal(known), Runs: attempt})
			}
			res.Samples, res.Rounds = samples, rounds
			res.Warnings = record.MergeWarnings(res.Warnings, warnings)
			return res, nil
		}
		if opts.OnSearchAgain != nil {
			opts.OnSearchAgain(attempt+1, unconfirmed)
		}
	}
}

// unconfirmedTotal counts the culprits that failed their confirmation at
// some search.
func unconfirmedTotal(known map[string]Confirmation) int {
	n := 0
	for _, c := range known {
		if !c.Confirmed {
			n++
		}
	}
	return n
}

// confirmEvents turns Confirm's probe events into the job's: with the
// commit's chain index and the runs requested so far.
func confirmEvents(onProbe func(ProbeEvent), index map[string]int, samples *int) func(ProbeEvent) {
	n := 0
	return func(e ProbeEvent) {
		n++
		if onProbe == nil {
			return
		}
		e.Index = index[e.Commit]
		e.Samples = *samples + n
		onProbe(e)
	}
}
