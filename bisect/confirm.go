package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// ConfirmVerdict is what Confirm concluded about a culprit.
type ConfirmVerdict string

const (
	// Confirmed: runs of the parent and the culprit taken side by side
	// show the change on the culprit's side: the 95% interval of the
	// effect excludes zero.
	Confirmed ConfirmVerdict = "confirmed"
	// NotShown: the runs do not show the change, and more runs within the
	// budget could not make them show it at the current estimate.
	NotShown ConfirmVerdict = "not_shown"
	// Unmeasurable: the parent cannot be measured (it does not build).
	Unmeasurable ConfirmVerdict = "unmeasurable"
)

// DefaultConfirmPairs is the default of Options.ConfirmPairs.
const DefaultConfirmPairs = 12

// minPairs is the fewest pairs an effect interval rests on: stats.Delta
// gives no 95% interval below four runs a side.
const minPairs = 4

// minNoisePairs is the fewest runs of each side, once screened, that a
// change standing out of noise rests on (shownByNoise): the fewest pairs
// that confirm on the search's noise (ConfirmOptions.Noise), which must
// rest on minStandOutDF degrees of freedom, as many as the search needs
// to take up a change that stands out. Student's t widens the interval
// for how little is known of the noise; the strict level
// (standOutConfidence) stands in for a drift the search did not find,
// which no interval on the noise within commits allows for.
const minNoisePairs = 2

// shownByNoise is the rule by which a change stands out of noise, one
// decision for the search (standsOut) and Confirm: it reports whether the
// change from parent to self, log values screened of their outliers,
// rests on at least minNoisePairs runs of each and noise of at least
// minStandOutDF degrees of freedom, and the standOutConfidence interval of
// the change on that noise (stats.DeltaNoiseLogs) lies on the side of sign
// (either side when sign is 0).
func shownByNoise(parent, self []float64, noise Noise, sign float64) bool {
	if min(len(parent), len(self)) < minNoisePairs || noise.DF < minStandOutDF {
		return false
	}
	e := stats.DeltaNoiseLogs(parent, self, noise.Sigma, noise.DF, standOutConfidence)
	if math.IsNaN(e.Pct) {
		return false
	}
	return (sign <= 0 && e.Hi < 0) || (sign >= 0 && e.Lo > 0)
}

// futilePairs is the fewest pairs on which Confirm gives a culprit up as
// not shown: four runs a side refute a real change now and then.
const futilePairs = 6

// Confirmation is the verdict of Confirm on one culprit.
type Confirmation struct {
	Commit string `json:"commit"`
	Parent string `json:"parent"`
	// Verdict is the conclusion; Confirmed repeats whether it is
	// Confirmed.
	Verdict   ConfirmVerdict `json:"verdict"`
	Confirmed bool           `json:"confirmed"`
	// Pairs is the number of parent/culprit run pairs the verdict rests
	// on, and Fresh the runs Confirm made for it (the others were the
	// search's).
	Pairs int `json:"pairs"`
	Fresh int `json:"fresh"`
	// Effect is the change from the parent to the culprit in percent,
	// with its 95% interval: stats.Delta of the paired runs.
	Effect record.Effect `json:"effect"`
	// ParentRuns and SelfRuns summarize the paired runs of the two.
	ParentRuns EndSummary `json:"parent_runs"`
	SelfRuns   EndSummary `json:"self_runs"`
	// LastSeq is the place in time of the latest run the verdict rests
	// on; a culprit confirmed again later is judged on later runs only.
	LastSeq uint64 `json:"last_seq"`
	// Noise is set when the verdict rests on the search's noise
	// (ConfirmOptions.Noise): Effect is then stats.DeltaNoiseLogs of the
	// runs the screen kept.
	Noise *Noise `json:"noise,omitempty"`
}

