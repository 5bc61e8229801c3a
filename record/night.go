package record

import (
	"slices"
	"time"
)

// Night is one cycle of the scheduled service: the branch tip it measured,
// the reference commit measured beside it, interleaved, and what each
// metric gave. Detection reads a metric's nights as its series.
type Night struct {
	// Seq numbers the nights from 1 in the order they ran.
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// Branch and Tip are the branch followed and its first-parent tip
	// that night.
	Branch string `json:"branch"`
	Tip    string `json:"tip"`
	// Reference is the accepted baseline measured beside the tip; empty
	// on the first night, whose tip becomes the reference.
	Reference string `json:"reference,omitempty"`
	// New lists the first-parent commits since the previous night's tip,
	// oldest first (the tip last). Rewritten says the previous tip is no
	// longer on the branch (a force-push or a rebase): New then starts
	// after the fork point.
	New       []string `json:"new,omitempty"`
	Rewritten bool     `json:"rewritten,omitempty"`
	// Status is ok when the tip was measured; build_failed or
	// bench_failed when the tip could not be, with Error saying why.
	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
	// Metrics holds each metric's values of the night.
	Metrics map[string]NightMetric `json:"metrics,omitempty"`
	// Sampled are the new commits before the tip measured beside it
	// (detect.sample), oldest first: detection reads them as points of
	// the series before the tip's.
	Sampled []NightCommit `json:"sampled,omitempty"`
}

// NightCommit is a commit other than the tip measured in a night, in the
// same rounds as the tip and the reference, its values scaled the same
// way.
type NightCommit struct {
	Commit string `json:"commit"`
	// Status is ok when the commit was measured; build_failed or
	// bench_failed when it could not be, with Error saying why.
	Status  Status                 `json:"status"`
	Error   string                 `json:"error,omitempty"`
	Metrics map[string]NightMetric `json:"metrics,omitempty"`
}

// NightMetric is one metric in one night. The tip's raw values are
// scaled by how the reference ran beside them tonight against its
// accepted level, so that a host that runs 30% slower tonight than last
// night does not look like a regression. Run i of the tip was taken right
// after run i of the reference:
//
//	Values[i] = Level × Tip[i] / Ref[i]
type NightMetric struct {
	Tip []float64 `json:"tip"`
	Ref []float64 `json:"ref,omitempty"`
	// Level is the reference's accepted level: the value detection knows
	// it at.
	Level float64 `json:"level"`
	// RefWeight is the weight with which each tip run was scaled by the
	// reference run beside it: Values[i] = Tip[i]·(Level/Ref[i])^RefWeight.
	// 1 scales fully (a metric that follows the host's speed), 0 not at
	// all (a ratio within one run, which does not). Nights recorded
	// before it was chosen per metric carry 0 here and were scaled fully.
	RefWeight float64   `json:"ref_weight,omitempty"`
	Values    []float64 `json:"values"`
	// Estimate is the night's value when the detection estimator is not
	// the median (detect.estimator: best): Level × best(Tip) / best(Ref).
	Estimate float64 `json:"estimate,omitempty"`
}

// NightlyState is what one night hands the next: the reference commit and
// its level per metric, and the alerts the nights decided on.
type NightlyState struct {
	Reference string             `json:"reference,omitempty"`
	Levels    map[string]float64 `json:"levels,omitempty"`
	// Alerts are the alerts the nights decided on (act, noted or
	// transient), by key (AlertKey): an alert seen again on a later night
	// is not acted on again, and its job writes what it found of it
	// (Outcome) here.
	Alerts map[string]Alert `json:"alerts,omitempty"`
	// Noted maps the fingerprint of a filed finding to the night it was
	// last commented on for being seen again, so it is commented on at
	// most once.
	Noted map[string]uint64 `json:"noted,omitempty"`
	// Continues maps the id a stretch of nights on which speculation was
	// slower would have had to the earlier finding it continues: one whose
	// issue was still open when the stretch began, so the stretch filed
	// nothing of its own.
	Continues map[string]string `json:"continues,omitempty"`

	// Handled (an alert's key to its job) and Transient (the key of an
	// alert whose later nights went back to the old level, to the night
	// that showed it) are what a state written before Alerts holds
	// instead; the store reads them into Alerts and never writes them.
	Handled   map[string]string `json:"handled,omitempty"`
	Transient map[string]uint64 `json:"transient,omitempty"`
}

// Alert is an alert a nightly cycle decided on, as the nights saw it, and
// what became of it.
type Alert struct {
	Metric    string    `json:"metric"`
	Direction Direction `json:"direction"`
	// Good and Bad bracket the change: the points of the nights before it
	// and at it.
	Good     string  `json:"good"`
	Bad      string  `json:"bad"`
	DeltaPct float64 `json:"delta_pct"`
	// Night is the night of the change's first point; Decided is the night
	// that decided it.
	Night    uint64   `json:"night"`
	Decided  uint64   `json:"decided"`
	Decision Decision `json:"decision"`
	// Job is the job enqueued for it; Note says what was done instead, or
	// besides ("same change as …").
	Job  string `json:"job,omitempty"`
	Note string `json:"note,omitempty"`
	// Outcome is what its job found, written when the job ends.
	Outcome AlertOutcome `json:"outcome,omitempty"`
	// Unbisected, on a change only noted, is the range its job would have
	// bisected: every commit the change may lie on.
	Unbisected *Range `json:"unbisected,omitempty"`
}

// Range is a first-parent range of commits, good excluded.
type Range struct {
	Good string `json:"good"`
	Bad  string `json:"bad"`
}

// Key is the alert's key (AlertKey).
func (a Alert) Key() string { return AlertKey(a.Metric, a.Direction, a.Good, a.Bad) }

// Decision is what the nights decided about an alert (detect.Watch).
type Decision string

const (
	// DecisionAct: the nights bear the change out; a job bisects it, or a
	// note says why none is needed.
	DecisionAct Decision = "act"
	// DecisionNoted: an improvement, noted with the range that holds it
	// and not bisected (detect.improvements: note).
	DecisionNoted Decision = "noted"
	// DecisionWait: too few nights after its first yet
	// (detect.confirm_nights); a later night decides.
	DecisionWait Decision = "wait"
	// DecisionTransient: the nights after it are back at the old level;
	// its first point leaves the series.
	DecisionTransient Decision = "transient"
	// DecisionRefuted: its job measured the ends again and did not see the
	// change; its first point leaves the series.
	DecisionRefuted Decision = "refuted"
)

// AlertOutcome is what an alert's job found of the change.
type AlertOutcome string

const (
	// AlertConfirmed: the bisection's ends differ.
	AlertConfirmed AlertOutcome = "confirmed"
	// AlertRefuted: the ends did not differ (not_reproduced) or could not
	// be told apart (inconclusive).
	AlertRefuted AlertOutcome = "refuted"
)

// AlertKey names an alert across nights: the metric, the direction and
// the range of commits that brackets the change.
func AlertKey(metric string, d Direction, good, bad string) string {
	return metric + "|" + string(d) + "|" + good + ".." + bad
}

// FirstNightWith is the index of the first measured night whose tip
// holds the commit (the tip is it, or it is among the night's new
// commits); -1 if none.
func FirstNightWith(nights []Night, commit string) int {
	for i, n := range nights {
		if n.Status == StatusOK && (n.Tip == commit || slices.Contains(n.New, commit)) {
			return i
		}
	}
	return -1
}
