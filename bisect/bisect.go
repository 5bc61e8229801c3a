package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync"

	"github.com/perfbot/perfbot/record"
)

// Defaults of Options.
const (
	DefaultConfidence  = 0.99
	DefaultMinEffect   = 0.02
	DefaultMaxRuns     = 400
	DefaultInitialRuns = 3
)

// Tuning of the bisection, chosen by simulation (cmd/bench-bisect).
const (
	// snapDistance is how much worse a split an already-measured commit
	// may give than the ideal one and still be preferred: another run of a
	// measured commit costs no build and tells more than a first run
	// elsewhere.
	snapDistance = 0.2
	// refUncertainty is how unsure the posterior may be of a commit's side
	// for the commit to count as a reference in reference balancing.
	refUncertainty = 0.05
	// tentativeConfidence is where a culprit is first taken up for the
	// residual checks; their runs then confirm it (or not) to the full
	// confidence.
	tentativeConfidence = 0.95
)

// Phases reported in ProbeEvent.
const (
	PhaseVerify   = "verify"
	PhaseBisect   = "bisect"
	PhaseResidual = "residual"
)

// commitState is what the search knows about one commit of the chain.
type commitState struct {
	raw    []float64 // values as the oracle returned them
	at     []int     // place of each raw value in the order of runs; −1: from the cache
	clean  []float64 // log values left after outlier screening
	broken bool
}

// search is one call of Bisect.
type search struct {
	chain   []string
	oracle  Oracle
	opts    Options
	log     *slog.Logger
	worse   float64 // +1 when larger logs are worse (record.Lower), −1 otherwise
	commits []commitState
	// measured lists the commits with values, in chain order.
	measured []int
	samples  int
	// clock counts the runs this search made, in order.
	clock int
	// lastRun is the commit of the latest fresh run (−1 before any).
	lastRun int
	// drifting reports whether the host's drift was significant at the
	// latest screening.
	drifting bool
	// limit is the run budget of the current phase (at most MaxRuns).
	limit int
	// scale is the pooled robust σ used for screening and intervals.
	scale    float64
	warnings []string
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
// ErrBroken when an end itself cannot be measured.
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
	}
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
		o.Parallel = 1
	}
	if o.InitialRuns == 0 {
		o.InitialRuns = DefaultInitialRuns
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
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
		phase:    PhaseVerify,
		a:        good,
		b:        bad,
		minRuns:  s.opts.InitialRuns,
		sameRuns: max(notReproducedRuns, s.opts.InitialRuns),
		alpha:    verifyAlpha,
		sameTail: s.notReproducedTail(),
		maxNew:   s.opts.MaxRuns / 2,
	})
	if err != nil {
		return nil, err
	}
	res := &Result{Direction: s.opts.Direction}
	switch out {
	case endsSame:
		res.Verdict = record.OutcomeNotReproduced
		return s.finish(res, nil), nil
	case endsUndecided:
		res.Verdict = record.OutcomeInconclusive
		s.warnf("the ends could not be told apart within %d runs", s.samples)
		return s.finish(res, nil), nil
	}
	s.log.Debug("ends differ", "direction", dir, "samples", s.samples)

	var changes []found
	todo := []span{{good, bad}}
	for len(todo) > 0 {
		sp := todo[0]
		todo = todo[1:]
		s.limit = s.opts.MaxRuns
		if !s.isWhole(sp) {
			// A residual range admitted by a chance difference has no
			// culprit to find and would spend the whole budget; it may
			// cost at most what the search has cost so far.
			s.limit = min(s.opts.MaxRuns, 2*s.samples)
		}
		f, further, out, err := s.searchSpan(ctx, sp)
		if err != nil {
			return nil, err
		}
		switch out {
		case spanVanished:
			s.warnf("the ends of %s..%s turned out not to differ; the range was dropped", s.chain[sp.lo], s.chain[sp.hi])
			if s.isWhole(sp) {
				res.Verdict = record.OutcomeNotReproduced
			}
			continue
		case spanExhausted:
			if len(changes) == 0 {
				res.Verdict = record.OutcomeInconclusive
			}
			s.warnf("run budget (%d) spent before %s..%s was resolved (most probable culprit %s, p=%.2f)",
				s.limit, s.chain[sp.lo], s.chain[sp.hi], s.last.best, s.last.p)
			continue
		}
		changes = append(changes, f)
		todo = append(todo, further...)
	}
	return s.finish(res, changes), nil
}

