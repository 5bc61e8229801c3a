package minimize

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// measureEnds measures the good end (the empty set) and the bad end (the
// full set) until they are told apart by held-out samples (endsEvidence)
// at the configured confidence, or until they reach endLimit. Every later
// test compares a configuration against these ends, so they are measured
// first and more than any single configuration. Ends that at the limit do
// not look apart even at endsAlikeBar are refused: every test between them
// would run to MaxRunsPerTest and stay unresolved.
func (s *setSearch) measureEnds(ctx context.Context) error {
	s.good = &setConfig{set: elemSet{}, verdict: OutcomeGood}
	s.bad = &setConfig{set: s.u.all(), verdict: OutcomeBad, pBad: 1}
	s.configs[s.good.set.key()] = s.good
	s.configs[s.bad.set.key()] = s.bad
	limit := s.endLimit()
	for n := s.opts.InitialRuns; ; n = min(limit, n+max(2, n/2)) {
		if err := s.growEnds(ctx, n); err != nil {
			return err
		}
		if err := s.endsHopeless(n); err != nil {
			return err
		}
		if s.endsEvidence() >= logit(s.opts.Confidence) {
			break
		}
		if n >= limit {
			if s.endsEvidence() < logit(endsAlikeBar) {
				return fmt.Errorf("isolate: after %d samples of each end: %w",
					min(len(s.good.samples), len(s.bad.samples)), ErrEndsAlike)
			}
			break
		}
	}
	return s.checkDirection()
}

// endsHopeless stops the measurement of the ends as soon as their
// comparison shows that no search can succeed, rather than at the ends'
// sample limit: the 95% interval of the bad end's effect lies within
// ±MinEffect (no effect worth isolating), or would still be too wide at
// the limit to tell the effect apart (a host too noisy for it), or lies
// wholly on the better side (the bad end is not worse). It waits for
// InitialRuns samples of each end.
func (s *setSearch) endsHopeless(n int) error {
	if n < s.opts.InitialRuns || (s.opts.MinEffect <= 0 && s.opts.Better == "") {
		return nil
	}
	e := stats.Delta(s.good.samples, s.bad.samples, 0.95)
	d, lo, hi := e.Pct, e.Lo, e.Hi
	if math.IsNaN(d) {
		return nil
	}
	n = min(len(s.good.samples), len(s.bad.samples))
	m := 100 * s.opts.MinEffect
	if m > 0 && lo > -m && hi < m {
		return fmt.Errorf("isolate: after %d samples of each end the bad end differs by %+.1f%% (95%% interval %+.1f%% to %+.1f%%), within the %.1f%% worth isolating: %w",
			n, d, lo, hi, m, ErrEndsAlike)
	}
	// Futility: the interval's half-width shrinks as 1/√n. If at the ends'
	// limit an effect as large as the one measured (or MinEffect, if
	// larger) would still lie within about two standard errors, no test
	// between these ends could be decided either: the host is too noisy
	// for a change of this size.
	if se := (hi - lo) / (2 * 1.96); m > 0 && se > 0 {
		atLimit := se * math.Sqrt(float64(n)/float64(s.endLimit()))
		if math.Max(math.Abs(d), m)/atLimit < futileZ {
			return fmt.Errorf("isolate: after %d samples of each end the bad end differs by %+.1f%% (95%% interval %+.1f%% to %+.1f%%): at %d samples the interval would still be about ±%.1f%%, too wide to tell a change of %.1f%% apart on this host: %w",
				n, d, lo, hi, s.endLimit(), 1.96*atLimit, math.Max(math.Abs(d), m), ErrEndsAlike)
		}
	}
	if (s.opts.Better == record.Higher && lo > 0) || (s.opts.Better == record.Lower && hi < 0) {
		return fmt.Errorf("isolate: after %d samples of each end: %w (the bad end differs by %+.1f%%, 95%% interval %+.1f%% to %+.1f%%, %s values better)",
			n, ErrNotWorse, d, lo, hi, s.opts.Better)
	}
	return nil
}

// futileZ is the standard errors that an effect must span at the ends'
// limit for the search between them to go on (see endsHopeless).
const futileZ = 2.0

// endsAlikeBar is the held-out posterior (as endsEvidence's log-odds)
// below which ends measured to the limit are refused as alike.
const endsAlikeBar = 0.9

// endLimit is the most samples an end gets: twice what a configuration
// may get, so that the ends stay the better measured side of every test.
func (s *setSearch) endLimit() int {
	return max(s.opts.InitialRuns, 2*s.opts.MaxRunsPerTest)
}

