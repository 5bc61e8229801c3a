// Package bisect localizes performance changes under measurement noise:
// Bisect finds the commit of a first-parent chain that changed a metric,
// Isolate narrows a commit down to the hunks (or environment variables)
// that matter, and Classify is the comparison both rely on.
//
// The package measures nothing itself. It asks an Oracle (commits) or a
// SetOracle (hunk or variable subsets) for values and never imports git,
// hosts or the store; bisecttest holds seeded fakes of both.
//
// # Comparing on log values
//
// Every comparison works on the logarithm of the metric, so effects are
// ratios ("−5%"), the same for tok/s and ms, and noise proportional to the
// level (a coefficient of variation) is a constant σ. Two groups of runs are
// compared by Bayesian model comparison with flat priors on the group means
// and the Jeffreys prior on a common σ, which gives closed-form Student-t
// marginal likelihoods. Runs are screened for outliers against a pooled
// median absolute deviation (a stalled host or a throttled GPU produces one
// slow run, not a slow commit); the screen waits for twenty runs, because
// a scale from fewer is too noisy to judge by.
//
// # Commit bisection
//
// Bisect follows algorithms.md §1.7 (a Bayesian change-point bisection):
//
//  1. Verify the ends. The good and bad ends are measured alternately
//     (A B A B …, so that drift cancels), InitialRuns each, counting what the
//     oracle already holds, and then one more run each at a time until the
//     change is shown in the searched direction by at least MinEffect
//     (error 1%) or shown smaller than MinEffect with ten times the
//     evidence a culprit needs (at least 2×InitialRuns runs per end); the
//     latter is record.OutcomeNotReproduced and nothing is bisected.
//  2. Keep a posterior over the first bad commit. A split of the measured
//     commits into a left and a right segment has the marginal likelihood
//     (nL·nR)^(−1/2)·(SS_L+SS_R)^(−(n−2)/2); with prefix sums the whole
//     posterior costs O(measured commits). All positions between two
//     measured commits share one likelihood, so only a commit measured next
//     to a measured neighbour can become a culprit.
//  3. Probe where the posterior splits 50/50 (with K hosts, at the
//     quantiles j/(K+1), measured concurrently), one run at a time. A
//     commit measured before is preferred when its split is within 0.2 of
//     the best one: another run costs no build. Reference balancing: a
//     probe never gets as many runs as the runs that pin down the weaker of
//     the two levels (the commits whose side is already 95% certain); the
//     end on that side is measured instead, so that no probe outweighs its
//     references and the search cannot get stuck on it.
//  4. At 0.95 a culprit is taken up; the two ranges beside it are checked
//     (good…culprit−1, culprit…bad) with the same sequential comparison,
//     whose runs on the culprit's neighbours go back into the posterior. The
//     culprit stands once it holds Confidence; a residual range whose ends
//     differ is searched the same way (a second culprit), each culprit with
//     its own direction when Direction is Any.
//  5. After every round the ends of the range are compared again; a range
//     whose change vanishes (chance made the ends look different) is
//     dropped, and a residual range may spend at most what the search had
//     spent when it was admitted.
//
// A commit whose build fails (ErrBroken) is skipped: it leaves the model and
// is listed in Result.Skipped. A change between a measured commit and the
// next one after a block of broken commits cannot be placed more precisely;
// it is reported as record.OutcomeCandidates with the block and that commit. Any
// other oracle error is an *InfraError and ends the search. When MaxRuns
// is spent first, the verdict is record.OutcomeInconclusive (or the culprits found
// so far, with a warning).
//
// # Example
//
//	res, err := bisect.Bisect(ctx, chain, oracle, bisect.Options{
//		Better:    record.Higher, // tok/s
//		Direction: record.Regression,
//	})
//	if err != nil {
//		return err // *InfraError: retry the job later
//	}
//	for _, c := range res.Culprits {
//		fmt.Println(c) // c0123 −5.1% [−5.6, −4.6] p=0.993
//	}
//
// # Figures
//
// From cmd/bench-bisect (2000 simulated bisections per row, a 5% drop,
// culprit uniform): 28–35 runs for 64–1024 commits at 2% noise with
// 99.8–99.9% exact culprits, 126–160 runs at 5% noise with about 99%; plain
// bisection needs 80–120 runs (k=10) at 2% and 240–360 (k=30, 88–95%) at
// 5%.
//
// # Caveats
//
//   - The model has one change point per range. Two changes in one range
//     are found through the residual checks, which look for a further change
//     of at least MinEffect with limited runs: at 2% noise two 3% drops are
//     both found in about 60% of the simulated cases. A regression masked by
//     a later improvement of the same size leaves the ends equal and is not
//     found at all.
//   - The confidence is a posterior under the model (Gaussian log values,
//     one σ for the whole chain). It is well calibrated in simulation; noise
//     that differs between commits, or drift within a host, is not modelled.
//     Interleaving the ends and screening outliers limit the damage.
//   - Culprit effects are ratios of segment medians with a normal-theory
//     interval; commits measured many times near the change weigh more, so
//     the interval is a little optimistic.
package bisect
