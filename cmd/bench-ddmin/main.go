// Command bench-ddmin measures, by seeded simulation, what minimize.Isolate
// costs to narrow a culprit commit down to its hunks: the configurations
// (builds) and samples (benchmark runs) it needs and how often it finds the
// exact minimal set.
//
// Every trial draws a commit of H hunks spread over files of one to six
// hunks, a 5% drop of a higher-is-better metric, and lognormal noise of the
// row's coefficient of variation; the oracle is bisecttest.SetWorld. The
// scenarios are one culprit hunk, two hunks that only regress together, and
// one culprit where 30% of the hunks need another hunk to build, once with
// the dependencies given to Isolate (it closes every configuration over
// them) and once without (it only sees build failures).
//
// Usage:
//
//	bench-ddmin [-trials 200] [-seed 1] [-v]
//
// -v prints every trial that misses the minimal set, with its tests.
//
// Columns: "exact" is the share of trials whose Isolation.Minimal is the
// true minimal set. The "tests" columns count distinct configurations
// (builds) other than the two ends (the parent and the culprit, which a
// bisection has measured already); the target for one culprit is
// log2(H)+2 on average. "broken" and "undecided" are the tests per trial
// that did not build and that ran out of samples. "samples" counts every
// benchmark run, the ends' included.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench-ddmin:", err)
		os.Exit(1)
	}
}

// drop is the simulated regression: a 5% loss of a higher-is-better metric.
var drop = math.Log(0.95)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench-ddmin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	trials := fs.Int("trials", 200, "trials per row")
	seed := fs.Uint64("seed", 1, "seed of the simulation")
	verbose := fs.Bool("v", false, "print every trial that misses the minimal set")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *trials < 1 {
		return fmt.Errorf("-trials %d: need at least one trial", *trials)
	}
	var rows []row
	for _, cv := range []float64{0.02, 0.05} {
		for _, sc := range scenarios {
			for _, h := range []int{8, 16, 32, 64} {
				var misses io.Writer
				if *verbose {
					misses = stderr
				}
				r, err := simulate(ctx, sc, h, cv, *trials, *seed, misses)
				if err != nil {
					return fmt.Errorf("%s, H=%d, CV=%g: %w", sc.name, h, cv, err)
				}
				rows = append(rows, r)
			}
		}
	}
	return printTable(stdout, rows, *trials)
}

// trial is one simulated commit: the world that measures it, the
// dependencies Isolate is told about, and the minimal set it should find.
type trial struct {
	world *bisecttest.SetWorld
	deps  map[string][]string
	want  []string
}

// scenario draws the trials of one kind of commit.
type scenario struct {
	name string
	draw func(ids []string, cv float64, rng *rand.Rand) trial
}

var scenarios = []scenario{
	{"one culprit", oneCulprit},
	{"pair only together", pair},
	{"30% need a dep, closure", func(ids []string, cv float64, rng *rand.Rand) trial {
		return withDeps(ids, cv, rng)
	}},
	{"30% need a dep, builds only", func(ids []string, cv float64, rng *rand.Rand) trial {
		t := withDeps(ids, cv, rng)
		t.deps = nil
		return t
	}},
}

// oneCulprit is a commit where one hunk costs the 5%.
func oneCulprit(ids []string, cv float64, rng *rand.Rand) trial {
	c := ids[rng.IntN(len(ids))]
	w := &bisecttest.SetWorld{Elements: ids, Effect: bisecttest.Shift(drop, c), CV: cv}
	return trial{world: w, want: []string{c}}
}

// pair is a commit where two hunks cost the 5% only together.
func pair(ids []string, cv float64, rng *rand.Rand) trial {
	p := rng.Perm(len(ids))
	a, b := ids[min(p[0], p[1])], ids[max(p[0], p[1])]
	w := &bisecttest.SetWorld{Elements: ids, Effect: bisecttest.Shift(drop, a, b), CV: cv}
	return trial{world: w, want: []string{a, b}}
}

// withDeps is a commit where 30% of the hunks need another hunk to build
// and one hunk costs the 5%; the culprit is to be found with everything it
// needs.
func withDeps(ids []string, cv float64, rng *rand.Rand) trial {
	deps := bisecttest.RandomDeps(ids, 0.3, rng)
	c := ids[rng.IntN(len(ids))]
	w := &bisecttest.SetWorld{
		Elements: ids,
		Effect:   bisecttest.Shift(drop, c),
		Broken:   bisecttest.BrokenWithout(deps),
		CV:       cv,
	}
	need := map[string]bool{c: true}
	for stack := []string{c}; len(stack) > 0; {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range deps[e] {
			if !need[d] {
				need[d] = true
				stack = append(stack, d)
			}
		}
	}
	var want []string
	for _, id := range ids {
		if need[id] {
			want = append(want, id)
		}
	}
	return trial{world: w, deps: deps, want: want}
}

