// Package stats is the one place for the statistics perfbot reports and
// decides with: the summary of a sample, the effect between two samples,
// the comparator the searches decide with, and change detection on nightly
// series. Every number perfbot shows for an end or an effect comes from
// here, so the command line, the job's report and the filed issue agree.
// It wraps golang.org/x/perf/benchmath for what benchstat already does.
//
// # Summaries and effects
//
// Medians, not means. Benchmark noise on GPUs and shared hosts is skewed
// and has outliers (a thermal throttle, a page-cache miss, a co-tenant).
// Summarize gives the median with a confidence interval from order
// statistics, which assumes nothing about the distribution. With few
// values there is no interval at the level asked for (benchmath needs 6 at
// 95%); Summarize then reports [min, max] with the lower confidence that
// range really has, and a warning.
//
// Delta is the one estimate of an effect: the change of one sample against
// another in percent, estimated in log space so that it is a ratio (−50%
// and +100% are the same size of change), as the Hodges–Lehmann shift (the
// median of all pairwise log ratios) with the matching distribution-free
// interval, the k-th smallest and k-th largest pairwise ratios with k from
// the exact distribution of the Mann–Whitney statistic. It is
// deterministic (no bootstrap, no seed) and gives no interval below four
// values a side at 95%: then the bounds are −100 and +Inf. Intervals are
// always given as their two bounds.
//
// Compare gives benchstat's Mann–Whitney p, which is right for the summary
// table of an issue and wrong for a bisection step (it cannot reject at
// all with 3 values a side).
//
// # The comparator
//
// The searches (package bisect over commits, package minimize over hunks
// and environment variables) decide on log values with one model: groups
// of runs with their own means and one common, unknown σ, with flat priors
// on the means and the Jeffreys prior on σ, which gives closed-form
// Student-t marginal likelihoods. Classify is its two-group form (does a
// probe share the good end's level or the bad end's?); StudentCDF gives
// its tails.
//
// Before they are compared, runs are screened (Screen): a run farther
// than OutlierCut robust standard deviations from its group's median is
// dropped, and a lone run far outside the span of the two ends as well.
// The robust σ is Scale, the median absolute difference between successive
// runs of a group, pooled over the groups and scaled to be consistent for
// Gaussian noise. Successive differences, not deviations from each group's
// median: most groups of a bisection hold one to three runs, whose median
// sits so close to its own runs that deviations from it understate σ by a
// third, so that honest runs would be cut and a posterior made
// overconfident; they also leave a slow drift within a group out. Scale
// waits for MinScaleRuns differences. Where the center is known (a median
// already taken out, residuals about zero), MAD is the robust σ: the
// scaled median absolute deviation.
//
// # Change detection
//
// A nightly series should hold one value per night (the median of that
// night's repeats): repeats within a night share the host and the build
// and are not independent. CUSUM is the online alarm: one-sided, on logs so
// that its allowance is a fraction of the baseline, with a robust baseline
// frozen during an excursion. ChangePoints locates changes offline: an
// energy-distance split placed where the two sides differ most, recursing
// while a Welch t-test passes a relaxed threshold, then a merge that drops
// the weakest point until every one passes the strict threshold; the
// nights on either side of a change point are the range to bisect.
//
// # Caveats
//
// Delta, Classify and CUSUM need positive values (throughputs, latencies).
// Compare's p and Delta's interval assume the values of each sample are
// exchangeable: take the two samples interleaved in time, which is what
// the searches do. ChangePoints' p-values are nominal: the split search
// selects the best point, which is why the merge threshold should stay
// small (0.001).
package stats