// growEnds measures both ends up to at least n samples each.
func (s *setSearch) growEnds(ctx context.Context, n int) error {
	for _, end := range []*setConfig{s.good, s.bad} {
		if len(end.samples) >= n {
			continue
		}
		xs, err := s.o.Samples(ctx, s.u.namesOf(end.set), n)
		if err != nil {
			return fmt.Errorf("isolate: measure the %s end: %w", end.verdict, err)
		}
		if len(xs) < n {
			return fmt.Errorf("isolate: measure the %s end: oracle returned %d samples, asked for %d",
				end.verdict, len(xs), n)
		}
		end.samples = xs
		s.step(PhaseEnds, end, end.verdict)
	}
	return nil
}

// step reports a measurement of c in phase (end names an end, or "").
func (s *setSearch) step(phase string, c *setConfig, end string) {
	if s.opts.OnStep == nil {
		return
	}
	ev := StepEvent{Phase: phase, Set: s.u.namesOf(c.set), End: end, N: len(c.samples), PBad: c.pBad, Broken: c.broken}
	if end != "" {
		ev.PBad = 0
	}
	if len(c.samples) > 0 {
		ev.Median = stats.Median(c.samples)
	}
	s.opts.OnStep(ev)
}

// endsEvidence is the log-odds with which held-out samples are told to
// come from their own end: each end's odd samples are classified against
// the other end and the end's own even samples, and the two log-odds are
// averaged, so one unlucky half does not decide. Holding the probe out
// keeps the check honest: ends drawn from one distribution score near 0.
func (s *setSearch) endsEvidence() float64 {
	g0, g1 := evenOdd(s.good.samples)
	b0, b1 := evenOdd(s.bad.samples)
	badAsBad := stats.Classify(s.good.samples, b0, b1)
	goodAsGood := 1 - stats.Classify(g0, s.bad.samples, g1)
	return (logit(badAsBad) + logit(goodAsGood)) / 2
}

// logit is the log-odds of a probability, clamped to stay finite.
func logit(p float64) float64 {
	p = min(max(p, 1e-12), 1-1e-12)
	return math.Log(p / (1 - p))
}

func evenOdd(xs []float64) (even, odd []float64) {
	for i, x := range xs {
		if i%2 == 0 {
			even = append(even, x)
		} else {
			odd = append(odd, x)
		}
	}
	return even, odd
}

// test decides whether a configuration behaves like the good or the bad
// end (see measure), with up to MaxRunsPerTest samples. A test that stays
// undecided on a configuration that builds is repeated on fresh samples,
// up to Retests times (see retest). A configuration measured before keeps
// its verdict.
func (s *setSearch) test(ctx context.Context, set elemSet, side string) (string, error) {
	return s.testUpTo(ctx, set, side, s.opts.MaxRunsPerTest)
}

// testUpTo is test with at most limit samples; a test given fewer than
// MaxRunsPerTest is a check with a budget of its own, and is not repeated
// when it stays undecided.
func (s *setSearch) testUpTo(ctx context.Context, set elemSet, side string, limit int) (string, error) {
	if c, ok := s.configs[set.key()]; ok {
		return c.verdict, nil
	}
	c := &setConfig{set: set, pBad: 0.5, side: side}
	if err := s.measure(ctx, PhaseTest, c, 0, limit); err != nil {
		return "", err
	}
	s.configs[set.key()] = c
	c.test = len(s.tests)
	s.tests = append(s.tests, Test{})
	if limit >= s.opts.MaxRunsPerTest {
		if err := s.retest(ctx, c); err != nil {
			return "", err
		}
	}
	s.record(c)
	return c.verdict, nil
}

// revertFactor sizes the check of the bad end with the minimal set
// reverted: it gets revertFactor times the samples that the minimal set's
// own tests took (at least 2×InitialRuns, at most MaxRunsPerTest). The
// check is a residual one, like the commit search's beside a culprit: a
// rest of the change large enough to matter shows within that budget, and
// a rest that does not (a layout effect between the ends) is reported as
// not excluded rather than measured to the limit.
const revertFactor = 3

// revertLimit is the sample budget of the revert check.
func (s *setSearch) revertLimit(applied *setConfig) int {
	return min(s.opts.MaxRunsPerTest, max(2*s.opts.InitialRuns, revertFactor*len(applied.samples)))
}

