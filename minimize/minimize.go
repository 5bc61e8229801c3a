package minimize

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/perfbot/perfbot/record"
)

// Oracle measures configurations of a set search. A configuration is a
// base (the good end: for hunks, the culprit's parent; for environments, the
// good environment) with a set of elements applied on top (hunk ids, or
// names of variables whose values are taken from the bad side). The empty
// set is the good end and the full set is the bad end.
type Oracle interface {
	// Samples returns every value recorded for the configuration, measuring
	// more until there are at least n (n = 0 returns only what is
	// recorded). An error wrapping record.ErrBroken means the
	// configuration does not apply or build; any other error stops the
	// search.
	Samples(ctx context.Context, set []string, n int) ([]float64, error)
}

// Group is one level of the search hierarchy: a file and its hunks, or a
// single group of environment variables.
type Group struct {
	// Name names the group in logs (a file path).
	Name string
	// Elements are the ids of the group's elements, in a stable order
	// (hunks in file order).
	Elements []string
}

// Options configures Isolate.
type Options struct {
	// Groups are the elements to search, grouped files first: the search
	// splits along group boundaries before it splits inside a group.
	Groups []Group
	// Deps maps an element to the elements it needs to apply or build.
	// Every tested configuration is closed over Deps: applying an element
	// applies what it needs, reverting an element reverts what needs it.
	Deps map[string][]string
	// Confidence is the posterior a configuration needs before it is called
	// bad (≥ Confidence) or good (≤ 1−Confidence). Default 0.999.
	Confidence float64
	// MaxRunsPerTest bounds the samples of one test of a configuration.
	// Default 60.
	MaxRunsPerTest int
	// MaxRuns bounds the samples of the configurations the search tests,
	// the two ends left out; a configuration that does not apply or build
	// counts as one, the cost of its build. Once they are spent the search
	// stops (see the package doc) with a record.WarnSetBudgetSpent. Zero
	// is no bound.
	MaxRuns int
	// Retests is how many times a configuration whose test stays
	// undecided (not broken: the host was too noisy for it) is tested
	// again on fresh samples before it is called unresolved. Default 2;
	// negative means never.
	Retests int
	// InitialRuns is the number of samples each end gets before the search
	// starts. Default 10.
	InitialRuns int
	// Better is the metric's direction. When set, Isolate refuses ends
	// where the bad end is not worse than the good one, as soon as their
	// effect's 95% interval says so.
	Better record.Better
	// MinEffect is the smallest relative change (a fraction: 0.02 is 2%)
	// worth isolating. When positive, ends whose effect's 95% interval
	// lies within ±MinEffect, or would still be too wide at the ends'
	// sample limit to tell their effect apart, are refused with
	// ErrEndsAlike as soon as the interval shows it, instead of after
	// that limit.
	MinEffect float64
	// Logger receives one record per test and a summary; nil discards.
	Logger *slog.Logger
	// OnTest, when set, is called after every test and every confirmation
	// of one (for progress and for persisting the job), from the goroutine
	// that called Isolate.
	OnTest func(TestEvent)
	// OnStep, when set, is called after every measurement the search asks
	// the oracle for (each end, each step of a sequential test), from the
	// goroutine that called Isolate: nothing is measured without an event.
	OnStep func(StepEvent)
}

// Phases of a StepEvent.
const (
	// PhaseEnds measures the good and the bad end.
	PhaseEnds = "ends"
	// PhaseTest is a test of a configuration (a repeated one included).
	PhaseTest = "test"
	// PhaseConfirm measures a decided configuration again.
	PhaseConfirm = "confirm"
	// PhaseEffect gives the configurations of the result the samples
	// their effects need.
	PhaseEffect = "effect"
)

// StepEvent reports one measurement of a search in progress.
type StepEvent struct {
	// Phase is PhaseEnds, PhaseTest, PhaseConfirm or PhaseEffect.
	Phase string
	// Set is the configuration measured: nil is the good end, and End
	// names an end ("good" or "bad") when one was measured.
	Set []string
	End string
	// N is the number of samples the configuration has now; Median is
	// their median (0 when broken).
	N      int
	Median float64
	// PBad is the posterior of a test's configuration so far (0 for the
	// ends).
	PBad float64
	// Broken is set when the configuration does not apply or build.
	Broken bool
}

