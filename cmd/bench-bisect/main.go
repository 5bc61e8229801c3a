// Command bench-bisect measures perfbot's commit bisection against
// baselines and a floor on simulated noisy histories and prints one table.
//
// Each trial draws a history (a culprit uniform over the chain, log-normal
// run noise of the row's CV; in one row the good end's cache holds 55 runs
// taken in a row while the host was 28% slower), gives every strategy its
// own oracle with the same seed, and scores the outcome: exact culprit set for the rows with a
// change, a "not reproduced" verdict for the row without one. The
// misses column counts the wrong outcomes by kind: a wrong commit, an
// extra commit besides every change, a change missed, no culprit at all (or
// one where nothing changed). The rounds column is the wall time in
// rounds: runs made at once on several hosts count once, and on one host
// every run is a round. In the row of four hosts whose speeds differ by up
// to 5%, the search places its runs on the hosts (bisect.Options.Hosts)
// and every host builds what it measures. The strategies are
//
//   - perfbot: bisect.Bisect with its defaults (end verification, Bayesian
//     change-point bisection, residual checks);
//   - perfbot job: the whole job as `perfbot bisect` runs it, bisect.Locate
//     (search, confirmation, search again on an unconfirmed culprit) with
//     the bisect.Options the service builds from a noise repository's
//     configuration (internal/noisyrepo: every bisect key at its default).
//     Its evidence reuses the confirmation's runs, so every run the command
//     makes is counted; it is the only strategy of its rows;
//   - plain: bisection with k runs per probe and per end, deciding each
//     probe by the nearer of the two end means (k=10 at 2% CV, 30 at 5%);
//   - pinpoint: a Pinpoint-like explorer: 10 runs per change, min(KS, MWU)
//     p-value, different below 0.01, 10 more runs on unknown, speculation
//     2 (three midpoints per different range);
//   - known levels (floor): probabilistic bisection told the log levels
//     of both ends and the noise σ, one run a probe at the commit that
//     splits the exact posterior most evenly, stopping at 0.995. It
//     marks the floor: what a search spends beyond it at that accuracy
//     is the price of learning the levels and σ from its own runs, or of
//     a worse choice of probes. It runs on the rows of one change on a
//     steady host.
//
// Rows with a target (issue 34: mean runs and accuracy perfbot should
// reach) are listed again in a second table, each marked met or not met.
//
// Usage:
//
//	bench-bisect [-trials 1000] [-seed 1] [-rows substring] [-workers N]
//
// cmd/bench-cli measures the real command on noise repositories; its
// mean runs are what the whole-job row should agree with (the figures
// page holds both).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench-bisect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	trials := fs.Int("trials", 1000, "bisections per row")
	seed := fs.Int64("seed", 1, "seed of the simulation")
	rows := fs.String("rows", "", "run only the rows whose scenario contains this string")
	workers := fs.Int("workers", runtime.NumCPU(), "concurrent trials")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *trials < 1 || *workers < 1 {
		fmt.Fprintln(stderr, "bench-bisect: -trials and -workers must be positive")
		return 2
	}
	start := time.Now()
	fmt.Fprintf(stdout, "%d trials per row, seed %d\n\n", *trials, *seed)
	fmt.Fprintf(stdout, "| scenario | strategy | accuracy | mean runs | p90 runs | mean rounds | mean builds | misses wrong/extra/short/none |\n")
	fmt.Fprintf(stdout, "|---|---|---|---|---|---|---|---|\n")
	var goals []string
	for _, sc := range scenarios() {
		if !strings.Contains(sc.name, *rows) {
			continue
		}
		for _, st := range strategies(sc) {
			sum, err := simulate(ctx, sc, st, *trials, *seed, *workers)
			if err != nil {
				fmt.Fprintf(stderr, "bench-bisect: %s/%s: %v\n", sc.name, st.name, err)
				return 1
			}
			fmt.Fprintf(stdout, "| %s | %s | %.4f | %.1f | %d | %.1f | %.1f | %s |\n",
				sc.name, st.name, sum.accuracy, sum.meanRuns, sum.p90Runs, sum.meanRounds, sum.meanBuilds, sum.misses)
			if sc.target != nil && strings.HasPrefix(st.name, "perfbot") {
				goals = append(goals, goalRow(sc, sum))
			}
		}
	}
	if len(goals) > 0 {
		fmt.Fprintf(stdout, "\n| scenario | perfbot | target | met |\n|---|---|---|---|\n")
		for _, g := range goals {
			fmt.Fprint(stdout, g)
		}
	}
	fmt.Fprintf(stderr, "bench-bisect: done in %s\n", time.Since(start).Round(time.Second))
	return 0
}

// goalRow is the line of the targets table for a row with a target.
func goalRow(sc scenario, s summary) string {
	met := "not met"
	if sc.target.met(s) {
		met = "met"
	}
	return sprintf("| %s | %.1f runs, accuracy %.4f | %s | %s |\n", sc.name, s.meanRuns, s.accuracy, sc.target, met)
}