// retest repeats the test of a configuration that came out undecided, on
// fresh samples only, so that a noisy stretch of the host does not decide
// what the configuration's elements are worth: each repetition is a new
// sequential test of up to MaxRunsPerTest samples. When Retests of them
// stay undecided too, all the samples together decide if they can, and
// the configuration is unresolved otherwise.
func (s *setSearch) retest(ctx context.Context, c *setConfig) error {
	for c.verdict == OutcomeUnresolved && !c.broken && !c.partial && c.retests < max(s.opts.Retests, 0) {
		c.retests++
		c.verdict = ""
		s.log.Info("isolate: test undecided; measuring again", "set", s.u.namesOf(c.set), "n", len(c.samples))
		if err := s.measure(ctx, PhaseTest, c, len(c.samples), len(c.samples)+s.opts.MaxRunsPerTest); err != nil {
			return err
		}
	}
	if c.verdict == OutcomeUnresolved && !c.broken && !c.partial && c.retests > 0 {
		c.pBad = stats.Classify(s.good.samples, s.bad.samples, c.samples)
		c.verdict = s.decide(c.pBad, OutcomeUnresolved)
	}
	return nil
}

// ensure gives a configuration at least n samples.
func (s *setSearch) ensure(ctx context.Context, c *setConfig, n int) error {
	if c.broken || len(c.samples) >= n {
		return nil
	}
	xs, err := s.o.Samples(ctx, s.u.namesOf(c.set), n)
	if err != nil {
		return fmt.Errorf("isolate: measure %v: %w", s.u.namesOf(c.set), err)
	}
	c.samples = xs
	s.step(PhaseEffect, c, "")
	return nil
}

// confirm measures again a configuration that the result is about to rest
// on, with up to MaxRunsPerTest more samples. A decided verdict is
// replicated: a second sequential test on the new samples alone replaces
// it. A sequential test stops when its samples happen to look decisive, so
// a wrong verdict comes with a lucky streak; fresh samples do not share
// it, and a wrong turn is overturned before a costly search builds on it.
// An undecided test simply continues on all its samples. The ends and
// broken configurations are final, and a configuration is confirmed at
// most once.
func (s *setSearch) confirm(ctx context.Context, set elemSet) (string, error) {
	c, ok := s.configs[set.key()]
	if !ok {
		return "", fmt.Errorf("isolate: confirm %v: not measured", s.u.namesOf(set))
	}
	if c.broken || c.partial || c.confirmed || c == s.good || c == s.bad {
		return c.verdict, nil
	}
	c.confirmed = true
	before := c.verdict
	c.verdict = ""
	from := len(c.samples)
	if before == OutcomeUnresolved {
		from = 0
	}
	if err := s.measure(ctx, PhaseConfirm, c, from, len(c.samples)+s.opts.MaxRunsPerTest); err != nil {
		return "", err
	}
	if c.verdict == OutcomeUnresolved && !c.broken && from > 0 {
		// The replication did not decide on its own: let all the samples
		// decide, the streak that stopped the first test now diluted.
		c.pBad = stats.Classify(s.good.samples, s.bad.samples, c.samples)
		c.verdict = s.decide(c.pBad, OutcomeUnresolved)
	}
	if c.verdict != before {
		s.log.Info("isolate: verdict changed on confirmation", "set", s.u.namesOf(set),
			"was", before, "now", c.verdict, "n", len(c.samples))
	}
	s.record(c)
	return c.verdict, nil
}

// measure runs the sequential test of one configuration on its samples
// from index from on: it asks for minProbeRuns of them, then one more at a
// time, until Classify against the ends crosses the confidence either way
// (bad or good) or the configuration has limit samples (unresolved). A
// configuration that does not apply or build is unresolved at once.
func (s *setSearch) measure(ctx context.Context, phase string, c *setConfig, from, limit int) error {
	names := s.u.namesOf(c.set)
	for n := from + minProbeRuns; c.verdict == ""; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.overBudget(c) {
			return errBudgetSpent
		}
		xs, err := s.o.Samples(ctx, names, n)
		if errors.Is(err, record.ErrBroken) {
			c.broken, c.verdict, c.pBad = true, OutcomeUnresolved, 0.5
			s.log.Debug("isolate: configuration does not apply or build", "set", names, "err", err)
			s.step(phase, c, "")
			return nil
		}
		if err != nil {
			return fmt.Errorf("isolate: measure %v: %w", names, err)
		}
		if len(xs) < n {
			return fmt.Errorf("isolate: measure %v: oracle returned %d samples, asked for %d", names, len(xs), n)
		}
		c.samples = xs
		// Keep the references at least as strong as the probe.
		if err := s.growEnds(ctx, min(len(xs)-from, s.endLimit())); err != nil {
			return err
		}
		c.pBad = stats.Classify(s.good.samples, s.bad.samples, xs[from:])
		s.step(phase, c, "")
		switch {
		case len(xs) >= limit:
			c.verdict = s.decide(c.pBad, OutcomeUnresolved)
		case len(xs)-from >= minPartialRuns && s.between(xs[from:]):
			c.verdict = s.decide(c.pBad, OutcomeUnresolved)
			c.partial = c.verdict == OutcomeUnresolved
		default:
			c.verdict = s.decide(c.pBad, "")
		}
		n = len(xs) + 1
	}
	return nil
}