// searchSpan locates the change of one range and checks the two ranges
// beside it for further changes, returning those that differ.
//
// The residual checks measure the commits next to the culprit again, which
// is the evidence a wrong culprit is most likely to be wrong about; their
// runs go back into the posterior, and a culprit that no longer holds the
// configured confidence sends the search back to bisecting the range.
func (s *search) searchSpan(ctx context.Context, sp span) (found, []span, spanOutcome, error) {
	threshold := min(tentativeConfidence, s.opts.Confidence)
	for {
		f, out, err := s.bisectSpan(ctx, sp, threshold)
		if err != nil || out != spanLocated {
			return f, nil, out, err
		}
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
		post := newPosterior(s.spanStats(sp))
		f.p = post.cdf(f.last) - post.cdf(f.first-1)
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
// minimum effect below which two commits are called the same for good.
// Nothing gets bisected after that verdict, and the end comparison looks
// at the data after every pair of runs, so it asks for ten times the
// evidence a culprit needs.
func (s *search) notReproducedTail() float64 {
	if s.opts.SameTail > 0 {
		return s.opts.SameTail
	}
	return (1 - s.opts.Confidence) * notReproducedFactor
}

// residualRuns scales a run allowance of the residual check with the
// noise: telling a difference of the minimum effect apart takes about
// (σ/MinEffect)² runs per side, so perRatio is the allowance at σ equal to
// the minimum effect.
func (s *search) residualRuns(perRatio float64) int {
	sigma, _ := s.pooledSigma()
	r := sigma / math.Log1p(s.opts.MinEffect)
	return max(1, int(math.Round(perRatio*min(r*r, maxNoiseRatio))))
}

// residualDiffers checks whether the ends of a range beside a culprit
// still differ, i.e. whether the range holds a further change.
func (s *search) residualDiffers(ctx context.Context, r span) (bool, error) {
	if r.hi-r.lo < 1 {
		return false, nil
	}
	out, _, err := s.compareEnds(ctx, endsTest{
		phase:     PhaseResidual,
		a:         r.lo,
		b:         r.hi,
		minRuns:   min(residualMinRuns, s.opts.InitialRuns),
		alpha:     residualAlpha,
		sameTail:  residualSameTail,
		maxNew:    s.residualRuns(residualMaxNew),
		extendMax: s.residualRuns(residualExtend),
	})
	if err != nil {
		return false, err
	}
	if out == endsUndecided {
		s.warnf("%s..%s was not fully checked for a further change", s.chain[r.lo], s.chain[r.hi])
	}
	return out == endsDiffer, nil
}

// isWhole reports whether sp is the whole chain.
func (s *search) isWhole(sp span) bool { return sp.lo == 0 && sp.hi == len(s.chain)-1 }

// spanOutcome is how the search of one range ended.
type spanOutcome int

const (
	spanLocated   spanOutcome = iota
	spanExhausted             // the run budget ran out
	spanVanished              // the ends, measured more, do not differ
)

// bisectSpan searches one range for a single change point.
//
// The single-change model always has a most probable culprit, even where
// there is no change; a range whose ends were called different by chance
// would spend the whole budget. Reference balancing keeps adding runs to
// the ends, so after every round the ends are compared again with the
// strict rule for "same", and a range whose change has vanished is dropped.
func (s *search) bisectSpan(ctx context.Context, sp span, threshold float64) (found, spanOutcome, error) {
	broken := func(i int) bool { return s.commits[i].broken }
	recheck := endsTest{a: sp.lo, b: sp.hi, sameTail: s.notReproducedTail(), sameRuns: max(notReproducedRuns, s.opts.InitialRuns)}
	if !s.isWhole(sp) {
		// A residual range was admitted by the residual check; the same
		// rule lets it go.
		recheck = endsTest{a: sp.lo, b: sp.hi, sameTail: residualSameTail}
	}
	for {
		if err := ctx.Err(); err != nil {
			return found{}, spanExhausted, err
		}
		if out, _, _ := s.decideEnds(recheck); out == endsSame {
			return found{}, spanVanished, nil
		}
		post := newPosterior(s.spanStats(sp))
		pos, posP, group, groupP := post.best(broken)
		s.last.best, s.last.p = s.chain[pos], posP
		if group > 0 && groupP >= threshold {
			f := found{first: post.measured[group-1] + 1, last: post.measured[group], p: groupP}
			s.log.Debug("located", "first", s.chain[f.first], "last", s.chain[f.last], "p", groupP, "samples", s.samples)
			return f, spanLocated, nil
		}
		probes := s.chooseProbes(post, sp)
		if len(probes) == 1 && probes[0] == s.lastRun && s.drifting {
			// On a drifting host, runs of one commit in a row share the
			// host's state of that moment; a reference run between them
			// lets the drift be told from the commit. (A steady host is
			// spared the extra reference runs.)
			nGood, nBad := s.references(post, sp)
			if e := s.weakerEnd(sp, nGood, nBad, func(i int) bool { return i == s.lastRun }); e >= 0 {
				probes = []int{e}
			}
		}
		probes = probes[:max(0, min(len(probes), s.limit-s.samples))]
		if len(probes) == 0 {
			return found{}, spanExhausted, nil
		}
		if err := s.measureRound(ctx, probes); err != nil {
			return found{}, spanExhausted, err
		}
	}
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
		if m < 0 || len(s.commits[m].raw) >= min(nGood, nBad) {
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
			nGood += len(s.commits[i].raw)
		case c >= 1-refUncertainty:
			nBad += len(s.commits[i].raw)
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

// budgetFor reports whether n more runs fit in the budget.
func (s *search) budgetFor(n int) bool { return s.samples+n <= s.limit }

// measureOne asks the oracle for one more value of commit i.
func (s *search) measureOne(ctx context.Context, phase string, i int) error {
	return s.measure(ctx, phase, i, len(s.commits[i].raw)+1)
}

// measureRound asks for one more value of each commit, concurrently, and
// records the answers in the order given.
func (s *search) measureRound(ctx context.Context, idx []int) error {
	if len(idx) == 1 {
		return s.measureOne(ctx, PhaseBisect, idx[0])
	}
	type answer struct {
		values []float64
		err    error
	}
	answers := make([]answer, len(idx))
	var wg sync.WaitGroup
	for j, i := range idx {
		wg.Go(func() {
			v, err := s.oracle.Samples(ctx, s.chain[i], len(s.commits[i].raw)+1)
			answers[j] = answer{v, err}
		})
	}
	wg.Wait()
	var first error
	for j, i := range idx {
		err := s.record(ctx, PhaseBisect, i, len(s.commits[i].raw)+1, answers[j].values, answers[j].err)
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// measure asks the oracle for at least n values of commit i.
func (s *search) measure(ctx context.Context, phase string, i, n int) error {
	v, err := s.oracle.Samples(ctx, s.chain[i], n)
	return s.record(ctx, phase, i, n, v, err)
}

// record stores an oracle answer. A broken middle commit is remembered and
// skipped; a broken end or any other failure ends the search.
func (s *search) record(ctx context.Context, phase string, i, n int, values []float64, err error) error {
	c := &s.commits[i]
	s.samples += max(n-len(c.raw), 0)
	switch {
	case err == nil && len(values) < n:
		return &InfraError{Commit: s.chain[i], Err: fmt.Errorf("asked for %d values, got %d", n, len(values))}
	case err == nil:
		if len(c.raw) == 0 && len(values) > 0 {
			at, _ := slices.BinarySearch(s.measured, i)
			s.measured = slices.Insert(s.measured, at, i)
		}
		// The values the search asked for beyond those it had are its own
		// fresh runs, made one after another; anything else came from the
		// cache and has no place in time.
		for k := len(c.raw); k < len(values); k++ {
			at := -1
			if k < n {
				at = s.clock
				s.clock++
				s.lastRun = i
			}
			c.at = append(c.at, at)
		}
		c.raw = slices.Clone(values)
		s.rescreen()
	case errors.Is(err, ErrBroken):
		if i == 0 || i == len(s.chain)-1 {
			return fmt.Errorf("bisect: end %s: %w", s.chain[i], err)
		}
		c.broken = true
	case ctx.Err() != nil:
		return fmt.Errorf("bisect: measure %s: %w", s.chain[i], ctx.Err())
	default:
		return &InfraError{Commit: s.chain[i], Err: err}
	}
	ev := ProbeEvent{
		Phase:     phase,
		Commit:    s.chain[i],
		Index:     i,
		N:         len(c.raw),
		Median:    median(c.raw),
		Status:    StatusOK,
		Samples:   s.samples,
		Best:      s.last.best,
		Posterior: s.last.p,
	}
	if c.broken {
		ev.Status = StatusBroken
	}
	if phase != PhaseBisect {
		ev.Best, ev.Posterior = "", 0
	}
	s.log.Debug("measured", "phase", phase, "commit", ev.Commit, "index", i, "n", ev.N, "median", ev.Median, "status", ev.Status)
	if s.opts.OnProbe != nil {
		s.opts.OnProbe(ev)
	}
	return nil
}

// rescreen recomputes the clean log values of every commit: the host's
// drift and the pooled scale change with every run. The good and bad ends
// of the whole chain span every level a commit can honestly have.
func (s *search) rescreen() {
	groups := make([][]float64, len(s.measured))
	ats := make([][]int, len(s.measured))
	lo, hi := -1, -1
	for j, i := range s.measured {
		groups[j], ats[j] = logTimed(s.commits[i].raw, s.commits[i].at)
		switch i {
		case 0:
			lo = j
		case len(s.chain) - 1:
			hi = j
		}
	}
	groups, s.drifting = removeDrift(groups, ats)
	s.scale = pooledScale(groups)
	clean := screen(groups, s.scale, lo, hi)
	for j, i := range s.measured {
		s.commits[i].clean = clean[j]
	}
}

// clean returns the screened log values of commit i.
func (s *search) clean(i int) []float64 { return s.commits[i].clean }

// pooledSigma returns the classical pooled standard deviation of the clean
// log values around their commits' means, and its degrees of freedom.
func (s *search) pooledSigma() (sigma, df float64) {
	var ss float64
	for _, i := range s.measured {
		c := s.commits[i]
		if len(c.clean) < 2 {
			continue
		}
		ss += sumSquares(c.clean)
		df += float64(len(c.clean) - 1)
	}
	if df == 0 {
		return 0, 0
	}
	return math.Sqrt(ss / df), df
}

func (s *search) warnf(format string, args ...any) {
	s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
}
