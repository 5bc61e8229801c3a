package bisect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// Defaults of Options. Confidence and InitialRuns are the cheapest pair
// that names the culprit of a 5% regression among 64 commits at 2% noise
// in at least 99.8% of the whole jobs cmd/bench-bisect simulates.
const (
	DefaultConfidence  = 0.98
	DefaultMinEffect   = 0.02
	DefaultMaxRuns     = 400
	DefaultInitialRuns = 2
)

// Tuning of the bisection, chosen by simulation (cmd/bench-bisect).
const (
	// snapDistance is how much worse a split an already-measured commit
	// may give than the ideal one and still be preferred: another run of a
	// measured commit costs no build and tells more than a first run
	// elsewhere. Runs count more than builds here, so the margin is small.
	snapDistance = 0.1
	// refUncertainty is how unsure the posterior may be of a commit's side
	// for the commit to count as a reference in reference balancing.
	refUncertainty = 0.05
	// refShare is how many runs a probe may have, in runs of the weaker
	// reference, before that reference is measured instead.
	refShare = 2.0
	// tentativeConfidence is where a culprit is first taken up for the
	// residual checks; their runs then confirm it (or not) to the full
	// confidence.
	tentativeConfidence = 0.95
	// minWithinDF is the degrees of freedom of the noise within commits a
	// culprit's posterior needs before it is taken up: with fewer, a few
	// runs that happen to agree make the noise look small and the
	// posterior overconfident on a noisy host.
	minWithinDF = 8
	// minStandOutDF is the fewer degrees of freedom that do for a change
	// that stands out of the noise (standsOut): four, so that a run or
	// two that agree by chance do not pass for the noise.
	minStandOutDF = 4
	// endgameConfidence is the posterior of a single culprit from which
	// the search runs its parent and it in turn: those are the runs the
	// posterior needs to settle, and taken side by side they are also the
	// pairs its confirmation rests on.
	endgameConfidence = 0.5
	// standOutConfidence is the level at which the change between the
	// culprit and its parent stands out of the search's noise
	// (standsOut): strict, since a drift the search has not found yet
	// would pass for a change of the two.
	standOutConfidence = 0.999
	// splitLogBF is the log Bayes factor of two changes against one (see
	// newTwoChanges) from which a range is split at a commit between
	// them. A split in error costs a second search, so the bar is high.
	splitLogBF = 5.0
	// plausibleLogBF is the log Bayes factor from which two changes are
	// plausible enough that, before a culprit is taken up, the runs that
	// tell them from one are made.
	plausibleLogBF = 0.5
	// middleSure is how sure the two-change model must be that the commit
	// a range is split at lies between its changes.
	middleSure = 0.95
	// middleStep is the least step of either of two changes, in parts of
	// the minimum effect: a level within it of an end's is that end's.
	middleStep = 0.5
	// middleShare bounds the runs made to tell two changes from one, in
	// runs of the rest of the range's search.
	middleShare = 0.5
)

// Phases reported in ProbeEvent.
const (
	PhaseVerify   = "verify"
	PhaseBisect   = "bisect"
	PhaseResidual = "residual"
	PhaseConfirm  = "confirm"
)

// commitState is what the search knows about one commit of the chain.
type commitState struct {
	runs []Run // as the oracle returned them
	// counts marks the runs that count in comparisons: positive values
	// with a run of another commit beside them in time (see anchored).
	counts []bool
	// n is the number of runs that count.
	n int
	// clean are the log values of the runs that count, drift removed and
	// outliers screened out.
	clean []float64
	// level are the log values of the runs that count before drift
	// removal and screening, and at their places in time (Run.Seq).
	level  []float64
	at     []int
	broken bool
	// tries counts the runs asked of the commit and infra those that
	// failed on the infrastructure.
	tries, infra int
}

// infraSkip reports whether the commit's runs failed on the
// infrastructure more than two times in three, after three tries at
// least: it is skipped, as syzbot skips such a revision, and not judged.
func (c *commitState) infraSkip() bool { return c.tries >= 3 && 3*c.infra > 2*c.tries }

// countedRuns returns the runs of c that count in comparisons.
func (c *commitState) countedRuns() []Run {
	var out []Run
	for k, r := range c.runs {
		if k < len(c.counts) && c.counts[k] {
			out = append(out, r)
		}
	}
	return out
}

// search is one call of Bisect.
type search struct {
	chain  []string
	oracle Oracle
	// hostOracle is oracle when it can place runs on hosts, else nil.
	hostOracle HostOracle
	opts       Options
	// rounds counts the rounds of runs made at once.
	rounds int
	// lastSeq is the latest Run.Seq of any answer so far (madeRuns).
	lastSeq uint64
	// free counts the runs asked for that madeRuns found already made,
	// which the budget does not charge (see made).
	free    int
	log     *slog.Logger
	worse   float64 // +1 when larger logs are worse (record.Lower), −1 otherwise
	commits []commitState
	// measured lists the commits with values, in chain order.
	measured []int
	samples  int
	// since is the Seq of the search's first fresh run (0 before any).
	since uint64
	// lastRun is the commit of the latest fresh run (−1 before any), and
	// row the number of fresh runs of it in a row.
	lastRun, row int
	// prevRun is the commit of the fresh runs before lastRun's row.
	prevRun int
	// drifting reports whether the host's drift was significant at the
	// latest screening.
	drifting bool
	// driftModel is the host's drift fitted at the latest screening, when
	// driftFit.
	driftModel driftModel
	driftFit   bool
	// limit is the run budget of the current phase (at most MaxRuns).
	limit int
	// scale is the pooled robust σ used for screening.
	scale    float64
	warnings []record.Warning
	last     struct { // latest posterior summary, for progress events
		best string
		p    float64
	}
}