// String says what the verdict rests on.
func (c Confirmation) String() string {
	if c.Verdict == Unmeasurable {
		return fmt.Sprintf("its parent %s cannot be measured", record.ShortHash(c.Parent))
	}
	s := fmt.Sprintf("%d interleaved runs each of parent and culprit give %s", c.Pairs, c.Effect)
	if c.ParentRuns.N != c.SelfRuns.N {
		s = fmt.Sprintf("%d runs of the parent and %d of the culprit, interleaved with the search's, give %s",
			c.ParentRuns.N, c.SelfRuns.N, c.Effect)
	}
	if c.Noise != nil {
		s += fmt.Sprintf(" (an interval from the search's noise, %.2g%% a run on %.0f degrees of freedom)", 100*math.Expm1(c.Noise.Sigma), c.Noise.DF)
	}
	return s
}

// Record is the confirmation as a finding keeps it.
func (c Confirmation) Record() *record.Confirmation {
	return &record.Confirmation{Confirmed: c.Confirmed, Pairs: c.Pairs, Fresh: c.Fresh, Effect: c.Effect, Text: c.String()}
}

// ConfirmOptions configures Confirm.
type ConfirmOptions struct {
	// Better is the metric's direction. Default record.Higher.
	Better record.Better
	// Direction is the culprit's change, Regression (default) or
	// Improvement: the side of zero the interval must fall on.
	Direction record.Direction
	// MaxPairs bounds the fresh pairs of runs Confirm may take. Default
	// DefaultConfirmPairs.
	MaxPairs int
	// After leaves out the runs up to this place in time (Run.Seq): a
	// culprit that an earlier confirmation did not confirm is judged
	// again on runs taken since (Confirmation.LastSeq), not on the same
	// runs twice.
	After uint64
	// Recent, when not 0, is the place in time (Run.Seq) from which the
	// runs of the two count as they are, paired or not: runs the search
	// that named the culprit took, one session on a host whose speed did
	// not drift (Result.Since and Result.Drifting). Older runs count in
	// pairs only.
	Recent uint64
	// Host, when set and the oracle is a HostOracle, is where the fresh
	// pairs run: both runs of a pair on one machine, since only runs of
	// one machine pair.
	Host string
	// OnProbe, when set, is called after every run.
	OnProbe func(ProbeEvent)
	// Noise, when set, is the noise the search that named the culprit
	// measured on one steady host (Result.Noise): with fewer pairs than
	// the distribution-free interval needs, a change that stands out of
	// it by the search's own rule confirms (shownByNoise), on runs
	// screened of outliers at Noise.Scale.
	Noise Noise
	// Held are runs already in hand, by commit, as the oracle last
	// returned them (a search's own, Result.held). Confirm starts from
	// them where they hold the parent or the culprit, and asks the
	// oracle for what it has recorded otherwise.
	Held map[string][]Run
}

