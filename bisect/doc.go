// Package bisect finds the commit of a first-parent chain that changed a
// metric, under measurement noise, and decides whether that change is
// real. Locate runs a whole bisection as `perfbot bisect` does; Bisect and
// Scan are its searches and Confirm its verdict on a culprit.
//
// The package measures nothing itself. It asks an Oracle for runs of a
// commit and never imports git, hosts or the store; bisecttest holds
// seeded fakes. The statistics it shows (medians, intervals, effects) come
// from package stats, the same functions every report uses.
//
// # Runs in time
//
// Every run the oracle returns carries its place in time (Run.Seq, and
// Run.At when known). A host's speed wanders, so two runs compare fairly
// only when they were taken close together. A run counts in a comparison
// only when a run of another commit of the search lies within a few runs of
// it (and within an hour); the cache of an earlier stretch, an earlier
// night, or a long row of runs of one commit counts in no comparison, and a
// comparison that needs such a commit measures both sides again,
// interleaved. Result.Warnings says how many runs were left out
// (record.WarnStaleRuns).
//
// # Comparing on log values
//
// Every comparison works on the logarithm of the metric, so effects are
// ratios ("−5%"), the same for tok/s and ms, and noise proportional to the
// level is a constant σ. Before anything is compared:
//
//   - The host's drift is removed. The residuals of runs of different
//     commits that follow each other covary by the drift's variance τ² and
//     not at all on a steady host; when that lag-one covariance is
//     significant, each run is corrected by the mean residual of the runs of
//     other commits around it, shrunk by τ²/(τ²+σ²/k) for k of them
//     (empirical Bayes). A steady host is left untouched.
//   - Once drift is found, the posterior and the comparisons of two
//     commits model it instead of trusting the corrected values: the
//     host's state is a latent AR(1) process over the runs' places in
//     time, shared by every run, so that a run's log value is its
//     commit's level (its segment's, in the change-point model) plus the
//     state plus noise. The correction above cannot correct a probe run
//     once (its residual is zero by construction), and a bisection is
//     mostly such probes; under the model each probe is tied to the level
//     of its segment and every run tells the state at its neighbours, so
//     runs taken side by side cancel the state. The likelihoods are
//     generalized least squares (the Kalman filter whitens the runs), the
//     posterior is averaged over a grid of the drift's size and
//     correlation and a steady host, each weighted by its likelihood, and
//     the comparisons take the grid's most likely model. The model is
//     weighed against a steady host at every screening from the first
//     time drift is found, and given up when it loses.
//   - Outliers are screened out against a robust σ: the median absolute
//     difference between successive runs of a commit, pooled over the
//     commits (stats.Scale). Deviations from a commit's own median would
//     understate σ by a third when commits hold two or three runs, as most
//     do; successive differences do not. Screening waits for twenty such
//     differences. An outlier is the odd run out: a commit the screen
//     would leave fewer than half of its runs keeps them all (on a host
//     that jumps between two speeds every few runs, a commit's runs fall
//     into two clusters, and the median of two even ones lies between
//     them, beyond the cut from every run).
//
// Runs of different machines are made comparable first (see Several
// hosts). The clean values are compared by Bayesian model comparison with flat
// priors on the segment means and the Jeffreys prior on one common σ, which
// gives closed-form Student-t marginal likelihoods (stats.Classify is the
// two-group case, which the set search uses).
//
// # Several hosts
//
// Machines of one kind differ in speed (a GPU that clocks lower, a node
// with a slower link), often by as much as the change searched for, so
// runs of two machines are not exchangeable. Every run names its machine
// (Run.Host, and Run.Node where a host runs on several), and
// the search handles the difference in two parts that need each other,
// as Pinpoint runs both arms of an attempt on one bot and Conbench
// compares only runs of the same hardware:
//
//   - Host is a factor of the model. A run's log value is its commit's
//     level plus its machine's offset plus noise. The offsets are fitted
//     by alternating least squares, every measured commit with a level of
//     its own, so only commits measured on more than one machine inform
//     them (within a commit the level cancels); they are taken out before
//     drift removal, screening and comparison. A machine linked to the
//     good end's machine by no such commit has no offset, and its runs
//     count in no comparison. With one machine nothing changes.
//   - The ends are measured on every host. With Options.Hosts and an
//     oracle that is a HostOracle, the search places every run: the end
//     comparison takes rounds of one run per host, the two ends
//     alternating over the hosts and from round to round; a host that
//     holds no run of an end that counts (the ends' runs were cached from
//     another host) measures both before any probe; and the K probes of a
//     round rotate over the hosts, so that a commit probed again runs
//     elsewhere. Every host that measures a probe thus holds runs of both
//     ends, its offset rests on them, and a probe is compared with the
//     ends on the same footing.
//
// Without the offsets a host whose runs are mostly probes while the ends'
// runs come from another (a night's cache) shifts every probe towards one
// end; without the placement the offsets would have nothing to rest on
// (the pool sends a commit back to the host where it is built). Confirm
// pairs only runs of one machine and takes its fresh pairs on the first
// host; Locate counts a search's runs as they are (ConfirmOptions.Recent)
// only on one host. Result.Rounds is the wall time in rounds: the runs of
// a round, made at once, count once.
//
// # Bisect
//
//  1. Verify the ends. The good and bad ends are measured in turn (A B A B
//     …), InitialRuns each, counting what the oracle holds side by side,
//     and then one more run each at a time (with several placed hosts, a
//     round of one run on each host) until the change shows in the searched
//     direction by at least MinEffect and is shown beyond half of it, the
//     midpoint between no change and the least change worth finding
//     (error 5%, as the search keeps checking; on a host whose noise
//     exceeds 1.4×MinEffect the strict error 1% instead, beyond zero), or
//     is shown smaller than MinEffect with the evidence a culprit needs
//     (1−Confidence) and at least six runs per end; the latter is
//     record.OutcomeNotReproduced and nothing is bisected. Ends that do
//     differ the other way add a record.WarnOtherDirection with their
//     effect (stats.Delta of their runs paired in time) and its interval.
//  2. Keep a posterior over the first bad commit. A split of the measured
//     commits into a left and a right segment has the marginal likelihood
//     (nL·nR)^(−1/2)·(SS_L+SS_R)^(−(n−2)/2); with prefix sums the whole
//     posterior costs O(measured commits). All positions between two
//     measured commits share one likelihood, so only a commit measured next
//     to a measured parent can become a culprit.
//  3. Probe where the posterior splits 50/50 (with K hosts, at the
//     quantiles j/(K+1), measured concurrently), one run at a time; a
//     measured commit is preferred when its split is within 0.1 of the best
//     one (another run costs no build). Reference balancing: a probe gets at
//     most twice the runs of the weaker of the two levels' references (the
//     commits whose side is 95% certain), else that side's end is measured.
//     Whenever the ends stop showing the change, they are measured, in
//     turn, until they show it again or show there is none. Once a single
//     commit holds half the posterior, its parent and it are measured in
//     turn (A B B A A B …, the side a run short first): the runs the
//     posterior needs to settle, taken side by side so that they are also
//     the pairs Confirm rests on, until each has the four runs Confirm
//     needs at least (one more run of a side now is cheaper than the
//     fresh pair Confirm would add), or two each when their change stands
//     out of the noise the search has measured (see A change that stands
//     out of the noise), which Confirm accepts too. On a drifting host a
//     reference run goes between runs of one commit.
//  4. At 0.95, once the noise within commits has eight degrees of freedom
//     (a few agreeing runs must not make a noisy host look quiet), or four
//     when the change stands out of that noise as above, a
//     culprit is taken up and the two ranges beside it are checked
//     (good…parent, culprit…bad) with the same sequential comparison. A
//     check may add 15% of the runs the search has made (all of them while
//     its estimate itself shows a further change of MinEffect), and stops
//     as soon as a further change of MinEffect is improbable (10%), shown,
//     or can no longer be decided within that budget; when such a change
//     is then still plausible (30% or more), a second change there was not
//     excluded (record.WarnSecondChange, with its probability). The culprit
//     stands once it holds Confidence; a range whose ends differ is searched
//     the same way (a second culprit), each culprit with its own direction
//     when Direction is Any.
//  5. After every round the ends of the range are compared again; a range
//     whose change vanishes is dropped.
//  6. After every round, on a steady host whose noise is no larger than
//     the minimum effect gives room for, the runs are also weighed under
//     two changes in the searched direction against one (see Two changes
//     in one range).
//
// A commit whose build fails (record.ErrBroken) is skipped and listed in
// Result.Skipped. A commit whose runs fail on the infrastructure (the
// oracle returns a *record.InfraError) is tried again when the search asks
// for it; once more than two in three of its tries have failed, after
// three tries at least, it is skipped as syzbot skips such a revision, not
// judged: its runs leave the comparisons, and it is listed in
// Result.SkippedInfra (and Skipped) with record.WarnSkippedInfra. An end
// that fails so ends the search. A change between a measured commit and
// the next one after a block of skipped commits is reported as
// record.OutcomeCandidates. An error wrapping ErrHostGone (the host left
// the pool) counts against no commit: the host leaves the search's
// placement, and with no host left the search ends. Any other oracle
// error is a *record.InfraError and ends the search. When
// MaxRuns is spent first, the verdict is record.OutcomeInconclusive (or the
// culprits found so far, with a warning).
//
// The posterior rests on the two ends of its range. An end without a run
// to compare (none a positive, finite value taken beside a run of another
// commit and kept by the screen) has none: the ends are measured until it
// has one, and a budget spent first ends the range with
// record.WarnNoValues, which names the end.
//
// # A change that stands out of the noise
//
// A change many times the noise needs fewer runs than a distribution-free
// interval asks for, and one rule (shownByNoise) says when a change is
// such a one, for the search, which then takes a culprit up and stops
// pairing runs early, and for Confirm, which then confirms it. The noise
// is the pooled σ of the clean runs within commits, with its degrees of
// freedom, and it stands for the noise of a comparison only on one steady
// host (Result.Noise; zero on a drifting host or with several machines,
// which no change then stands out of). The rule compares the clean runs of
// the parent and the culprit, those the screen kept: a single stalled run
// then neither makes a change nor hides one, as it would in a mean of two
// or three runs. It needs two runs of each and four degrees of freedom of
// the noise, and asks that the 99.9% interval of the difference of their
// mean logs (Student's t on that noise, stats.DeltaNoiseLogs) exclude zero:
// on either side in the search, on the culprit's side in Confirm. The
// strict level stands in for a drift the search did not find, which the
// noise within commits does not show. Result.Noise records the screen's
// scale with the noise, and Confirm screens its runs at that scale as the
// search did (a zero scale, too few successive runs to estimate one,
// screens nothing), so that on the same runs the two decide alike.
//
// # Two changes in one range
//
// The commits between two changes in one direction sit at a level
// between the ends' levels. The single-change model takes them for one of
// the two levels, and places its culprit where the runs make the other
// change look smallest: the runs of the culprit and of its parent, which
// are what the residual checks compare, understate a second change beside
// them. So the search also weighs the runs of the range under two change
// points against one: the outer levels with flat priors, the middle level
// uniform between them (less the part within half the minimum effect of
// either, no change worth finding), and the change points uniform over
// the pairs of positions; the Bayes factor pools every commit at the
// middle level. Once it clearly favours two changes, and a measured
// commit lies almost surely between them, the range is split at
// that commit into two ranges, each searched the same way with that
// commit as an end (and not bounded as a residual range is). While two
// changes are merely plausible, a culprit the single-change search would
// take up waits for runs where the two accounts disagree: the commit most
// surely at the middle level, or the range's end beyond the other change,
// whichever rests on fewer runs, within a share of the runs the search of
// the range has made otherwise. On a drifting host, or a noisy one (as in
// step 1), only the residual checks look for a second change: the
// two accounts take many runs to tell apart there, and a chance middle
// level would cost a search of its own.
//
// # How it chooses and stops
//
// Each run goes where it is expected to tell the most: the posterior's
// median, where one run's outcome is least predictable (a commit already
// built is preferred when it splits nearly as well), or an end when the
// level it pins down rests on too few runs. The search stops at one of
// three points: the ends are shown to differ by less than MinEffect (not
// reproduced); one commit holds Confidence with enough runs of it and its
// parent for the noise to be measured and the confirmation to pair; or
// the budget is spent. On a drifting host the posterior rests on the
// drift model (see Comparing on log values), so that a probe measured once
// is judged at the host's state of its moment rather than at the state the
// ends were measured in. A search starts only once its ends differ beyond
// the midpoint between no change and MinEffect: ends that differ by
// chance by about MinEffect would start a search for a change nobody
// asked for, which stops only when the ends are measured enough to be
// called the same, the dearest way to that verdict.
//
// What the search spends beyond a search told both levels and σ (the
// floor cmd/bench-bisect measures) goes mostly to the ends' verification
// and to the runs of the culprit and its parent that the confirmation
// rests on; given the size of the change and σ, the search itself still
// spends nearly as much. Learning the levels and the noise from its own
// runs costs a few runs more.
//
// # Scan
//
// Bisect compares the two ends first, so a regression followed by an
// improvement of similar size inside its range is invisible to it. Scan
// surveys the chain every N commits and bisects each pair of adjacent
// survey points; only changes that cancel within one step stay hidden.
// Each stretch's runs of its first point were taken with the previous
// stretch, so they count only beside fresh runs of the stretch's other end.
//
// # Confirm and Locate
//
// Confirm decides whether a culprit's change shows in runs of it and of its
// parent taken side by side: it pairs runs of the two taken within a few
// runs of each other, as many pairs as there can be (or, after a search
// that found the host steady, takes all the runs that search made of
// them), adds fresh pairs one at a time, alternating which commit goes
// first, and stops as soon as the 95%
// interval of the effect (stats.Delta, at least four runs a side) excludes
// zero on the culprit's side, or as soon as more pairs within its budget
// could not make it. With fewer than four a side, the noise the search
// measured on one steady host (Result.Noise) stands in for the
// distribution-free interval: runs of the two screened at the search's
// scale confirm a change that stands out of that noise by the search's
// own rule (see A change that stands out of the noise), and the
// confirmation shows the change's 95% interval on the runs kept. The effect
// it measures is the culprit's effect in the result: one estimate of one
// number. Locate runs the search, confirms every culprit, and searches the
// range again, with the confirmation's runs in the oracle, when one is not
// confirmed (three searches at most).
//
// # Cost and accuracy
//
// cmd/bench-bisect simulates the search and the whole job (Locate with the
// command line's defaults) beside plain bisection, a Pinpoint-like
// explorer and a floor (a search told both levels and σ), on lognormal
// noise, drift, outliers and several hosts; make bench-bisect prints its
// table, and docs/figures.md keeps the last one.
//
// # Caveats
//
//   - The search's model has one change point per range; two changes in
//     one range are found by the two-change weighing above, or by the
//     residual checks, both cheap on purpose: neither spends runs to
//     exclude a second change that the runs in hand give no sign of, so
//     of two small drops the second is still missed now and then, and
//     the result then says, when the residual check found it plausible,
//     that a second change was not excluded.
//     A regression masked by a later improvement leaves the ends equal and
//     only Scan can find it.
//   - The confidence is a posterior under the model (Gaussian log values,
//     one σ for the chain). In simulation it is calibrated or a little
//     conservative; noise that differs between commits is not modelled.
//   - The host offsets are estimates: their uncertainty is not in the
//     posterior, which treats the corrected values as exact. The ends'
//     runs on every host keep it small. A cluster's nodes are named by
//     the runs but cannot be placed: a node that ran only probes has no
//     offset, and its runs count in nothing until an end runs there.
//     Drift is removed across hosts as if they drifted together.
//   - The drift model is one AR(1) process for the whole search, its
//     parameters on a grid: a host whose drift has two time scales is
//     followed at the scale that explains its runs best.
//   - Drift removal follows a wandering host, not a step: a host that
//     changed speed once between two blocks of runs is handled by counting
//     only runs taken side by side. A host that jumps between two speeds
//     every few runs is handled by neither: the search ends within its
//     budget, but often inconclusive or with a wrong culprit (see
//     TestBisectHostLevels).
package bisect