const (
	defaultConfidence    = 0.999
	defaultMaxRunsPerSet = 60
	defaultRetests       = 2
	defaultInitialRuns   = 10
	// effectRuns is the fewest samples a configuration whose effect is
	// reported gets: stats.Delta gives no 95% interval below four a side.
	effectRuns = 4
	// minProbeRuns is the first sample count asked for a configuration:
	// a single value says nothing about outliers.
	minProbeRuns = 2
)

// Sides of a test: how the tested configuration was derived.
const (
	// SideApply marks a configuration built by applying elements to a
	// configuration that is not bad (ultimately the parent).
	SideApply = "apply"
	// SideRevert marks a configuration built by reverting elements from a
	// bad configuration (ultimately the culprit).
	SideRevert = "revert"
)

// Outcomes of a test.
const (
	// OutcomeBad means the configuration behaves like the bad end.
	OutcomeBad = "bad"
	// OutcomeGood means the configuration behaves like the good end.
	OutcomeGood = "good"
	// OutcomeUnresolved means the configuration does not apply or build, or
	// its tests stayed undecided, on fresh samples each time (see
	// Options.Retests). It is never good.
	OutcomeUnresolved = "unresolved"
)

// Test is one measured configuration of a set search.
type Test struct {
	// Set is the configuration: the elements applied on top of the good
	// end, in group order.
	Set []string `json:"set"`
	// Side is SideApply or SideRevert.
	Side string `json:"side"`
	// N is the number of samples measured, a confirmation's included.
	N int `json:"n"`
	// Median is the median sample (0 when the configuration is broken).
	Median float64 `json:"median"`
	// PBad is the posterior that the configuration behaves like the bad
	// end (0.5 when broken); for a confirmed configuration, that of the
	// confirmation's own samples.
	PBad float64 `json:"p_bad"`
	// Outcome is OutcomeBad, OutcomeGood or OutcomeUnresolved.
	Outcome string `json:"outcome"`
	// Broken is set when the oracle reported record.ErrBroken.
	Broken bool `json:"broken"`
	// Retests counts the times the configuration was tested again after
	// an undecided test.
	Retests int `json:"retests"`
}

// TestEvent reports progress after a test.
type TestEvent struct {
	Test Test
	// Candidates are the elements still under suspicion: the difference
	// between the two configurations the search currently brackets.
	Candidates []string
	// Configurations and Samples count what the search measured so far,
	// the ends included.
	Configurations int
	Samples        int
}

// Isolation is the result of a set search. It is consistent when
// AppliedOutcome is OutcomeBad and RevertedOutcome is OutcomeGood; a
// report should warn about anything else (an effect spread over more than
// Minimal, a second culprit, or measurements disturbed for a while).
type Isolation struct {
	// Minimal is a 1-minimal culprit set: applying it to the good end
	// gives a bad configuration, and applying any subset without one of
	// its elements does not. Two elements that only regress together are
	// reported together; an element is reported with the elements it
	// needs to build. Only elements whose part was measured are named: an
	// element whose removal stayed undecided is in Undecided instead.
	Minimal []string
	// Undecided are the elements of the 1-minimal set whose part could
	// not be measured: the configuration without them stayed undecided,
	// on fresh samples each time. They are not named as culprits.
	Undecided []string
	// Applied is the effect of applying Minimal (with Undecided) to the
	// good end, relative to the good end.
	Applied Effect
	// Reverted is the effect of reverting Minimal (with Undecided) from
	// the bad end, relative to the bad end. A Reverted effect that does
	// not undo the regression means something outside Minimal regresses
	// too. It is the zero Effect, not measured, when that configuration
	// did not apply or build or the budget ran out first.
	Reverted Effect
	// AppliedOutcome is the verdict on the good end with Minimal applied:
	// OutcomeBad unless the search ran out of decisive tests.
	AppliedOutcome string
	// RevertedOutcome is the verdict on the bad end with Minimal reverted:
	// OutcomeGood when Minimal explains the whole regression. Its test
	// has a budget in proportion to the samples Minimal's own tests took
	// (three times as many, within MaxRunsPerTest): undecided within it,
	// it is OutcomeUnresolved, and a rest of the change was not excluded.
	RevertedOutcome string
	// Tests are the measured configurations in the order they were first
	// decided (a confirmation updates its test in place); the ends are not
	// among them.
	Tests []Test
	// Unresolved are the configurations that did not apply or build, or
	// stayed undecided.
	Unresolved [][]string
	// Configurations is the number of distinct configurations measured,
	// the two ends included; Samples is the number of samples they hold.
	Configurations int
	Samples        int
	// Warnings are the caveats a report should show, as values.
	Warnings []record.Warning
}