// Confirm decides whether the change of culprit against its parent shows
// in runs of the two taken side by side in time, and returns the verdict
// with the effect estimated from those runs.
//
// Runs already recorded count when a run of the other commit lies within a
// few runs of them (pairs): the search's own runs of the two, taken while
// it closed in on the culprit, usually supply several pairs (ConfirmOptions.
// After leaves the runs up to a point in time out). Confirm then
// adds fresh pairs, one run of each, alternating which goes first so that
// a trend of the host cancels, and stops as soon as the 95% interval of
// the effect (stats.Delta of the pairs) excludes zero on the culprit's side
// (Confirmed), or as soon as it cannot any more within MaxPairs fresh pairs
// at the current estimate, since an interval narrows about as the square
// root of its runs (NotShown). It needs at least four pairs to confirm and
// six to give up, or, when ConfirmOptions.Noise gives the noise the search
// measured, two pairs whose change stands out of that noise by the rule
// the search takes a culprit up by: screened of outliers at the search's
// scale, two runs of each left at least, and the 99.9% interval of the
// change on that noise (stats.DeltaNoiseLogs) excludes zero on the
// culprit's side.
//
// Runs without a positive, finite value count in no pair, as in the
// searches, and runs of two machines make no pair. A parent that does not build gives Unmeasurable; any other
// oracle error is returned.
func Confirm(ctx context.Context, o Oracle, parent, culprit string, opts ConfirmOptions) (Confirmation, error) {
	if opts.MaxPairs <= 0 {
		opts.MaxPairs = DefaultConfirmPairs
	}
	sign := -1.0 // the culprit's effect in percent is negative
	if (opts.Direction == record.Improvement) != (opts.Better == record.Lower) {
		sign = 1
	}
	c := Confirmation{Commit: culprit, Parent: parent}
	pr, err := heldOrRecorded(ctx, o, parent, opts.Held)
	if err == nil {
		var cr []Run
		cr, err = heldOrRecorded(ctx, o, culprit, opts.Held)
		if err == nil {
			err = c.run(ctx, o, pr, cr, sign, opts)
		}
	}
	switch {
	case errors.Is(err, record.ErrBroken):
		c.Verdict, c.Confirmed = Unmeasurable, false
		return c, nil
	case ctx.Err() != nil:
		return c, fmt.Errorf("confirm %s: %w", record.ShortHash(culprit), ctx.Err())
	case err != nil:
		return c, infraError(culprit, err)
	}
	return c, nil
}

// heldOrRecorded returns the runs of commit in held, or else those the
// oracle has recorded.
func heldOrRecorded(ctx context.Context, o Oracle, commit string, held map[string][]Run) ([]Run, error) {
	if runs, ok := held[commit]; ok {
		return runs, nil
	}
	return o.Samples(ctx, commit, 0)
}

