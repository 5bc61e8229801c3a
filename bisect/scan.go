package bisect

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/perfbot/perfbot/record"
)

// DefaultScanStep is the distance between survey points of Scan.
const DefaultScanStep = 8

// ScanSameTail is Scan's default Options.SameTail: a stretch whose ends
// leave less than a 10% chance of a change of the minimum effect is let
// go, as the residual checks beside a culprit are. Proving the absence of
// a change near the minimum effect on each of a dozen stretches would cost
// more runs than bisecting them all.
const ScanSameTail = 0.1

// Scan finds every change along a long chain, such as a repository's whole
// history. Bisect compares the two ends first, so a regression followed by
// an improvement of similar size inside its range is invisible to it: the
// ends agree and the verdict is not_reproduced. Scan surveys the chain
// instead: it takes a survey point every step commits (both ends
// included), runs Bisect on each pair of adjacent points — whose end
// verification costs little when they agree, and whose measurements are
// shared with the neighbouring pair — and merges what the ranges found.
// Only changes that cancel within one step stay hidden.
//
// A survey point that does not build is replaced by the next commit that
// does, within the step. Culprit and probe indexes in the Result refer to
// chain. The Result's Good and Bad describe the chain's two ends as
// measured; its Samples add up every range's.
func Scan(ctx context.Context, chain []string, o Oracle, opts Options, step int) (*Result, error) {
	if err := validateChain(chain); err != nil {
		return nil, err
	}
	if step < 2 {
		step = DefaultScanStep
	}
	if opts.SameTail == 0 {
		opts.SameTail = ScanSameTail
	}
	points, skipped, err := surveyPoints(ctx, chain, o, step, opts.OnProbe)
	if err != nil {
		return nil, err
	}
	if len(points) < 2 {
		return nil, fmt.Errorf("scan: fewer than two commits of %d build: %w", len(chain), record.ErrBroken)
	}
	out := &Result{Verdict: record.OutcomeNotReproduced, Direction: opts.Direction}
	if out.Direction == "" {
		out.Direction = record.Regression
	}
	for _, i := range skipped {
		out.Skipped = append(out.Skipped, chain[i])
	}
	probes := map[int]Probe{}
	for k := 0; k+1 < len(points); k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lo, hi := points[k], points[k+1]
		res, err := Bisect(ctx, chain[lo:hi+1], o, opts)
		if err != nil {
			return nil, fmt.Errorf("scan %d..%d: %w", lo, hi, err)
		}
		if k == 0 {
			out.Good = res.Good
		}
		out.Bad = res.Bad
		mergeRange(out, res, lo, probes)
	}
	for i := range chain {
		if p, ok := probes[i]; ok {
			out.Probes = append(out.Probes, p)
		}
	}
	return out, nil
}

// surveyPoints returns the chain indexes of the survey, every step commits
// and the last one, each moved forward past commits that do not build, and
// the broken commits met on the way.
func surveyPoints(ctx context.Context, chain []string, o Oracle, step int, onProbe func(ProbeEvent)) (points, broken []int, err error) {
	builds := func(ctx context.Context, o Oracle, commit string) (bool, error) {
		ok, err := builds(ctx, o, commit)
		if err == nil && onProbe != nil {
			status := StatusOK
			if !ok {
				status = StatusBroken
			}
			onProbe(ProbeEvent{Phase: PhaseSurvey, Commit: commit, Index: indexOf(chain, commit), N: 1, Status: status})
		}
		return ok, err
	}
	last := len(chain) - 1
	for want := 0; want <= last; want += step {
		if want != 0 && want != last && last-want < step/2 {
			continue // too close to the end: the end point covers it
		}
		i, bad, err := firstBuilding(ctx, chain, o, builds, want, min(want+step-1, last))
		broken = append(broken, bad...)
		if err != nil {
			return nil, nil, err
		}
		if i >= 0 && (len(points) == 0 || i > points[len(points)-1]) {
			points = append(points, i)
		}
	}
	if len(points) == 0 || points[len(points)-1] != last {
		i, bad, err := firstBuilding(ctx, chain, o, builds, last, 1)
		broken = append(broken, bad...)
		if err != nil {
			return nil, nil, err
		}
		if i >= 0 && (len(points) == 0 || i > points[len(points)-1]) {
			points = append(points, i)
		}
	}
	return points, broken, nil
}

// PhaseSurvey marks the survey points of Scan in ProbeEvents.
const PhaseSurvey = "survey"

type buildCheck func(ctx context.Context, o Oracle, commit string) (bool, error)

func indexOf(chain []string, commit string) int {
	for i, c := range chain {
		if c == commit {
			return i
		}
	}
	return -1
}

// firstBuilding walks chain from index from to index to (either way, both
// included) and returns the first commit that builds, or −1, with the
// broken commits it passed.
func firstBuilding(ctx context.Context, chain []string, o Oracle, builds buildCheck, from, to int) (int, []int, error) {
	step := 1
	if to < from {
		step = -1
	}
	var broken []int
	for i := from; i != to+step; i += step {
		ok, err := builds(ctx, o, chain[i])
		if err != nil {
			return -1, broken, err
		}
		if ok {
			return i, broken, nil
		}
		broken = append(broken, i)
	}
	return -1, broken, nil
}

// builds measures one run of commit, or reuses what is recorded, to learn
// whether it can be measured at all.
func builds(ctx context.Context, o Oracle, commit string) (bool, error) {
	_, err := o.Samples(ctx, commit, 1)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, record.ErrBroken):
		return false, nil
	default:
		return false, infraError(commit, err)
	}
}

// mergeRange adds the findings of the range starting at chain index off
// to out.
func mergeRange(out, res *Result, off int, probes map[int]Probe) {
	for _, c := range res.Culprits {
		c.Index += off
		out.Culprits = append(out.Culprits, c)
	}
	out.Candidates = append(out.Candidates, res.Candidates...)
	for _, s := range res.Skipped {
		if !slices.Contains(out.Skipped, s) {
			out.Skipped = append(out.Skipped, s)
		}
	}
	for _, s := range res.SkippedInfra {
		if !slices.Contains(out.SkippedInfra, s) {
			out.SkippedInfra = append(out.SkippedInfra, s)
		}
	}
	if out.held == nil {
		out.held = map[string][]Run{}
	}
	for c, runs := range res.held {
		if len(runs) > len(out.held[c]) {
			out.held[c] = runs
		}
	}
	for _, p := range res.Probes {
		p.Index += off
		if old, ok := probes[p.Index]; !ok || p.N > old.N {
			probes[p.Index] = p
		}
	}
	out.Samples += res.Samples
	out.Rounds += res.Rounds
	if res.Since > 0 && (out.Since == 0 || res.Since < out.Since) {
		out.Since = res.Since
	}
	out.Drifting = out.Drifting || res.Drifting
	if out.Drifting {
		out.Noise = Noise{}
	} else if res.Noise.DF > out.Noise.DF {
		out.Noise = res.Noise
	}
	out.Warnings = record.MergeWarnings(out.Warnings, res.Warnings)
	switch {
	case len(out.Culprits) > 0:
		out.Verdict = record.OutcomeCulprit
	case len(out.Candidates) > 0:
		out.Verdict = record.OutcomeCandidates
	case res.Verdict == record.OutcomeInconclusive:
		out.Verdict = record.OutcomeInconclusive
	}
}