// ErrEndsAlike is returned (wrapped) by Isolate when the good and bad ends
// cannot be told apart: there is nothing to isolate.
var ErrEndsAlike = errors.New("good and bad ends cannot be told apart")

// ErrNotWorse is returned by Isolate when the bad end, measured, is not
// worse than the good end: there is no regression to isolate.
var ErrNotWorse = errors.New("the bad end is not worse than the good end")

// Isolate finds a 1-minimal set of elements that turns the good end into a
// bad configuration: the hunks of a culprit commit that cost the
// throughput, or the environment variables that do. It measures the ends
// first and returns ErrEndsAlike or ErrNotWorse when they hold no
// regression to isolate. The package doc describes the method, what
// stops the search, and the caveats.
func Isolate(ctx context.Context, o Oracle, opts Options) (*Isolation, error) {
	s, err := newSetSearch(o, opts)
	if err != nil {
		return nil, err
	}
	if err := s.measureEnds(ctx); err != nil {
		return nil, err
	}
	iso, err := s.search(ctx)
	if errors.Is(err, errBudgetSpent) {
		return s.spentResult(), nil
	}
	return iso, err
}

// errBudgetSpent stops a search whose samples reached Options.MaxRuns.
var errBudgetSpent = errors.New("isolate: run budget spent")

// search narrows, minimizes and confirms until a minimal set holds up.
func (s *setSearch) search(ctx context.Context) (*Isolation, error) {
	for {
		minimal, err := s.narrow(ctx)
		if err != nil {
			return nil, err
		}
		if minimal, err = s.minimize(ctx, minimal); err != nil {
			return nil, err
		}
		// The answer rests on the set being bad alone: confirm it, and
		// search again if that does not hold up (once per set).
		again := s.configs[minimal.key()].confirmed
		verdict, err := s.confirm(ctx, minimal)
		if err != nil {
			return nil, err
		}
		if verdict == OutcomeBad || again {
			return s.result(ctx, minimal)
		}
		s.log.Info("isolate: the minimal set is not bad on confirmation; searching again",
			"set", s.u.namesOf(minimal), "outcome", verdict)
	}
}

// spentResult is the result of a search stopped by Options.MaxRuns: no
// set is named; the narrowest difference the search had reached is
// reported unresolved, with the tests measured so far.
func (s *setSearch) spentResult() *Isolation {
	left := s.candidates
	if len(left) == 0 {
		left = s.u.all()
	}
	iso := &Isolation{
		Unresolved:      [][]string{s.u.namesOf(left)},
		AppliedOutcome:  OutcomeUnresolved,
		RevertedOutcome: OutcomeUnresolved,
		Applied:         effectOf(s.good.samples, s.bad.samples),
		Reverted:        effectOf(s.bad.samples, s.good.samples),
		Tests:           s.tests,
		Configurations:  len(s.configs),
	}
	for _, c := range s.configs {
		iso.Samples += len(c.samples)
	}
	iso.Warnings = append(iso.Warnings, s.spentWarning(s.u.namesOf(left)))
	s.log.Info("isolate: run budget spent", "max_runs", s.opts.MaxRuns, "left", iso.Unresolved[0], "samples", iso.Samples)
	return iso
}

// spentWarning says that the budget is spent and that the change lies in
// left, with the configurations that did not build.
func (s *setSearch) spentWarning(left []string) record.Warning {
	broken := 0
	for _, c := range s.configs {
		if c.broken {
			broken++
		}
	}
	return record.Warning{Kind: record.WarnSetBudgetSpent, Runs: s.opts.MaxRuns, Count: broken, Commits: left}
}

// setSearch is the state of one Isolate call.
type setSearch struct {
	o    Oracle
	opts Options
	log  *slog.Logger
	u    *setUniverse

	// configs holds every measured configuration by key, the ends
	// included.
	configs map[string]*setConfig
	good    *setConfig
	bad     *setConfig
	tests   []Test
	// candidates is the current bracket's difference, for progress events.
	candidates elemSet
	// undecided are the elements of the result whose removal could not be
	// decided.
	undecided elemSet
}