// Bisect finds the commit (or commits) of chain that changed the metric.
// chain is the first-parent chain, oldest first: chain[0] is the good end
// and chain[len(chain)-1] the bad end. The method is described in the
// package documentation. Bisect returns an *InfraError when the oracle
// fails for a reason other than a broken commit, and an error wrapping
// record.ErrBroken when an end itself cannot be measured.
func Bisect(ctx context.Context, chain []string, o Oracle, opts Options) (*Result, error) {
	if err := validateChain(chain); err != nil {
		return nil, err
	}
	if o == nil {
		return nil, errors.New("bisect: nil oracle")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &search{
		chain:   chain,
		oracle:  o,
		opts:    opts,
		log:     opts.Logger,
		worse:   -1,
		commits: make([]commitState, len(chain)),
		limit:   opts.MaxRuns,
		lastRun: -1,
		prevRun: -1,
	}
	s.hostOracle, _ = o.(HostOracle)
	if opts.Better == record.Lower {
		s.worse = 1
	}
	return s.run(ctx)
}

// validateChain rejects chains the search cannot work on.
func validateChain(chain []string) error {
	if len(chain) < 2 {
		return fmt.Errorf("bisect: chain needs a good and a bad commit, got %d commits", len(chain))
	}
	seen := make(map[string]int, len(chain))
	for i, c := range chain {
		if c == "" {
			return fmt.Errorf("bisect: chain[%d] is empty", i)
		}
		if j, ok := seen[c]; ok {
			return fmt.Errorf("bisect: commit %q appears twice in the chain (at %d and %d)", c, j, i)
		}
		seen[c] = i
	}
	return nil
}

// withDefaults fills in the zero fields and rejects values that make no
// sense.
func (o Options) withDefaults() (Options, error) {
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if o.MinEffect == 0 {
		o.MinEffect = DefaultMinEffect
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = DefaultMaxRuns
	}
	if o.Better == "" {
		o.Better = record.Higher
	}
	if o.Direction == "" {
		o.Direction = record.Regression
	}
	if o.Parallel == 0 {
		o.Parallel = max(1, len(o.Hosts))
	}
	if o.InitialRuns == 0 {
		o.InitialRuns = DefaultInitialRuns
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case o.Confidence <= 0.5 || o.Confidence >= 1:
		return o, fmt.Errorf("bisect: confidence %v is not between 0.5 and 1", o.Confidence)
	case o.MinEffect < 0 || o.MinEffect >= 1:
		return o, fmt.Errorf("bisect: minimum effect %v is not a fraction in [0, 1)", o.MinEffect)
	case o.MaxRuns < 0:
		return o, fmt.Errorf("bisect: max runs %d is negative", o.MaxRuns)
	case o.Parallel < 0:
		return o, fmt.Errorf("bisect: parallel %d is negative", o.Parallel)
	case len(o.Hosts) > 0 && o.Parallel != len(o.Hosts):
		return o, fmt.Errorf("bisect: parallel %d, but %d hosts are named", o.Parallel, len(o.Hosts))
	case slices.Contains(o.Hosts, ""):
		return o, errors.New("bisect: a host of Options.Hosts has no name")
	case o.InitialRuns < 2:
		return o, fmt.Errorf("bisect: initial runs %d: the ends need at least 2 runs each", o.InitialRuns)
	}
	switch o.Better {
	case record.Higher, record.Lower:
	default:
		return o, fmt.Errorf("bisect: unknown metric direction %q (want %q or %q)", o.Better, record.Higher, record.Lower)
	}
	switch o.Direction {
	case record.Regression, record.Improvement, record.Any:
	default:
		return o, fmt.Errorf("bisect: unknown search direction %q (want %q, %q or %q)", o.Direction, record.Regression, record.Improvement, record.Any)
	}
	return o, nil
}

// found is one localized change: a single culprit commit, or a group of
// candidates (a broken block and the commit after it).
type found struct {
	first, last int // chain indices; first == last for a culprit
	p           float64
}

// span is a range of the chain still to search: lo is on the good side of
// the change being looked for and hi on the bad side.
type span struct{ lo, hi int }

// run verifies the ends, then searches the whole chain and every residual
// range that still differs.
func (s *search) run(ctx context.Context) (*Result, error) {
	good, bad := 0, len(s.chain)-1
	// What the oracle already holds counts: a rerun of a job, or ends
	// measured by the nightly cycle, costs nothing.
	for _, i := range []int{good, bad} {
		if err := s.measure(ctx, PhaseVerify, i, 0); err != nil {
			return nil, err
		}
	}
	out, dir, err := s.compareEnds(ctx, endsTest{
		phase:      PhaseVerify,
		a:          good,
		b:          bad,
		minRuns:    s.opts.InitialRuns,
		shown:      verifyShown,
		sameRuns:   max(notReproducedRuns, s.opts.InitialRuns),
		noisy:      true,
		sameTail:   s.notReproducedTail(),
		sameEffect: s.opts.Expected / 2,
		maxNew:     s.opts.MaxRuns / 2,
	})
	if err != nil {
		return nil, err
	}
	res := &Result{Direction: s.opts.Direction}
	switch out {
	case endsSame:
		res.Verdict = record.OutcomeNotReproduced
		if w, ok := s.otherWay(endsTest{a: good, b: bad, shown: verifyShown}, good, bad); ok {
			s.warn(w)
		}
		return s.finish(res, nil), nil
	case endsUndecided:
		res.Verdict = record.OutcomeInconclusive
		w := record.Warning{Kind: record.WarnEndsUndecided, From: s.chain[good], To: s.chain[bad], Runs: s.samples}
		if len(s.valueless(span{good, bad})) > 0 {
			w = s.noValues(span{good, bad})
		}
		s.warn(w)
		return s.finish(res, nil), nil
	}
	s.log.Debug("ends differ", "direction", dir, "samples", s.samples)

	var changes []found
	todo := []span{{good, bad}}
	// halves are the ranges that a commit between two changes split a
	// range into; each holds a change its runs already showed, so neither
	// is bounded as a residual range is.
	halves := map[span]bool{}
	for len(todo) > 0 {
		sp := todo[0]
		todo = todo[1:]
		s.limit = s.opts.MaxRuns
		if !s.isWhole(sp) && !halves[sp] {
			// A residual range admitted by a chance difference has no
			// culprit to find and would spend the whole budget, so its
			// search is bounded by what the search has cost so far
			// (residualSpanShare).
			s.limit = min(s.opts.MaxRuns, residualSpanShare*s.samples)
		}
		f, further, out, err := s.searchSpan(ctx, sp)
		if err != nil {
			return nil, err
		}
		switch out {
		case spanVanished:
			s.warn(record.Warning{Kind: record.WarnRangeDropped, From: s.chain[sp.lo], To: s.chain[sp.hi]})
			if s.isWhole(sp) {
				res.Verdict = record.OutcomeNotReproduced
			}
			continue
		case spanExhausted, spanNoValues:
			if len(changes) == 0 {
				res.Verdict = record.OutcomeInconclusive
			}
			w := record.Warning{Kind: record.WarnBudgetSpent, From: s.chain[sp.lo], To: s.chain[sp.hi],
				Runs: s.limit, Commit: s.last.best, P: s.last.p}
			if out == spanNoValues {
				w = s.noValues(sp)
			}
			s.warn(w)
			continue
		}
		if out == spanSplit {
			for _, h := range further {
				halves[h] = true
			}
			todo = append(further, todo...)
			continue
		}
		changes = append(changes, f)
		todo = append(todo, further...)
	}
	return s.finish(res, changes), nil
}

// searchSpan locates the change of one range and checks the two ranges
// beside it for further changes, returning those that differ. When the
// range holds two changes with a measured commit between them
// (spanSplit), it returns the two halves beside that commit instead.
//
// The residual checks measure the commits next to the culprit again, which
// is the evidence a wrong culprit is most likely to be wrong about; their
// runs go back into the posterior, and a culprit that no longer holds the
// configured confidence sends the search back to bisecting the range.
func (s *search) searchSpan(ctx context.Context, sp span) (found, []span, spanOutcome, error) {
	threshold := min(tentativeConfidence, s.opts.Confidence)
	kept := len(s.warnings)
	for {
		f, out, err := s.bisectSpan(ctx, sp, threshold)
		if err == nil && out == spanSplit {
			return f, []span{{sp.lo, f.last}, {f.last, sp.hi}}, out, nil
		}
		if err != nil || out != spanLocated {
			return f, nil, out, err
		}
		// The residual checks of a culprit that does not hold say nothing
		// about the final one.
		s.warnings = s.warnings[:kept]
		var further []span
		for _, r := range []span{{sp.lo, f.first - 1}, {f.last, sp.hi}} {
			differ, err := s.residualDiffers(ctx, r)
			if err != nil {
				return f, nil, spanExhausted, err
			}
			if differ {
				further = append(further, r)
			}
		}
		// The residual runs rescreen every commit; a posterior that lost
		// an end confirms nothing, and the search measures that end.
		f.p = 0
		if post, ok := s.posterior(sp); ok {
			f.p = post.cdf(f.last) - post.cdf(f.first-1)
		}
		if f.p >= s.opts.Confidence {
			return f, further, spanLocated, nil
		}
		s.log.Debug("culprit not confirmed by the residual runs", "commit", s.chain[f.last], "p", f.p)
		// From here on bisect to the full confidence: the residual checks
		// of an unchanged culprit add no runs and would loop.
		threshold = s.opts.Confidence
	}
}

// notReproducedTail is the probability of a change of at least the
// minimum effect below which two commits are called the same for good:
// the evidence a culprit needs (1−Confidence). The change a search is
// started for is larger than the minimum effect, so ends that hold it
// fall that far into the tail only by chance many standard errors wide.
func (s *search) notReproducedTail() float64 {
	if s.opts.SameTail > 0 {
		return s.opts.SameTail
	}
	return (1 - s.opts.Confidence) * notReproducedFactor
}

// residualDiffers checks whether the ends of a range beside a culprit
// still differ, i.e. whether the range holds a further change. The check
// may add up to residualShare of the runs the search has made so far: a
// check that cannot decide within that stops instead of spending on, and
// when a further change of the minimum effect is still plausible (at
// least plausibleTail) it says that a second change here was not excluded
// (record.WarnSecondChange, with that probability).
func (s *search) residualDiffers(ctx context.Context, r span) (bool, error) {
	if r.hi-r.lo < 1 {
		return false, nil
	}
	budget := max(residualMinBudget, int(math.Ceil(residualShare*float64(s.samples))))
	before := s.samples
	out, _, err := s.compareEnds(ctx, endsTest{
		phase:     PhaseResidual,
		a:         r.lo,
		b:         r.hi,
		minRuns:   min(residualMinRuns, s.opts.InitialRuns),
		alpha:     residualAlpha,
		sameTail:  residualSameTail,
		maxNew:    budget,
		extendNew: int(math.Ceil(residualExtendShare * float64(s.samples))),
		futile:    true,
	})
	if err != nil {
		return false, err
	}
	if out == endsUndecided {
		if tail := s.changeTail(r); tail >= plausibleTail {
			s.warn(record.Warning{Kind: record.WarnSecondChange, From: s.chain[r.lo], To: s.chain[r.hi],
				Runs: s.samples - before, P: tail})
		}
	}
	return out == endsDiffer, nil
}

// changeTail is the probability of a change of at least the minimum effect
// in a searched direction between the ends of r.
func (s *search) changeTail(r span) float64 {
	delta, se, df, ok := s.compare(r.lo, r.hi)
	if !ok {
		return 1
	}
	_, _, tail := s.tails(delta, se, df, 0, 0)
	return tail
}

// isWhole reports whether sp is the whole chain.
func (s *search) isWhole(sp span) bool { return sp.lo == 0 && sp.hi == len(s.chain)-1 }

// spanOutcome is how the search of one range ended.
type spanOutcome int

const (
	spanLocated   spanOutcome = iota
	spanExhausted             // the run budget ran out
	spanVanished              // the ends, measured more, do not differ
	spanNoValues              // the budget ran out while an end had no clean value
	spanSplit                 // two changes, found.last's level between them
)

// bisectSpan searches one range for a single change point, unless its
// runs show two.
//
// The single-change model always has a most probable culprit, even where
// there is no change; a range whose ends were called different by chance
// would spend the whole budget. Reference balancing keeps adding runs to
// the ends, so after every round the ends are compared again with the
// strict rule for "same", and a range whose change has vanished is dropped.
//
// Two changes in one range leave the commits between them at a level
// between the ends' levels, which the single-change model takes for one
// of the two and places its culprit where the runs make the other change
// look smallest (see middleLevel). After every round the runs are weighed
// under two changes against one; once two are clearly the better account,
// the search returns the commit between them (spanSplit).
func (s *search) bisectSpan(ctx context.Context, sp span, threshold float64) (found, spanOutcome, error) {
	broken := func(i int) bool { return s.commits[i].broken }
	recheck := endsTest{a: sp.lo, b: sp.hi, alpha: verifyAlpha, sameTail: s.notReproducedTail(), sameRuns: max(notReproducedRuns, s.opts.InitialRuns)}
	if !s.isWhole(sp) {
		// A residual range was admitted by the residual check; the same
		// rule lets it go.
		recheck = endsTest{a: sp.lo, b: sp.hi, alpha: residualAlpha, sameTail: residualSameTail}
	}
	middleRuns := 0
	for {
		if err := ctx.Err(); err != nil {
			return found{}, spanExhausted, err
		}
		ends, _ := s.decideEnds(recheck)
		if ends == endsSame {
			return found{}, spanVanished, nil
		}
		post, ok := s.posterior(sp)
		if !ok {
			// An end has no value to compare (its runs do not count yet,
			// or none is usable): the posterior has nothing to rest on,
			// and that end is measured until it has one.
			e := s.valueless(sp)[0]
			if s.inRow(e) {
				e = sp.lo + sp.hi - e
			}
			if !s.budgetFor(1) {
				return found{}, spanNoValues, nil
			}
			if err := s.measureRound(ctx, PhaseBisect, []int{e}); err != nil {
				return found{}, spanExhausted, err
			}
			continue
		}
		if reqs := s.missingEnds(); len(reqs) > 0 {
			// A host measures probes only once it holds runs of both
			// ends: its speed is measured by them.
			if !s.budgetFor(len(reqs)) {
				return found{}, spanExhausted, nil
			}
			if err := s.measureRequests(ctx, PhaseBisect, reqs); err != nil {
				return found{}, spanExhausted, err
			}
			continue
		}
		pos, posP, group, groupP := post.best(broken)
		s.last.best, s.last.p = s.chain[pos], posP
		endgame := s.opts.Parallel == 1 && group > 0 && post.measured[group-1]+1 == post.measured[group]
		located := group > 0 && groupP >= threshold && s.settled(post.measured[group-1], post.measured[group]) && !(endgame && s.pairShort(post.measured[group-1], post.measured[group]))
		culprit := -1
		if located {
			culprit = post.measured[group]
		}
		split, probe := s.middleLevel(sp, culprit)
		if split >= 0 {
			s.log.Debug("two changes", "middle", s.chain[split], "samples", s.samples)
			return found{first: split, last: split}, spanSplit, nil
		}
		if located && probe >= 0 && ends != endsUndecided && s.budgetFor(1) && float64(middleRuns) < middleShare*float64(s.samples-middleRuns) {
			// Two changes are still a plausible account of the runs:
			// before the culprit is taken up, the runs that tell them
			// from one are made.
			middleRuns++
			if err := s.measureRound(ctx, PhaseBisect, []int{probe}); err != nil {
				return found{}, spanExhausted, err
			}
			continue
		}
		if located {
			f := found{first: post.measured[group-1] + 1, last: post.measured[group], p: groupP}
			s.log.Debug("located", "first", s.chain[f.first], "last", s.chain[f.last], "p", groupP, "samples", s.samples)
			return f, spanLocated, nil
		}
		var probes []int
		switch {
		case ends == endsUndecided:
			// The ends no longer show the change: until they do again,
			// or show that there is none, a probe has nothing to be
			// compared with.
			probes = []int{s.nextEnd(recheck)}
		case endgame && groupP >= endgameConfidence:
			probes = []int{s.pairProbe(post.measured[group-1], post.measured[group])}
		default:
			probes = s.chooseProbes(post, sp)
		}
		if len(probes) == 1 && probes[0] == s.lastRun && (s.drifting || s.inRow(probes[0])) {
			// On a drifting host, runs of one commit in a row share the
			// host's state of that moment; a reference run between them
			// lets the drift be told from the commit. (A steady host is
			// spared the extra reference runs until the row grows so long
			// that its runs would not count.)
			nGood, nBad := s.references(post, sp)
			if e := s.weakerEnd(sp, nGood, nBad, func(i int) bool { return i == s.lastRun }); e >= 0 {
				probes = []int{e}
			}
		}
		probes = probes[:max(0, min(len(probes), s.limit-s.samples))]
		if len(probes) == 0 {
			return found{}, spanExhausted, nil
		}
		if err := s.measureRound(ctx, PhaseBisect, probes); err != nil {
			return found{}, spanExhausted, err
		}
	}
}

// nextEnd returns the end of a comparison to measure next: the one with
// fewer runs that count, or on a tie the one not measured last.
func (s *search) nextEnd(t endsTest) int {
	na, nb := s.commits[t.a].n, s.commits[t.b].n
	next := t.a
	if nb < na || (nb == na && s.lastRun == t.a) {
		next = t.b
	}
	if s.inRow(next) {
		next = t.a + t.b - next
	}
	return next
}

// pairShort reports whether the two commits beside a change have fewer
// runs that count than the confirmation's least number of pairs, while
// the budget has room for them: the search's runs of the two are the
// confirmation's first evidence, and one more run of the smaller side
// now costs less than the fresh pair of runs the confirmation would add.
func (s *search) pairShort(parent, culprit int) bool {
	short := max(0, minPairs-s.commits[parent].n) + max(0, minPairs-s.commits[culprit].n)
	// Fewer pairs do when the change stands out of the noise the
	// search has measured: the confirmation's other rule.
	return short > 0 && s.budgetFor(short) && !s.standsOut(parent, culprit)
}

// settled reports whether the noise within commits rests on enough
// degrees of freedom for a culprit between parent and culprit to be
// taken up: minWithinDF, or minStandOutDF when their change stands out
// of that noise.
func (s *search) settled(parent, culprit int) bool {
	df := s.withinDF()
	return df >= minWithinDF || (df >= minStandOutDF && s.standsOut(parent, culprit))
}

// standsOut reports whether the runs of parent and culprit show a change,
// either way, that stands out of the noise the search has measured
// (shownByNoise, Confirm's rule too): a change many times the noise,
// which more runs of the two would only repeat. It judges the clean runs,
// those the screen kept, as the posterior does.
func (s *search) standsOut(parent, culprit int) bool {
	return shownByNoise(s.clean(parent), s.clean(culprit), s.noise(), 0)
}

// noise is the pooled noise of the runs within commits, when it may stand
// for the noise of a comparison of two commits: on one steady host. Its
// Scale is the one the screen used, so that Confirm screens its runs as
// the search did.
func (s *search) noise() Noise {
	if s.drifting || len(s.opts.Hosts) > 1 {
		return Noise{}
	}
	sigma, df := s.pooledSigma()
	return Noise{Sigma: sigma, DF: df, Scale: s.scale}
}

// pairProbe returns the next of the two commits beside a change to run,
// so that their runs pair up in time in the pattern A B B A A B …: after a
// run of one that followed a run of the other, that one again; otherwise
// the other. A steady trend of the host then favours neither commit. When
// one of them has a single run that counts more than the other, it goes
// first: the confirmation's pairs rest on the smaller side, and the
// pattern entered one run off would keep it a run short (a wider gap is
// left to the pattern, which never runs one commit three times in a row).
func (s *search) pairProbe(parent, culprit int) int {
	other := func(i int) int { return parent + culprit - i }
	np, nc := s.commits[parent].n, s.commits[culprit].n
	twice := func(i int) bool { return s.lastRun == i && s.row >= 2 }
	switch {
	case np+1 == nc && !twice(parent):
		return parent
	case nc+1 == np && !twice(culprit):
		return culprit
	case s.lastRun != parent && s.lastRun != culprit:
		return culprit
	case s.row == 1 && s.prevRun == other(s.lastRun):
		return s.lastRun
	}
	return other(s.lastRun)
}

// chooseProbes picks the commits of the next round: one per host, at the
// posterior quantiles j/(K+1), preferring measured commits (snapping) and
// running an end instead of a probe that has as many runs as that end
// (reference balancing).
func (s *search) chooseProbes(post *posterior, sp span) []int {
	k := s.opts.Parallel
	broken := func(i int) bool { return s.commits[i].broken }
	chosen := make([]int, 0, k)
	taken := func(i int) bool { return slices.Contains(chosen, i) }
	nGood, nBad := s.references(post, sp)
	for j := 1; j <= k; j++ {
		target := float64(j) / float64(k+1)
		ideal, idealDist, measured, measuredDist := post.nearest(target, broken, taken)
		m := ideal
		if measured >= 0 && measuredDist <= idealDist+snapDistance {
			m = measured
		}
		if m < 0 || float64(s.commits[m].n) >= refShare*float64(min(nGood, nBad)) {
			if e := s.weakerEnd(sp, nGood, nBad, taken); e >= 0 {
				m = e
			}
		}
		if m >= 0 {
			chosen = append(chosen, m)
		}
	}
	return chosen
}

// references returns the runs that pin down the good and the bad level:
// those of the commits whose side the posterior already knows (the ends,
// and the commits at most refUncertainty away from certain).
func (s *search) references(post *posterior, sp span) (nGood, nBad int) {
	for _, i := range s.measured {
		if i < sp.lo || i > sp.hi {
			continue
		}
		switch c := post.cdf(i); {
		case c <= refUncertainty:
			nGood += s.commits[i].n
		case c >= 1-refUncertainty:
			nBad += s.commits[i].n
		}
	}
	return nGood, nBad
}

// weakerEnd returns the end of the range on the side with fewer reference
// runs that is not taken yet, or −1.
func (s *search) weakerEnd(sp span, nGood, nBad int, taken func(int) bool) int {
	ends := []int{sp.lo, sp.hi}
	if nBad < nGood {
		ends = []int{sp.hi, sp.lo}
	}
	for _, e := range ends {
		if !taken(e) {
			return e
		}
	}
	return -1
}

// posterior returns the posterior of range sp, or false when an end of sp
// has no clean value: the posterior is over the positions between two
// measured ends, and without one it would place the change outside them,
// or nowhere.
func (s *search) posterior(sp span) (*posterior, bool) {
	if len(s.valueless(sp)) > 0 {
		return nil, false
	}
	if s.driftFit {
		return s.driftPosterior(sp), true
	}
	return newPosterior(s.spanStats(sp)), true
}

// driftPosterior is the posterior of range sp under the drift model, over
// the measured commits of sp with a clean value.
func (s *search) driftPosterior(sp span) *posterior {
	var measured []int
	var values [][]float64
	var at [][]int
	for _, i := range s.measured {
		if i < sp.lo || i > sp.hi || len(s.commits[i].clean) == 0 {
			continue
		}
		measured = append(measured, i)
		values = append(values, s.commits[i].level)
		at = append(at, s.commits[i].at)
	}
	return driftPosterior(measured, values, at)
}

// valueless returns the ends of sp without a clean value.
func (s *search) valueless(sp span) []int {
	var out []int
	for _, e := range []int{sp.lo, sp.hi} {
		if len(s.clean(e)) == 0 {
			out = append(out, e)
		}
	}
	return out
}

// noValues is the warning of a search that spent its budget while an end
// of sp had no clean value.
func (s *search) noValues(sp span) record.Warning {
	w := record.Warning{Kind: record.WarnNoValues, From: s.chain[sp.lo], To: s.chain[sp.hi], Runs: s.limit}
	for _, e := range s.valueless(sp) {
		w.Commits = append(w.Commits, s.chain[e])
	}
	return w
}

// spanStats returns the statistics of the measured commits of a range.
// Values are centred on the good end's first clean value so that the
// prefix sums keep their precision.
func (s *search) spanStats(sp span) []segmentStats {
	var centre float64
	if c := s.commits[sp.lo].clean; len(c) > 0 {
		centre = c[0]
	}
	var out []segmentStats
	from, _ := slices.BinarySearch(s.measured, sp.lo)
	for _, i := range s.measured[from:] {
		if i > sp.hi {
			break
		}
		c := s.commits[i].clean
		if len(c) == 0 {
			continue
		}
		st := segmentStats{index: i, n: float64(len(c))}
		for _, y := range c {
			st.sum += y - centre
			st.sumSq += (y - centre) * (y - centre)
		}
		out = append(out, st)
	}
	return out
}

// inRow reports whether another run of commit i now would extend a row of
// its runs beyond pairWindow, where runs no longer count until a run of
// another commit follows.
func (s *search) inRow(i int) bool { return s.lastRun == i && s.row >= pairWindow }

// budgetFor reports whether n more runs fit in the budget.
func (s *search) budgetFor(n int) bool { return s.samples+n <= s.limit }

// measureOne asks the oracle for one more run of commit i.
func (s *search) measureOne(ctx context.Context, phase string, i int) error {
	return s.measureRound(ctx, phase, []int{i})
}

// measureRound asks for one more run of each commit, concurrently, placed
// on the hosts (see place), and records the answers in the order given.
func (s *search) measureRound(ctx context.Context, phase string, idx []int) error {
	if len(idx) == 1 && !s.placed() {
		s.rounds++
		return s.measure(ctx, phase, idx[0], len(s.commits[idx[0]].runs)+1)
	}
	return s.measureRequests(ctx, phase, s.place(idx))
}

// measureRequests makes one round of runs at once: one run of each
// request, on its host where it names one.
func (s *search) measureRequests(ctx context.Context, phase string, reqs []request) error {
	s.rounds++
	before := s.lastSeq
	type answer struct {
		runs []Run
		err  error
	}
	answers := make([]answer, len(reqs))
	var wg sync.WaitGroup
	for j, r := range reqs {
		commit := s.chain[r.i]
		if r.host != "" && s.hostOracle != nil {
			n := s.runsOn(r.i, r.host) + 1
			wg.Go(func() {
				v, err := s.hostOracle.SamplesOn(ctx, commit, r.host, n)
				answers[j] = answer{v, err}
			})
			continue
		}
		n := len(s.commits[r.i].runs) + 1
		wg.Go(func() {
			v, err := s.oracle.Samples(ctx, commit, n)
			answers[j] = answer{v, err}
		})
	}
	wg.Wait()
	// A host that left the pool leaves the search's placement, and its
	// answers count for no commit.
	done := map[int]bool{}
	for j, r := range reqs {
		if err := answers[j].err; errors.Is(err, ErrHostGone) {
			if r.host == "" {
				return infraError(s.chain[r.i], err)
			}
			s.dropHost(r.host, err)
			done[j] = true
		}
	}
	// The answers of one commit are merged: each holds the runs recorded
	// when it returned, the last one every fresh run of the round.
	var first error
	merged := map[int]bool{}
	for j, r := range reqs {
		if merged[r.i] {
			continue
		}
		merged[r.i] = true
		var runs []Run
		var failed []error
		fresh := 0
		for k := j; k < len(reqs); k++ {
			if reqs[k].i != r.i || done[k] {
				continue
			}
			if a := answers[k]; a.err != nil {
				failed = append(failed, a.err)
			} else {
				fresh++
				if len(a.runs) > len(runs) {
					runs = a.runs
				}
			}
		}
		var err error
		switch {
		case fresh == 0 && len(failed) == 0:
			continue // asked only of hosts that left
		case fresh > 0:
			s.tryFailed(r.i, len(failed))
			if len(runs) < len(s.commits[r.i].runs)+fresh {
				err = s.recordErr(ctx, phase, r.i, fresh, infraError(s.chain[r.i], fmt.Errorf("asked for %d runs, got %d", len(s.commits[r.i].runs)+fresh, len(runs))))
			} else {
				err = s.recordRuns(phase, r.i, s.made(len(s.commits[r.i].runs), fresh, runs, before), runs)
			}
		default:
			err = s.recordErr(ctx, phase, r.i, len(failed), failed[0])
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// measure asks the oracle for at least n runs of commit i.
func (s *search) measure(ctx context.Context, phase string, i, n int) error {
	v, err := s.oracle.Samples(ctx, s.chain[i], n)
	fresh := max(n-len(s.commits[i].runs), 0)
	switch {
	case err == nil && len(v) < n:
		return s.recordErr(ctx, phase, i, fresh, infraError(s.chain[i], fmt.Errorf("asked for %d runs, got %d", n, len(v))))
	case err == nil:
		return s.recordRuns(phase, i, s.made(len(s.commits[i].runs), fresh, v, s.lastSeq), v)
	}
	return s.recordErr(ctx, phase, i, fresh, err)
}

// made is madeRuns bounded: runs an answer held already are free, but no
// more of them than a whole budget. Past that every run asked for is
// charged: an oracle whose places in time go backwards (stamps near 2^64
// that wrap, a stamp repeated) would otherwise hand out new runs that the
// search takes for old ones, and the search would ask for more forever.
func (s *search) made(known, asked int, runs []Run, before uint64) int {
	n := madeRuns(known, asked, runs, before)
	if s.free += asked - n; s.free > s.limit {
		return asked
	}
	return n
}

// madeRuns is how many of the asked runs of a commit the oracle made,
// given the runs the search knew of and the latest Seq it had seen before
// it asked. An oracle runs a commit only up to the number asked for, so
// an answer of more runs than the search knew of and asked for together
// held them all already (runs an earlier search of the same job took,
// which this one had not read) and made none; where the runs carry Seqs,
// the new ones are those later than every run seen before.
func madeRuns(known, asked int, runs []Run, before uint64) int {
	if len(runs) > known+asked {
		return 0
	}
	if before == 0 {
		return asked
	}
	made := 0
	for _, r := range runs[min(known, len(runs)):] {
		if r.Seq == 0 {
			return asked
		}
		if r.Seq > before {
			made++
		}
	}
	return min(made, asked)
}

// recordRuns stores the runs of commit i the oracle returned, fresh of
// them made now.
func (s *search) recordRuns(phase string, i, fresh int, runs []Run) error {
	c := &s.commits[i]
	s.samples += fresh
	c.tries += fresh
	if len(c.runs) == 0 && len(runs) > 0 {
		at, _ := slices.BinarySearch(s.measured, i)
		s.measured = slices.Insert(s.measured, at, i)
	}
	if fresh > 0 {
		if s.lastRun != i {
			s.prevRun, s.lastRun, s.row = s.lastRun, i, 0
		}
		s.row += fresh
		if s.since == 0 {
			// The runs beyond those the search had are its own.
			for _, r := range runs[min(len(c.runs), len(runs)):] {
				if r.Seq > 0 && (s.since == 0 || r.Seq < s.since) {
					s.since = r.Seq
				}
			}
		}
	}
	for _, r := range runs {
		s.lastSeq = max(s.lastSeq, r.Seq)
	}
	c.runs = slices.Clone(runs)
	s.rescreen()
	s.event(phase, i, StatusOK)
	return nil
}

// recordErr stores a failed oracle answer for tries runs of commit i. A
// broken middle commit is remembered and skipped, and so is one whose runs
// failed on the infrastructure more than two times in three (after three
// tries at least; before that it is tried again when the search asks for
// it). A broken end, an end that fails so on the infrastructure, and any
// other failure end the search.
func (s *search) recordErr(ctx context.Context, phase string, i, tries int, err error) error {
	c := &s.commits[i]
	s.samples += tries
	end := i == 0 || i == len(s.chain)-1
	switch {
	case errors.Is(err, record.ErrBroken):
		if end {
			return fmt.Errorf("bisect: end %s: %w", s.chain[i], err)
		}
		c.broken = true
		s.event(phase, i, StatusBroken)
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("bisect: measure %s: %w", s.chain[i], ctx.Err())
	case errors.Is(err, ErrHostGone), !record.IsInfra(err):
		return infraError(s.chain[i], err)
	}
	c.tries += tries
	c.infra += tries
	if !c.infraSkip() {
		s.log.Debug("infrastructure failure, tried again later", "commit", s.chain[i], "tries", c.tries, "failed", c.infra, "err", err)
		s.event(phase, i, StatusInfra)
		return nil
	}
	if end {
		return infraError(s.chain[i], fmt.Errorf("%d of %d runs failed on the infrastructure: %w", c.infra, c.tries, err))
	}
	// Skipped, not judged: the runs it had leave the comparisons too.
	c.broken = true
	if at, ok := slices.BinarySearch(s.measured, i); ok {
		s.measured = slices.Delete(s.measured, at, at+1)
	}
	c.runs, c.counts, c.clean, c.n = nil, nil, nil, 0
	s.rescreen()
	s.event(phase, i, StatusInfra)
	return nil
}

// tryFailed counts failed tries of commit i within a round in which other
// tries of it succeeded.
func (s *search) tryFailed(i, failed int) {
	s.samples += failed
	s.commits[i].tries += failed
	s.commits[i].infra += failed
}

// event reports a measurement of commit i.
func (s *search) event(phase string, i int, status string) {
	c := &s.commits[i]
	ev := ProbeEvent{
		Phase:     phase,
		Commit:    s.chain[i],
		Index:     i,
		N:         len(c.runs),
		Median:    medianOrZero(Values(c.runs)),
		Status:    status,
		Samples:   s.samples,
		Best:      s.last.best,
		Posterior: s.last.p,
	}
	if phase != PhaseBisect {
		ev.Best, ev.Posterior = "", 0
	}
	s.log.Debug("measured", "phase", phase, "commit", ev.Commit, "index", i, "n", ev.N, "median", ev.Median, "status", ev.Status)
	if s.opts.OnProbe != nil {
		s.opts.OnProbe(ev)
	}
}

// infraError wraps an oracle failure that is not the commit's fault.
func infraError(commit string, err error) error {
	if record.IsInfra(err) {
		return fmt.Errorf("bisect: measure %s: %w", record.ShortHash(commit), err)
	}
	return &record.InfraError{Op: "measure " + record.ShortHash(commit), Err: err}
}

// medianOrZero is the median of xs, or 0 for none (a broken commit in a
// progress line).
func medianOrZero(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.Median(xs)
}

// rescreen recomputes which runs count and the clean log values of every
// commit: the runs beside each run, the host's drift and the pooled scale
// change with every run. The good and bad ends of the whole chain span
// every level a commit can honestly have.
func (s *search) rescreen() {
	all := make([][]Run, len(s.measured))
	for j, i := range s.measured {
		all[j] = s.commits[i].runs
	}
	counts := anchored(all)
	lo, hi := -1, -1
	hosts := make([][]string, len(s.measured))
	for j, i := range s.measured {
		c := &s.commits[i]
		for k, r := range c.runs {
			if counts[j][k] && usable(r) {
				hosts[j] = append(hosts[j], r.machine())
			}
		}
		switch i {
		case 0:
			lo = j
		case len(s.chain) - 1:
			hi = j
		}
	}
	// Runs of different machines compare through the machines' offsets;
	// a machine without one (linked to the good end's by no commit
	// measured on both) counts in no comparison.
	offset, linked := hostOffsets(s.logValues(counts), hosts, lo)
	groups := make([][]float64, len(s.measured))
	ats := make([][]int, len(s.measured))
	for j, i := range s.measured {
		c := &s.commits[i]
		c.counts, c.n = counts[j], 0
		for k, r := range c.runs {
			if !counts[j][k] || !usable(r) || (linked != nil && !linked[r.machine()]) {
				c.counts[k] = false
				continue
			}
			c.n++
			groups[j] = append(groups[j], math.Log(r.Value)-offset[r.machine()])
			ats[j] = append(ats[j], int(r.Seq))
		}
	}
	for j, i := range s.measured {
		s.commits[i].level, s.commits[i].at = groups[j], ats[j]
	}
	groups, s.drifting = removeDrift(groups, ats)
	// Once the quick test has found drift, the drift model is weighed
	// against a steady host at every screening, and given up when it
	// loses.
	if s.drifting || s.driftFit {
		var vs [][]float64
		var as [][]int
		for _, i := range s.measured {
			if c := &s.commits[i]; len(c.level) > 0 {
				vs, as = append(vs, c.level), append(as, c.at)
			}
		}
		s.driftModel, s.driftFit = fitDriftModel(vs, as)
	}
	s.scale = stats.Scale(groups)
	clean := screen(groups, s.scale, lo, hi)
	for j, i := range s.measured {
		s.commits[i].clean = clean[j]
	}
}

// screen returns the groups of log values without their outliers, screened
// at scale against the reference groups lo and hi (stats.Screen; −1 for
// none), except that a group of three runs or more that the screen would
// leave fewer than half of keeps them all. A zero scale screens nothing.
//
// An outlier is the odd run out, never most of a commit's runs. On a host
// that jumps between two speeds every few runs, successive runs agree, so
// the scale is small, while a commit's runs fall into two clusters; when
// the clusters are even its median lies between them, farther than the
// cut from every run, and the screen would leave the commit (an end, as
// like as not) without a value. Its runs are kept, and their spread is
// noise the comparisons see.
func screen(groups [][]float64, scale float64, lo, hi int) [][]float64 {
	clean := stats.Screen(groups, scale, lo, hi)
	for j, g := range groups {
		if len(g) >= 3 && 2*len(clean[j]) < len(g) {
			clean[j] = slices.Clone(g)
		}
	}
	return clean
}

// logValues returns the log values of the runs of the measured commits
// that counts marks and that are usable, in the order of s.measured.
func (s *search) logValues(counts [][]bool) [][]float64 {
	out := make([][]float64, len(s.measured))
	for j, i := range s.measured {
		for k, r := range s.commits[i].runs {
			if counts[j][k] && usable(r) {
				out[j] = append(out[j], math.Log(r.Value))
			}
		}
	}
	return out
}

// clean returns the screened log values of commit i.
func (s *search) clean(i int) []float64 { return s.commits[i].clean }

// pooledSigma returns the classical pooled standard deviation of the clean
// log values around their commits' means, and its degrees of freedom.
func (s *search) pooledSigma() (sigma, df float64) {
	groups := make([][]float64, 0, len(s.measured))
	for _, i := range s.measured {
		groups = append(groups, s.commits[i].clean)
	}
	return stats.Pooled(groups...)
}

func (s *search) warn(w record.Warning) {
	s.warnings = append(s.warnings, w)
}

// withinDF is the degrees of freedom of the noise within commits: the runs
// that count beyond one per commit.
func (s *search) withinDF() float64 {
	df := 0
	for _, i := range s.measured {
		if n := len(s.commits[i].clean); n > 1 {
			df += n - 1
		}
	}
	return float64(df)
}

// endsAlpha is the error allowed when the ends are first called
// different: a modest one where the noise is no larger than the minimum
// effect, so that the search starts as soon as the change is clear, and a
// strict one on a noisy host, where a search started from ends measured
// that thinly would trust a posterior resting on too few runs.
func (s *search) endsAlpha() float64 {
	if r := s.noiseRatio(); r > noisyRatio {
		return strictVerifyAlpha
	}
	return verifyAlpha
}

// noiseRatio is (σ/MinEffect)², the runs a side it takes to tell a
// difference of the minimum effect apart, with σ from the runs so far (a
// run's σ when there are none).
func (s *search) noiseRatio() float64 {
	sigma, df := s.pooledSigma()
	if df == 0 {
		return 1
	}
	r := sigma / math.Log1p(s.opts.MinEffect)
	return r * r
}

// middleLevel weighs the runs of range sp under two changes in one
// direction against one change. It returns split, a measured commit that
// lies between the two changes, once they are clearly the better account
// (splitLogBF, with enough runs to know the noise); or, while they are
// plausible (plausibleLogBF) and the single-change search has a culprit
// (culprit ≥ 0), probe: the commit whose next run tells the two accounts
// apart best. Either is −1 when there is none.
//
// The single-change search takes the commits between two changes for one
// of the two levels and stops where the runs make the other change look
// smallest, so the runs of its culprit and parent understate a second
// change beside them (the residual checks compare just those). The
// two-change model pools every commit at the middle level instead. The
// accounts disagree on the level of the commits beside the culprit (the
// middle one) and on the level beyond the other change; of the two, the
// one resting on fewer runs is measured: the commit most surely in the
// middle, or the range's end beyond the other change.
//
// On a drifting or noisy host the model is not consulted: the posterior
// there rests on the drift model, and on a noisy host the two accounts
// take many runs to tell apart, so that a chance middle level would
// cost a second search in error.
func (s *search) middleLevel(sp span, culprit int) (split, probe int) {
	split, probe = -1, -1
	if s.driftFit || s.noiseRatio() > noisyRatio {
		return split, probe
	}
	st := s.spanStats(sp)
	tc := newTwoChanges(st, middleStep*math.Log1p(s.opts.MinEffect))
	if tc.logBF < plausibleLogBF {
		return split, probe
	}
	// mid is the commit most surely in the middle, and sure the one with
	// the most runs of those sure enough to split at: its runs are an end
	// of both halves.
	mid, sure := -1, -1
	for k := tc.first; k < tc.second; k++ {
		if s.commits[st[k].index].broken {
			continue
		}
		if mid < 0 || tc.middle[k] > tc.middle[mid] {
			mid = k
		}
		if tc.middle[k] >= middleSure && (sure < 0 || st[k].n > st[sure].n) {
			sure = k
		}
	}
	if sure >= 0 && tc.logBF >= splitLogBF && s.withinDF() >= minWithinDF {
		return st[sure].index, probe
	}
	if mid < 0 || culprit < 0 {
		return split, probe
	}
	first := culprit <= st[tc.first].index // the culprit is the first change
	var nMid, nOut float64
	for k, x := range st {
		switch {
		case k >= tc.first && k < tc.second:
			nMid += x.n
		case first == (k >= tc.second):
			nOut += x.n
		}
	}
	end := sp.hi
	if !first {
		end = sp.lo
	}
	probe = st[mid].index
	if (nOut <= nMid && !s.inRow(end)) || s.inRow(probe) {
		probe = end
	}
	return split, probe
}
