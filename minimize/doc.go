// Package minimize narrows a change down to the part of it that matters:
// the hunks of a culprit commit (or of a working copy's uncommitted edits)
// that cost the throughput, or the environment variables of two
// environments that do. It is the set search beside package bisect's commit
// search, and like it measures nothing itself: an Oracle measures a
// configuration (the good end with a set of elements applied), and the
// fakes live in bisect/bisecttest.
//
// # Method
//
// Isolate runs isolating delta debugging (Zeller and Hildebrandt's dd)
// hierarchically (HDD): the difference between a configuration known not to
// be bad (at first the good end, the empty set) and one known to be bad (at
// first the full set) is split into parts, whole files before the hunks
// inside them, and each part is tested from both sides, applied to the
// former and reverted from the latter. A decided test moves one side of the
// bracket; when none does, the parts get smaller. The last difference is
// tested alone and, when it needs others to regress (two hunks that only
// regress together, a hunk that does not build alone), the search continues
// for what it needs. The result is made 1-minimal, and its effect is
// measured both ways. Every configuration is closed over the dependencies
// given (applying a hunk applies what it needs), so configurations that
// cannot build are rare.
//
// # One comparator
//
// A test measures a configuration one sample at a time until
// stats.Classify, the posterior that its samples share the bad end's level
// rather than the good end's (the same Student-t model comparison the
// commit search's posterior is made of), crosses the confidence either
// way. The ends are measured first and kept at least as strong as any
// configuration. Verdicts that a costly step rests on are replicated on
// fresh samples; one that does not hold sends the search back to the ends,
// replaying what was measured.
//
// # A search that cannot succeed stops at once
//
// With Options.MinEffect set, the ends are compared with stats.Delta after
// every growth: an interval within ±MinEffect (the change, if any, is too
// small to isolate), or one that at the ends' limit would still be too
// wide to tell the measured effect (at least MinEffect) from none, ends
// the search with ErrEndsAlike, and one wholly on the better side ends it
// with ErrNotWorse, from InitialRuns samples a side on rather than at the
// ends' limit of 2×MaxRunsPerTest. The second is futility, not proof: a
// host too noisy for the change cannot decide the tests between the ends
// either. Options.OnStep
// hears of every measurement (the ends, each step of a test, each
// confirmation), so a caller can show that a long search is moving.
//
// # Undecided is not evidence
//
// A test that stays undecided on a configuration that builds says that the
// host was too noisy for it then, not that the elements it leaves out
// matter. It is repeated on fresh samples (Options.Retests), and an element
// is named only when the configuration without it was measured: one whose
// removal stays unresolved is reported in Isolation.Undecided with a typed
// warning (record.WarnUndecidedElements), never in Isolation.Minimal. A
// configuration that does not apply or build is unresolved at once and is
// never good. A configuration whose samples differ from both ends, in
// opposite directions (it carries part of the effect), is unresolved as
// soon as that shows, and is not repeated: no number of runs would make it
// behave like either end.
//
// Options.MaxRuns bounds the samples of the configurations tested (the
// ends, which grow until they differ, are not counted), a configuration
// that does not apply or build counting as one. When they are
// spent the search stops: a minimal set already confirmed bad stands (what
// reverting it does is left unmeasured); otherwise no set is named and the
// narrowest difference reached is reported unresolved. Either way a
// record.WarnSetBudgetSpent says so.
//
// The bad end with the minimal set reverted is then tested, on a budget of
// three times the samples the minimal set's own tests took (at least
// 2×InitialRuns, at most MaxRunsPerTest) and without repetition: a rest of
// the change that matters shows within it, and one that cannot be decided
// there (a hunk that shifts the code's layout between the ends) leaves
// Isolation.RevertedOutcome unresolved with record.WarnSetIncomplete
// rather than spending the whole per-test limit.
//
// # Effects
//
// Isolation.Applied and Isolation.Reverted are stats.Delta of the
// configuration's samples against the end's, the one estimate of an effect
// every perfbot report shows; a configuration whose effect is reported gets
// at least four samples.
//
// # Caveats
//
// For one culprit hunk among H the configurations the search measures
// besides the two ends grow as log2(H); cmd/bench-ddmin counts them, and
// docs/figures.md keeps its last table. A regression spread over many hunks
// that each cost a little is found only as far as each part alone is
// bad-like; two independent culprits leave the reverted configuration not
// good, which Isolation.Warnings says. Without Options.Deps, configurations
// that do not build are frequent, and each costs a build.
package minimize