// drawn is the number of samples of the configurations tested, the ends
// left out, and c's when c is not among them yet (a first test under
// way). A configuration that did not build counts as one: its build cost
// about what a run does, and a commit whose hunks build only all together
// would otherwise try a few times as many builds as it has hunks, all for
// free. The ends are not counted: they grow with the host's noise until
// they differ, before any test, and a budget they could spend would buy
// no answer.
func (s *setSearch) drawn(c *setConfig) int {
	n := 0
	for _, k := range s.configs {
		if k != s.good && k != s.bad {
			n += len(k.samples)
			if k.broken {
				n++
			}
		}
	}
	if s.configs[c.set.key()] != c {
		n += len(c.samples)
	}
	return n
}

// overBudget reports whether Options.MaxRuns is spent, with c's samples
// counted.
func (s *setSearch) overBudget(c *setConfig) bool {
	return s.opts.MaxRuns > 0 && s.drawn(c) >= s.opts.MaxRuns
}

// setConfig is one measured set with its verdict.
type setConfig struct {
	set     elemSet
	side    string
	samples []float64
	pBad    float64
	verdict string
	broken  bool
	// confirmed is set once confirm has measured the configuration again.
	confirmed bool
	// retests counts the tests repeated after an undecided one.
	retests int
	// partial is set when the configuration measured between the ends,
	// apart from both (see between): it is unresolved, and final.
	partial bool
	// test is the index of the configuration's Test in the result.
	test int
}

