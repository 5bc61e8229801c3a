// Package detect finds changes in a metric's nightly series: a series of
// Points in, Alerts out. It is pure: it measures nothing, reads no store
// and keeps no clock of its own; the nights carry their times. An alert is
// not an issue: the caller re-verifies both ends of every alert before it
// bisects, so a false alarm costs runs, never an issue.
//
// # How the service calls it
//
// The nightly service keeps a metric's nights as record.Nights: each
// night's tip, and the new commits it sampled, measured interleaved with
// a reference commit, each run scaled by the reference run beside it
// (Pair; Alone for a night without a reference). Watch reads the metric's
// series from the nights (Series) and decides what each alert asks of the
// service: act on it (bisect it), note it (an improvement, when
// improvements are noted), wait for the nights that confirm it, or reject
// it (transient: the nights after it are back at the old level; refuted:
// the job that bisected it did not see the change): the level stays, the
// CUSUMs start again, and the change's first point leaves the series. The service stores what it decided and what the jobs found
// (record.Alert), and hands them to the next night's Watch.
//
// Detect is causal: the alert that fires on point k is decided with
// points 0…k only, so the alerts of series[:k+1] are exactly the alerts of
// the whole series whose Night is at most k. Each night Watch detects over
// the whole series (a night without a successful measurement is a point
// with empty Values: detection skips it and Missing counts it); an old
// change is not raised again, since its alert keeps the point it fired on
// and the service has decided it. Detector is the same computation one
// point at a time, for a caller (the benchmark) that keeps the state.
//
// Pass the whole series: the state of detection at point k depends on
// every change since the start, so a series cut at a different first
// night may fire at different points. A new benchmark spec needs no new
// wait: the reference is measured under it beside the tip, so the paired
// test holds from its first night.
//
// CheckMissing reports a metric with no values for the last MissingNights
// nights, with the commits between which it stopped (a benchmark that
// began to fail, a tip that no longer builds).
//
// # Method
//
// One value per night: the median of its repeats (Value). Repeats within a
// night share the host and the build and are not independent, so the
// night is the unit. Detection works on log values, so that changes are
// ratios and noise proportional to the level is a constant σ.
//
// The level μ₀ is the median of the last Window nights of the current
// level. It is frozen while a sum is above zero, so that a slow drift
// cannot teach the baseline to accept itself, except while the level is
// younger than Window nights: a young median is often half a σ off, and
// frozen, that error would start the very excursions that keep it frozen.
// A young median still leaves out the nights of an excursion that has
// lasted MinLevel nights (its sum above zero all along): such a run of
// nights is a step more often than a biased median, and followed, the
// step would become the level before its sum reached h. The sums are then
// taken again over the excursion against the median without it, as if it
// had been frozen from the excursion's first night.
// The noise σ of a night's value is the larger of two estimates over the
// last 2·Window nights of any level: the spread between successive nights
// (a trimmed root mean square of their differences, robust to a change
// and a few outlying nights) and the spread the night's own repeats give
// its median (stats.Scale of the repeats times the standard error of a
// median of that many). The second keeps a short, lucky history from
// making the noise look small; the first covers what varies from night to
// night and not within one. Each deviation's standard deviation also holds
// the error of the baseline's median.
//
// Two one-sided CUSUMs (Page 1954), one for falls and one for rises, sum
// the deviations beyond the allowance κ = Allowance (default MinEffect/2):
//
//	S_t = max(0, S_{t−1} + (±(x_t − μ₀) − κ)/σ_t),  alarm when S_t > h.
//
// h is chosen each night from κ/σ for an in-control average run length of
// ARL nights per sum (Siegmund's approximation): a noisier metric gets a
// higher h rather than more false alarms. A CUSUM tuned to small changes
// is slow for large ones, so a single night beyond Jump standard
// deviations (and MinEffect) also alarms at once, as in a combined
// Shewhart–CUSUM scheme (Lucas 1982): a 5% drop at 2% noise and 5 repeats
// alerts on its first night four times in five.
//
// An alarm places the change. With μ₀ as the old level, a uniform prior
// over the first night τ of the new level and a flat prior over the
// shift, the posterior of τ is ∝ n^(−1/2)·exp(S²/(2nσ²)), S the sum of the
// n deviations from τ on. Its mode is Change, and the smallest set of
// nights holding 95% of it spans First…Last. When the new level already
// has the five nights e-divisive needs (stats.ChangePoints, Otava's split
// and merge at MaxP, over the last 2·Window nights), e-divisive's change
// point nearest the mode, within MergeGap, places it instead; the other
// points near it are the same change, merged. The alert fires when After
// (median of the nights Change…Night) differs from Before (median of the
// level's nights before Change) by at least MinEffect; the direction
// follows from Better and the sign. The level restarts at Change.
//
// After a change the new level is tested, while it has fewer than
// MinLevel nights, with the one-night limit only, against the median of
// its nights so far and only in the direction of the change that began
// it: a real step right after another (often a false alarm the night
// before it) alerts on its own, while the night after a lone outlier,
// which comes back the other way, raises nothing. A CUSUM alarm in the
// same direction whose change falls within MergeGap nights of the last
// one is that change seen again with more nights: it is merged (it moves
// the level, raises nothing).
//
// A lasting change smaller than MinEffect becomes the level without an
// alert once it has lasted Window nights.
//
// # The first nights
//
// The noise between nights needs nights to be told, and the CUSUMs and
// the one-night limit need it: they test a night once Warmup nights with
// values come before it. Until then each night is tested paired. Its
// values are the tip's runs each scaled by the reference run beside it to
// the reference's level (Point.Level), so while no change has been placed
// since the reference came to that level, a tip like the reference has
// its values around Level: the level needs no history. Scaled fully
// (Point.Weight 1), Level's own error cancels; scaled less (a ratio
// within one run, which the host's speed does not move), Level, one
// night's median, is weighed with the median of the later nights by
// their precisions. The noise of a night's median is what the repeats
// show, pooled over the nights so far (their spread about their night's
// mean; stats.Scale once there are 60 differences between repeats, so
// that a host whose runs flip between states does not make it look
// larger than it is), pooled in turn with the differences between
// nights once there are five, each by its degrees of freedom. The run of
// the last k nights (k = 1…MinLevel) alarms when its mean lies beyond a
// Student t of 4.1 standard errors (less once the degrees of freedom make
// a p-value of 10⁻⁴ need less) and MinEffect from the level, each night
// of a longer run leaning the same way by 1.5: one night far off alarms
// at once, two or three nights less far together. After a change, or for
// points without a level, the level is the median of the current level's
// nights before the run, its error counted; a level younger than MinLevel
// nights is tested only in the direction of the change that began it.
// What varies only from night to night (a build that lands fast or slow)
// is in the differences between nights once there are a few; before,
// the service's confirm_nights and the re-measured ends of every alert
// guard against it.
//
// # Accuracy
//
// `make bench-detect` (cmd/bench-detect) runs Detector, and Watch as the
// nightly service acts on it, on seeded series of 5 repeats a night beside
// a Perfherder-style t-test and an Otava-style e-divisive: false alarms on
// quiet series, nights until a drop is alerted, and how often the change
// is placed on its night. It checks the targets at 2% noise (at most one
// false alarm per 1,000 nights, a series' first 20 nights included; a 5%
// drop alerted within 1.5 nights on average, on a series' second, fifth,
// tenth, thirtieth or sixty-first night; a 3% drop within 3.3);
// TestAccuracy and TestYoungAccuracy state them on smaller simulations.
// docs/figures.md keeps the last table.
//
// # Caveats
//
//   - Before Warmup nights with values, only the paired test alarms: a
//     change of a few σ of a night (a 3% drop at 2% noise) waits for
//     the CUSUMs, from night Warmup. A level younger than MinLevel nights
//     after a change alarms only on a further step in the same direction.
//   - A change that is reverted within MinLevel nights is alerted, its
//     reversal is not: the new level forms from both.
//   - A false alarm can hide a real change a few nights after it, most of
//     all one in the other direction, which the forming level does not
//     test; in simulation that is rare.
//   - A creep of many steps each below MinEffect is not alerted: each
//     becomes the level once it has lasted Window nights.
//   - A lone outlier night beyond Jump σ and MinEffect alerts. That is
//     the price of alerting large changes on their first night; the
//     re-verification of the ends costs a few runs.
//   - The interval Lo…Hi is a normal approximation on the nightly model
//     (σ estimated, medians of nights); the finding of a bisection
//     carries the effect of the re-measured ends (stats.Delta) instead.
//   - Good and Bad are the tips of two nights: the range to bisect holds
//     every commit that landed between them. When Change is misplaced by
//     a night the ends do not differ; WideGood…WideBad (the night before
//     First to night Last) covers the nights the posterior allows.
package detect
