package bisecttest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

// SetWorld is a seeded, noisy minimize.Oracle over a set of elements (hunks
// or environment variables). A configuration's samples are lognormal around
// Base·exp(Effect(set)) with a coefficient of variation CV; a configuration
// for which Broken holds does not build. Values are recorded, so asking
// again for a configuration returns what it already has plus what is
// missing, as the real measurement cache does.
type SetWorld struct {
	// Elements are the ids the world knows; a set naming anything else is
	// an error (a bug in the search).
	Elements []string
	// Effect is the log-level shift of a configuration relative to the good
	// end (log(0.95) for a 5% drop); nil means no effect anywhere.
	Effect func(set map[string]bool) float64
	// Broken reports whether a configuration fails to apply or build; nil
	// means every configuration builds.
	Broken func(set map[string]bool) bool
	// CV is the noise: the standard deviation of log values.
	CV float64
	// Base is the good end's level; 0 means 100.
	Base float64
	// OutlierRate is the fraction of samples slowed by 30% (a disturbed
	// run), to exercise robust comparisons.
	OutlierRate float64
	// Busy makes the machine busy now and then: of every Busy.Every
	// samples drawn, the last Busy.For have noise Busy.CV instead of CV
	// (neighbours compete for the machine).
	Busy Busy
	// Seed makes the noise repeatable.
	Seed uint64

	mu             sync.Mutex
	rng            *rand.Rand
	recorded       map[string][]float64
	configurations int
	samples        int
}

// Busy describes the busy stretches of a SetWorld's machine; the zero
// value is a quiet machine.
type Busy struct {
	Every, For int
	CV         float64
}

// noise returns the noise of the next sample.
func (w *SetWorld) noise() float64 {
	if b := w.Busy; b.Every > 0 && w.samples%b.Every >= b.Every-b.For {
		return b.CV
	}
	return w.CV
}

var _ minimize.Oracle = (*SetWorld)(nil)

// Samples implements minimize.Oracle.
func (w *SetWorld) Samples(ctx context.Context, set []string, n int) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	members, err := w.members(set)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.recorded == nil {
		w.recorded = map[string][]float64{}
		w.rng = rand.New(rand.NewPCG(w.Seed, w.Seed^0x9e3779b97f4a7c15))
	}
	key := configKey(set)
	xs, seen := w.recorded[key]
	if !seen {
		w.configurations++
		w.recorded[key] = nil
	}
	if w.Broken != nil && w.Broken(members) {
		return nil, fmt.Errorf("build %v: %w", set, record.ErrBroken)
	}
	level := w.base()
	if w.Effect != nil {
		level *= math.Exp(w.Effect(members))
	}
	for len(xs) < n {
		x := level * math.Exp(w.noise()*w.rng.NormFloat64())
		if w.rng.Float64() < w.OutlierRate {
			x *= 0.7
		}
		xs = append(xs, x)
		w.samples++
	}
	w.recorded[key] = xs
	return slices.Clone(xs), nil
}

// Configurations is the number of distinct configurations asked for,
// broken ones included.
func (w *SetWorld) Configurations() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.configurations
}

// SamplesDrawn is the number of samples measured so far.
func (w *SetWorld) SamplesDrawn() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.samples
}

func (w *SetWorld) base() float64 {
	if w.Base == 0 {
		return 100
	}
	return w.Base
}

func (w *SetWorld) members(set []string) (map[string]bool, error) {
	m := make(map[string]bool, len(set))
	for _, e := range set {
		if !slices.Contains(w.Elements, e) {
			return nil, fmt.Errorf("set world: unknown element %q in %v", e, set)
		}
		if m[e] {
			return nil, fmt.Errorf("set world: element %q twice in %v", e, set)
		}
		m[e] = true
	}
	return m, nil
}

func configKey(set []string) string {
	s := slices.Clone(set)
	slices.Sort(s)
	return strings.Join(s, "\x00")
}

// Hunks returns h hunk ids "h00", "h01", … in order.
func Hunks(h int) []string {
	ids := make([]string, h)
	for i := range ids {
		ids[i] = fmt.Sprintf("h%02d", i)
	}
	return ids
}

// OneCulprit is a world of h hunks where only hunk culprit shifts the level
// by shift (a log value).
func OneCulprit(h, culprit int, shift, cv float64, seed uint64) *SetWorld {
	ids := Hunks(h)
	return &SetWorld{
		Elements: ids,
		Effect:   Shift(shift, ids[culprit]),
		CV:       cv,
		Seed:     seed,
	}
}

// Pair is a world of h hunks where hunks a and b shift the level only when
// both are applied.
func Pair(h, a, b int, shift, cv float64, seed uint64) *SetWorld {
	ids := Hunks(h)
	return &SetWorld{
		Elements: ids,
		Effect:   Shift(shift, ids[a], ids[b]),
		CV:       cv,
		Seed:     seed,
	}
}

// NeedsDependency is a world of h hunks where hunk culprit shifts the level
// and does not build without hunk dep (it uses what dep adds).
func NeedsDependency(h, culprit, dep int, shift, cv float64, seed uint64) *SetWorld {
	ids := Hunks(h)
	deps := map[string][]string{ids[culprit]: {ids[dep]}}
	return &SetWorld{
		Elements: ids,
		Effect:   Shift(shift, ids[culprit]),
		Broken:   BrokenWithout(deps),
		CV:       cv,
		Seed:     seed,
	}
}

// Shift returns an Effect that shifts the level by shift when every one of
// the named elements is in the set.
func Shift(shift float64, all ...string) func(map[string]bool) float64 {
	return func(set map[string]bool) float64 {
		for _, e := range all {
			if !set[e] {
				return 0
			}
		}
		return shift
	}
}

// BrokenWithout returns a Broken function: a set is broken when one of its
// elements is present without an element it needs.
func BrokenWithout(deps map[string][]string) func(map[string]bool) bool {
	return func(set map[string]bool) bool {
		for e, needs := range deps {
			if !set[e] {
				continue
			}
			for _, d := range needs {
				if !set[d] {
					return true
				}
			}
		}
		return false
	}
}

// RandomDeps makes each element, with probability fraction, need one other
// element chosen at random (never itself; cycles are allowed, as two hunks
// may use each other).
func RandomDeps(elements []string, fraction float64, rng *rand.Rand) map[string][]string {
	deps := map[string][]string{}
	if len(elements) < 2 {
		return deps
	}
	for i, e := range elements {
		if rng.Float64() >= fraction {
			continue
		}
		j := rng.IntN(len(elements) - 1)
		if j >= i {
			j++
		}
		deps[e] = []string{elements[j]}
	}
	return deps
}