// run is Confirm's sequential loop over the runs pr of the parent and cr
// of the culprit.
func (c *Confirmation) run(ctx context.Context, o Oracle, pr, cr []Run, sign float64, opts ConfirmOptions) error {
	left := opts.MaxPairs
	for {
		e := confirmEffect(usableRuns(after(pr, opts.After)), usableRuns(after(cr, opts.After)), opts.Recent)
		c.Pairs = min(len(e.parent), len(e.self))
		c.LastSeq = max(lastSeq(e.parent), lastSeq(e.self))
		c.Effect = e.Effect
		c.ParentRuns, c.SelfRuns = summarize(c.Parent, e.parent), summarize(c.Commit, e.self)
		if c.Pairs < minPairs {
			// The search's rule, on runs screened as the search screens
			// them: decided at its strict level (a drift it did not find
			// passes for a change), shown at the reports' one.
			clean := screen([][]float64{stats.Logs(Values(e.parent)), stats.Logs(Values(e.self))}, opts.Noise.Scale, 0, 1)
			if shownByNoise(clean[0], clean[1], opts.Noise, sign) {
				// The verdict rests on the runs the screen kept, and
				// says so.
				pk, sk := keptRuns(e.parent, clean[0]), keptRuns(e.self, clean[1])
				c.Pairs = min(len(pk), len(sk))
				c.ParentRuns, c.SelfRuns = summarize(c.Parent, pk), summarize(c.Commit, sk)
				c.Effect = stats.DeltaNoiseLogs(clean[0], clean[1], opts.Noise.Sigma, opts.Noise.DF, summaryConfidence)
				c.Noise = &opts.Noise
				c.Verdict, c.Confirmed = Confirmed, true
				return nil
			}
		}
		if c.Pairs >= minPairs {
			if (sign < 0 && c.Effect.Hi < 0) || (sign > 0 && c.Effect.Lo > 0) {
				c.Verdict, c.Confirmed = Confirmed, true
				return nil
			}
			if c.Pairs >= futilePairs && !stillPossible(e, sign, c.Pairs, left) {
				c.Verdict = NotShown
				return nil
			}
		}
		if left == 0 {
			c.Verdict = NotShown
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// Alternate the order of the pair, so that a trend of the host
		// does not favour either commit.
		first, second := &pr, &cr
		firstCommit, secondCommit := c.Parent, c.Commit
		if (opts.MaxPairs-left)%2 == 1 {
			first, second = second, first
			firstCommit, secondCommit = secondCommit, firstCommit
		}
		var err error
		if *first, err = freshRun(ctx, o, opts.Host, firstCommit, *first, opts.OnProbe); err != nil {
			return err
		}
		if *second, err = freshRun(ctx, o, opts.Host, secondCommit, *second, opts.OnProbe); err != nil {
			return err
		}
		c.Fresh += 2
		left--
	}
}

// keptRuns returns the runs whose log values the screen kept: kept is a
// subsequence of the runs' log values, in their order.
func keptRuns(runs []Run, kept []float64) []Run {
	out := make([]Run, 0, len(kept))
	for _, r := range runs {
		if len(out) < len(kept) && math.Log(r.Value) == kept[len(out)] {
			out = append(out, r)
		}
	}
	return out
}

// confirmEffect is the effect Confirm judges: stats.Delta of the pairs of
// parent and culprit runs taken side by side, or, when recent is set and
// at least as many runs of each are recent, of the recent runs of each.
func confirmEffect(parent, self []Run, recent uint64) effect {
	e := effectOf(parent, self, 0)
	if recent == 0 {
		return e
	}
	rp, rs := after(parent, recent-1), after(self, recent-1)
	if min(len(rp), len(rs)) <= len(e.parent) {
		return e
	}
	return effect{Effect: stats.Delta(Values(rp), Values(rs), summaryConfidence), parent: rp, self: rs}
}

// after returns the runs taken after seq.
func after(runs []Run, seq uint64) []Run {
	var out []Run
	for _, r := range runs {
		if r.Seq > seq {
			out = append(out, r)
		}
	}
	return out
}

func lastSeq(runs []Run) uint64 {
	var m uint64
	for _, r := range runs {
		m = max(m, r.Seq)
	}
	return m
}

// freshRun asks the oracle for one run of commit beyond the runs it has,
// on host when it is set and the oracle places runs.
func freshRun(ctx context.Context, o Oracle, host, commit string, have []Run, onProbe func(ProbeEvent)) ([]Run, error) {
	var runs []Run
	var err error
	if ho, ok := o.(HostOracle); ok && host != "" {
		on := 0
		for _, r := range have {
			if r.Host == host {
				on++
			}
		}
		runs, err = ho.SamplesOn(ctx, commit, host, on+1)
	} else {
		runs, err = o.Samples(ctx, commit, len(have)+1)
	}
	if err != nil {
		return nil, err
	}
	if len(runs) <= len(have) {
		return nil, fmt.Errorf("asked for %d runs, got %d", len(have)+1, len(runs))
	}
	if onProbe != nil {
		onProbe(ProbeEvent{Phase: PhaseConfirm, Commit: commit, Index: -1, N: len(runs),
			Median: medianOrZero(Values(runs)), Status: StatusOK})
	}
	return runs, nil
}

// stillPossible reports whether left more pairs could make the interval of
// e exclude zero on the side of sign if the estimate stayed where it is.
// The runs' own spread projects the interval's half-width then (about
// two standard errors of a difference of means with that many runs a
// side): the distribution-free interval of a few runs is much wider than
// it will be, so its own width would stop a real change too early.
func stillPossible(e effect, sign float64, pairs, left int) bool {
	est := math.Log1p(e.Pct / 100)
	if sign*est <= 0 {
		return false
	}
	sigma, df := stats.Pooled(stats.Logs(Values(e.parent)), stats.Logs(Values(e.self)))
	if df < 1 {
		return true
	}
	n := float64(pairs + left)
	return math.Abs(est) > 2*sigma*math.Sqrt(2/n)
}