// row is one line of the table.
type row struct {
	scenario string
	h        int
	cv       float64
	exact    int
	tests    []int // configurations other than the ends, per trial
	samples  []int
	broken   []int
	// undecided counts tests that ran to MaxRunsPerTest.
	undecided []int
}

// simulate runs one row's trials; misses, when not nil, receives a line for
// every trial that does not find the minimal set.
func simulate(ctx context.Context, sc scenario, h int, cv float64, trials int, seed uint64, misses io.Writer) (row, error) {
	r := row{scenario: sc.name, h: h, cv: cv}
	for t := range trials {
		rng := rand.New(rand.NewPCG(seed, uint64(h)<<32|uint64(t)))
		ids := bisecttest.Hunks(h)
		tr := sc.draw(ids, cv, rng)
		w := tr.world
		w.Seed = rng.Uint64()
		iso, err := minimize.Isolate(ctx, w, minimize.Options{
			Groups: files(ids, rng),
			Deps:   tr.deps,
			Better: record.Higher,
		})
		if errors.Is(err, minimize.ErrEndsAlike) {
			if misses != nil {
				fmt.Fprintf(misses, "%s H=%d CV=%g trial %d: %v\n", sc.name, h, cv, t, err)
			}
			r.tests = append(r.tests, w.Configurations()-2)
			r.samples = append(r.samples, w.SamplesDrawn())
			continue
		}
		if err != nil {
			return r, err
		}
		if slices.Equal(iso.Minimal, tr.want) {
			r.exact++
		} else if misses != nil {
			fmt.Fprintf(misses, "%s H=%d CV=%g trial %d: want %v, found %v\n", sc.name, h, cv, t, tr.want, iso.Minimal)
			for _, tt := range iso.Tests {
				fmt.Fprintf(misses, "\t%s %v n=%d p=%.4f %s\n", tt.Side, tt.Set, tt.N, tt.PBad, tt.Outcome)
			}
		}
		r.tests = append(r.tests, iso.Configurations-2)
		r.samples = append(r.samples, iso.Samples)
		broken, undecided := countUnresolved(iso)
		r.broken = append(r.broken, broken)
		r.undecided = append(r.undecided, undecided)
	}
	return r, nil
}

// countUnresolved counts the tests that did not build and those that ran
// out of samples undecided.
func countUnresolved(iso *minimize.Isolation) (broken, undecided int) {
	for _, t := range iso.Tests {
		switch {
		case t.Broken:
			broken++
		case t.Outcome == minimize.OutcomeUnresolved:
			undecided++
		}
	}
	return broken, undecided
}

// files spreads the hunks, in order, over files of one to six hunks.
func files(ids []string, rng *rand.Rand) []minimize.Group {
	var groups []minimize.Group
	for i := 0; i < len(ids); {
		n := min(1+rng.IntN(6), len(ids)-i)
		groups = append(groups, minimize.Group{Name: fmt.Sprintf("file%d.go", len(groups)), Elements: ids[i : i+n]})
		i += n
	}
	return groups
}

// printTable writes the rows as an aligned table under a title.
func printTable(w io.Writer, rows []row, trials int) error {
	fmt.Fprintf(w, "Isolate on simulated commits: 5%% drop, %d trials per row; tests = configurations besides the two ends\n\n", trials)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tCV\tH\texact\ttests mean\ttests max\tlog2(H)+2\tbroken\tundecided\tsamples mean\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.0f%%\t%d\t%.1f%%\t%.2f\t%d\t%.0f\t%.2f\t%.2f\t%.1f\t\n",
			r.scenario, 100*r.cv, r.h, 100*float64(r.exact)/float64(trials),
			meanOf(r.tests), slices.Max(r.tests), math.Log2(float64(r.h))+2,
			meanOf(r.broken), meanOf(r.undecided), meanOf(r.samples))
	}
	return tw.Flush()
}

// meanOf is the mean of xs, 0 for none.
func meanOf(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0
	for _, x := range xs {
		s += x
	}
	return float64(s) / float64(len(xs))
}