func newSetSearch(o Oracle, opts Options) (*setSearch, error) {
	if o == nil {
		return nil, errors.New("isolate: nil Oracle")
	}
	u, err := newSetUniverse(opts.Groups, opts.Deps)
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	if opts.Confidence == 0 {
		opts.Confidence = defaultConfidence
	}
	if opts.Retests == 0 {
		opts.Retests = defaultRetests
	}
	if opts.Confidence <= 0.5 || opts.Confidence >= 1 {
		return nil, fmt.Errorf("isolate: Confidence %v is outside (0.5, 1)", opts.Confidence)
	}
	if opts.MaxRunsPerTest == 0 {
		opts.MaxRunsPerTest = defaultMaxRunsPerSet
	}
	if opts.Better != "" && opts.Better != record.Higher && opts.Better != record.Lower {
		return nil, fmt.Errorf("isolate: Better %q is neither %q nor %q", opts.Better, record.Higher, record.Lower)
	}
	if opts.InitialRuns == 0 {
		opts.InitialRuns = defaultInitialRuns
	}
	if opts.MaxRunsPerTest < minProbeRuns || opts.InitialRuns < 2 {
		return nil, fmt.Errorf("isolate: MaxRunsPerTest %d and InitialRuns %d must be at least 2",
			opts.MaxRunsPerTest, opts.InitialRuns)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &setSearch{o: o, opts: opts, log: log, u: u, configs: map[string]*setConfig{}}, nil
}

// narrow brackets the culprit set between a configuration that is not bad
// (lo) and one that is (hi), starting from the ends. Each round isolates a
// 1-minimal difference between them (dd, both sides) and fixes it; when the
// fixed elements alone are not bad, they need a context, and the next round
// searches that context inside lo. It returns the fixed set once it is bad.
//
// A context round rests on two verdicts, so both are confirmed first: that
// the fixed set is not bad, and that hi is bad. When hi's verdict does not
// survive its confirmation, the bracket was built on a wrong turn and the
// search starts over from the ends; the configurations measured so far
// keep their verdicts, so it replays to the wrong turn for free.
func (s *setSearch) narrow(ctx context.Context) (elemSet, error) {
	for {
		fixed, err := s.narrowOnce(ctx)
		if err != nil || fixed != nil {
			return fixed, err
		}
		s.log.Info("isolate: a bad verdict was overturned; starting over from the ends")
	}
}

// narrowOnce is one pass of narrow; it returns nil when a verdict it rests
// on was overturned.
func (s *setSearch) narrowOnce(ctx context.Context) (elemSet, error) {
	lo, hi := elemSet{}, s.u.all()
	var fixed elemSet
	for {
		var err error
		if lo, hi, err = s.isolate(ctx, fixed, lo, hi); err != nil {
			return nil, err
		}
		fixed = s.u.closeUp(fixed.union(hi.minus(lo)))
		if len(fixed) == len(hi) {
			return fixed, nil
		}
		verdict, err := s.test(ctx, fixed, SideApply)
		if err == nil && verdict != OutcomeBad {
			verdict, err = s.confirm(ctx, fixed)
		}
		if err != nil {
			return nil, err
		}
		if verdict == OutcomeBad {
			return fixed, nil
		}
		if verdict, err = s.confirm(ctx, hi); err != nil || verdict != OutcomeBad {
			return nil, err
		}
		// The fixed elements need more: search the rest of lo for what
		// they need, with them always applied.
		s.log.Debug("isolate: difference needs context", "fixed", s.u.namesOf(fixed))
		lo = fixed
	}
}

// isolate is Zeller and Hildebrandt's dd over the bracket lo ⊂ hi, where lo
// is not bad and hi is bad. It splits the difference into n parts and tests
// applying each part to lo and reverting it from hi; a decided test moves
// one side of the bracket, an unresolved one moves nothing, and when no
// part moves anything the granularity doubles. It returns a bracket whose
// difference cannot be split any further. base ⊆ lo is the configuration
// the result will be verified on (the elements fixed so far).
func (s *setSearch) isolate(ctx context.Context, base, lo, hi elemSet) (elemSet, elemSet, error) {
	n := 2
	for {
		delta := hi.minus(lo)
		s.candidates = delta
		if len(delta) <= 1 {
			return lo, hi, nil
		}
		if len(delta) <= 3 && len(lo) > len(base) {
			nhi, err := s.lastFew(ctx, base, hi, delta)
			if err != nil {
				return nil, nil, err
			}
			if nhi != nil {
				return base, nhi, nil
			}
		}
		moved := false
		for _, part := range s.u.partition(delta, n) {
			nlo, nhi, move, err := s.split(ctx, lo, hi, part)
			if err != nil {
				return nil, nil, err
			}
			switch move {
			case toPart:
				// The difference shrank to about one part: start over
				// with halves.
				lo, hi, n, moved = nlo, nhi, 2, true
			case toComplement:
				// The difference lost one part: keep the granularity.
				lo, hi, n, moved = nlo, nhi, max(n-1, 2), true
			}
			if moved {
				break
			}
		}
		if !moved {
			if n >= len(delta) {
				return lo, hi, nil
			}
			n = min(2*n, len(delta))
		}
	}
}

// lastFew tests each of the last two or three candidates alone on base,
// in order, before the regular step would test one of them on lo. A
// candidate that is bad alone is then found and its applied effect
// verified by the same test, which saves the verification a bracket far
// from base would need: for a single culprit this is cheaper on average
// than halving further. It returns the bad configuration, or nil when none
// is bad alone (they interact with lo) or a test is unresolved.
func (s *setSearch) lastFew(ctx context.Context, base, hi, few elemSet) (elemSet, error) {
	for _, e := range few {
		alone := s.u.closeUp(base.union(elemSet{e}))
		if !s.strictlyBetween(alone, base, hi) {
			return nil, nil
		}
		v, err := s.test(ctx, alone, SideApply)
		if err != nil || v == OutcomeBad {
			return alone, err
		}
		if v != OutcomeGood {
			return nil, nil
		}
	}
	return nil, nil
}

// bracketMove is how a decided test moved the bracket.
type bracketMove int

const (
	stay         bracketMove = iota // undecided: nothing moved
	toPart                          // the bracket's difference is now the part
	toComplement                    // the bracket's difference lost the part
)

// split tests one part of the bracket's difference from both sides:
// applied to lo, and reverted from hi (each closed over the dependencies).
// It returns the new bracket when either test was decided.
func (s *setSearch) split(ctx context.Context, lo, hi, part elemSet) (elemSet, elemSet, bracketMove, error) {
	applied := s.u.closeUp(lo.union(part))
	if s.strictlyBetween(applied, lo, hi) {
		switch v, err := s.test(ctx, applied, SideApply); {
		case err != nil:
			return nil, nil, stay, err
		case v == OutcomeBad:
			return lo, applied, toPart, nil
		case v == OutcomeGood:
			return applied, hi, toComplement, nil
		}
	}
	reverted := s.u.closeDown(hi.minus(part))
	if s.strictlyBetween(reverted, lo, hi) && !slices.Equal(reverted, applied) {
		switch v, err := s.test(ctx, reverted, SideRevert); {
		case err != nil:
			return nil, nil, stay, err
		case v == OutcomeGood:
			return reverted, hi, toPart, nil
		case v == OutcomeBad:
			return lo, reverted, toComplement, nil
		}
	}
	return nil, nil, stay, nil
}

// strictlyBetween reports whether lo ⊂ c ⊂ hi, so that testing c narrows
// the bracket whatever the verdict.
func (s *setSearch) strictlyBetween(c, lo, hi elemSet) bool {
	return len(c) > len(lo) && len(c) < len(hi) && lo.subsetOf(c) && c.subsetOf(hi)
}

// minimize makes the found set 1-minimal: it tests the set without each of
// its elements (and whatever needs that element) and shrinks to any such
// subset that is still bad. A single element needs no check: the empty set
// is the good end. An element is kept because the set without it measured
// good (or does not build); when that configuration stays unresolved on
// fresh samples, the element is kept for the set's sake but listed as
// undecided, never named for an effect nobody measured.
func (s *setSearch) minimize(ctx context.Context, minimal elemSet) (elemSet, error) {
	s.undecided = nil
	for shrunk := true; shrunk && len(minimal) > 1; {
		shrunk = false
		var undecided elemSet
		for _, e := range minimal {
			sub := s.u.closeDown(minimal.minus(elemSet{e}))
			if len(sub) == 0 {
				continue
			}
			// Keeping e rests on this verdict: confirm it.
			v, err := s.test(ctx, sub, SideApply)
			if err == nil {
				v, err = s.confirm(ctx, sub)
			}
			if err != nil {
				return nil, err
			}
			if v == OutcomeBad {
				minimal, shrunk = sub, true
				break
			}
			if v == OutcomeUnresolved && !s.configs[sub.key()].broken {
				undecided = append(undecided, e)
			}
		}
		if !shrunk {
			s.undecided = undecided
		}
	}
	return minimal, nil
}

// result measures the bad end with the minimal set reverted and assembles
// the Isolation.
func (s *setSearch) result(ctx context.Context, minimal elemSet) (*Isolation, error) {
	reverted := s.u.closeDown(s.u.all().minus(minimal))
	applied := s.configs[minimal.key()]
	revertedVerdict, err := s.testUpTo(ctx, reverted, SideRevert, s.revertLimit(applied))
	spent := errors.Is(err, errBudgetSpent)
	if err != nil && !spent {
		return nil, err
	}
	if err := s.ensure(ctx, applied, effectRuns); err != nil {
		return nil, err
	}
	iso := &Isolation{
		Minimal:         s.u.namesOf(minimal.minus(s.undecided)),
		Undecided:       s.u.namesOf(s.undecided),
		AppliedOutcome:  applied.verdict,
		Applied:         effectOf(s.good.samples, applied.samples),
		RevertedOutcome: revertedVerdict,
		Tests:           s.tests,
	}
	if spent {
		// The minimal set stands (it was confirmed bad); what reverting
		// it does was left unmeasured.
		iso.RevertedOutcome = OutcomeUnresolved
		iso.Warnings = append(iso.Warnings, s.spentWarning(iso.Minimal))
	} else {
		c := s.configs[reverted.key()]
		if err := s.ensure(ctx, c, effectRuns); err != nil {
			return nil, err
		}
		iso.Reverted = effectOf(s.bad.samples, c.samples)
	}
	if iso.AppliedOutcome != OutcomeBad {
		iso.Warnings = append(iso.Warnings, record.Warning{Kind: record.WarnSetNotBadAlone})
	}
	if iso.RevertedOutcome != OutcomeGood && !spent {
		iso.Warnings = append(iso.Warnings, record.Warning{Kind: record.WarnSetIncomplete})
	}
	if len(iso.Undecided) > 0 {
		iso.Warnings = append(iso.Warnings, record.Warning{Kind: record.WarnUndecidedElements, Commits: iso.Undecided})
	}
	for _, c := range s.configs {
		iso.Samples += len(c.samples)
		if c.verdict == OutcomeUnresolved {
			iso.Unresolved = append(iso.Unresolved, s.u.namesOf(c.set))
		}
	}
	slices.SortFunc(iso.Unresolved, func(a, b []string) int { return slices.Compare(a, b) })
	iso.Configurations = len(s.configs)
	s.log.Info("isolate: done", "minimal", iso.Minimal, "applied_pct", iso.Applied.Pct,
		"reverted_pct", iso.Reverted.Pct, "configurations", iso.Configurations, "samples", iso.Samples)
	return iso, nil
}
