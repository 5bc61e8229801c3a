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
// its level per metric, and the alerts already acted on.
type NightlyState struct {
	Reference string             `json:"reference,omitempty"`
	Levels    map[string]float64 `json:"levels,omitempty"`
	// Handled maps an alert's key (AlertKey) to the job enqueued for it,
	// so that the same alert seen on a later night is not acted on again.
	Handled map[string]string `json:"handled,omitempty"`
	// Noted maps the fingerprint of a filed finding to the night it was
	// last commented on for being seen again, so it is commented on at
	// most once.
	Noted map[string]uint64 `json:"noted,omitempty"`
	// Transient maps the key of an alert whose later nights went back to
	// the old level to the night that showed it: its first night stays out
	// of the series detection reads, and it gets no job.
	Transient map[string]uint64 `json:"transient,omitempty"`
}

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