// minPartialRuns is the fewest samples of a configuration that between
// judges.
const minPartialRuns = 6

// between reports whether samples xs of a configuration differ from both
// ends, in opposite directions, each at the search's confidence: the
// configuration carries part of the effect (one of several hunks that
// each cost some of it), and no number of runs will make it behave like
// either end. Without it, such a test runs to MaxRunsPerTest and then
// again on fresh samples (a hunk of the demo's testbed took 81 runs).
func (s *setSearch) between(xs []float64) bool {
	g := stats.Delta(s.good.samples, xs, s.opts.Confidence)
	b := stats.Delta(s.bad.samples, xs, s.opts.Confidence)
	return (g.Lo > 0 && b.Hi < 0) || (g.Hi < 0 && b.Lo > 0)
}

// decide turns a posterior into a verdict: bad or good past the
// confidence, otherwise undecided.
func (s *setSearch) decide(pBad float64, undecided string) string {
	switch {
	case pBad >= s.opts.Confidence:
		return OutcomeBad
	case pBad <= 1-s.opts.Confidence:
		return OutcomeGood
	}
	return undecided
}

// record writes the configuration's test into the result and reports it.
func (s *setSearch) record(c *setConfig) {
	names := s.u.namesOf(c.set)
	t := Test{Set: names, Side: c.side, N: len(c.samples), PBad: c.pBad, Outcome: c.verdict, Broken: c.broken, Retests: c.retests}
	if len(c.samples) > 0 {
		t.Median = stats.Median(c.samples)
	}
	s.tests[c.test] = t
	s.log.Info("isolate: test", "set", names, "side", t.Side, "n", t.N, "median", t.Median,
		"p_bad", t.PBad, "outcome", t.Outcome)
	if s.opts.OnTest == nil {
		return
	}
	ev := TestEvent{Test: t, Candidates: s.u.namesOf(s.candidates), Configurations: len(s.configs)}
	for _, c := range s.configs {
		ev.Samples += len(c.samples)
	}
	s.opts.OnTest(ev)
}

// Effect is the effect of a configuration relative to a reference end:
// stats.Delta of their samples, the one estimate of an effect that every
// perfbot report shows. The zero Effect (N = 0) was not measured: the
// configuration did not apply or build, or the run budget ran out before
// it was run. It is not an effect of zero.
type Effect struct {
	// Effect is the change of the configuration relative to the
	// reference, in percent, with its 95% interval.
	record.Effect
	// N is the number of samples of the configuration.
	N int `json:"n"`
}

// Measured reports whether e was measured: whether the configuration had
// samples to compare with the reference's.
func (e Effect) Measured() bool { return e.N > 0 }

// Record is the effect as a finding keeps it: nil when it was not
// measured.
func (e Effect) Record() *record.Effect {
	if !e.Measured() {
		return nil
	}
	r := e.Effect
	return &r
}

// effectOf estimates the change of xs relative to ref. Either side empty
// (a broken configuration) gives the zero Effect: not measured.
func effectOf(ref, xs []float64) Effect {
	if len(ref) == 0 || len(xs) == 0 {
		return Effect{}
	}
	return Effect{Effect: stats.Delta(ref, xs, 0.95), N: len(xs)}
}

// checkDirection refuses ends where the bad end is not worse than the good
// one in the metric's direction: the search would isolate an improvement.
func (s *setSearch) checkDirection() error {
	g, b := stats.Median(s.good.samples), stats.Median(s.bad.samples)
	switch s.opts.Better {
	case "":
		return nil
	case record.Higher:
		if b < g {
			return nil
		}
	case record.Lower:
		if b > g {
			return nil
		}
	}
	return fmt.Errorf("isolate: %w (medians %.4g and %.4g, %s values better)", ErrNotWorse, b, g, s.opts.Better)
}
