// Package stats holds the statistics perfbot reports and decides with:
// sample summaries, A/B comparisons and change detection on nightly
// series. It wraps golang.org/x/perf/benchmath for what benchstat already
// does, so that perfbot's issues and benchstat agree.
//
// # Choices
//
// Medians, not means. Benchmark noise on GPUs and shared hosts is skewed
// and has outliers (a thermal throttle, a page-cache miss, a co-tenant).
// The median ignores them, and its confidence interval from order
// statistics (Summarize) assumes nothing about the distribution. With few
// values benchmath can give no interval (it needs 6 at 95%); Summarize then
// reports [min, max] together with the lower confidence that range really
// has, and a warning.
//
// Log space. Changes are ratios: a commit that makes decoding 10% slower is
// the same regression at 100 tok/s and at 10 000 tok/s. Delta estimates
// the change as the Hodges–Lehmann shift of log values (the median of all
// pairwise log ratios) with the distribution-free interval that matches
// the Mann–Whitney test, and reports it in percent. It is deterministic:
// no bootstrap, no seed. CUSUM also works on logs so that its allowance is
// a fraction of the baseline.
//
// Tests are for reports; decisions are elsewhere. Compare gives
// benchstat's Mann–Whitney p, which is right for the summary table of an
// issue and wrong for a bisection step: testing each probe "against the
// good end at α = 0.05" throws away what the bad end says, peeks
// repeatedly (inflating α), and cannot reject at all with 3 values a side
// (minimum p = 0.1). The bisector (package bisect) weighs each probe
// against both ends instead; research/algorithms.md §1 has the
// simulations.
//
// Change detection. A nightly series should hold one value per night (the
// median of that night's repeats): repeats within a night share the host
// and the build and are not independent. CUSUM is the online alarm: one
// sided, cheap, and in the simulations of research/algorithms.md §5 the
// detector that never missed a 5% drop, with a median delay of 2–4
// nights. ChangePoints then locates
// the change offline with Otava's E-divisive split and t-test merge; the
// nights on either side of a change point are the range to bisect.
//
// # Example
//
//	good := []float64{812, 815, 809, 811, 814, 813}
//	bad := []float64{701, 699, 705, 702, 698, 700}
//	s := stats.Summarize(bad, 0.95)             // median 700.5, [698, 705] at 0.969
//	pct, lo, hi := stats.Delta(good, bad, 0.95) // −13.8% [−14.1%, −13.3%]
//	p, _ := stats.Compare(good, bad)            // p = 0.002
//
// (The interval's Confidence is the coverage of the order statistics
// chosen, at least the level asked for: 0.969 for 6 values.)
//
// # Caveats
//
// Delta and CUSUM need positive values (throughputs, latencies). Compare's
// p and Delta's interval assume the values of each sample are exchangeable
// (interleave good and bad runs to make them so). ChangePoints' p-values
// are nominal: the split search selects the best point, which is why the
// merge threshold should stay small (0.001).
package stats
