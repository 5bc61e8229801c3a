package record

import (
	"fmt"
	"strings"
	"time"
)

// RevertVerdict is what undoing a culprit on a later tip showed.
type RevertVerdict string

const (
	// RevertRestores: the tip with the culprit's hunks reverted, measured
	// interleaved with the tip, recovers: the interval of the effect
	// excludes zero on the side of recovery.
	RevertRestores RevertVerdict = "restores"
	// RevertNoGain: the revert applies and builds but recovers nothing
	// that the runs can show: the tip no longer has the regression (a
	// later commit compensated for it).
	RevertNoGain RevertVerdict = "no_gain"
	// RevertNotOnTip: the culprit's hunks apply to the tip forwards; a
	// later commit already undid them, so the tip no longer has the
	// regression.
	RevertNotOnTip RevertVerdict = "not_on_tip"
	// RevertConflicts: the revert does not apply on the tip (later commits
	// depend on it); Conflicts names the files.
	RevertConflicts RevertVerdict = "conflicts"
	// RevertUnmeasurable: the tip or the reverted tip does not build or
	// benchmark.
	RevertUnmeasurable RevertVerdict = "unmeasurable"
)

// RevertOnTip is the proof by revert: a culprit's minimal hunks (or the
// whole commit, when no hunk set was found) undone on the watched
// branch's tip, built and measured interleaved with the tip by the
// pairing and stopping rules of a culprit's confirmation.
type RevertOnTip struct {
	Verdict RevertVerdict `json:"verdict"`
	// Tip is the commit the revert was made on.
	Tip Commit `json:"tip"`
	// Commit is the revert commit (its parent is Tip) when the revert
	// applied.
	Commit string `json:"commit,omitempty"`
	// Hunks are the ids of the culprit's hunks reverted; empty when the
	// whole commit was.
	Hunks []string `json:"hunks,omitempty"`
	// Effect is the reverted tip's change over the tip, with its 95%
	// interval, from Pairs pairs of runs (Fresh runs taken for it); nil
	// when nothing was measured.
	Effect *Effect `json:"effect,omitempty"`
	Pairs  int     `json:"pairs,omitempty"`
	Fresh  int     `json:"fresh,omitempty"`
	// Conflicts are the files that do not revert (RevertConflicts);
	// Undone the files of the change the tip already holds as before it.
	Conflicts []string `json:"conflicts,omitempty"`
	Undone    []string `json:"undone,omitempty"`
	// Patch is the revert as a patch against Tip.
	Patch string `json:"patch,omitempty"`
	// Reason says what could not be measured (RevertUnmeasurable).
	Reason string `json:"reason,omitempty"`
	// Measured is when the verdict was reached: the nightly measures a
	// revert again once it is report.recheck_nights old.
	Measured time.Time `json:"measured"`
	// PR is the draft pull request that proposes the revert, when one
	// was opened.
	PR *PullRequest `json:"pr,omitempty"`
}

// PullRequest is a pull request perfbot opened.
type PullRequest struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	// Branch is the branch of the push remote it was pushed to.
	Branch string `json:"branch"`
	Draft  bool   `json:"draft"`
}

// Gone reports whether the verdict says the tip no longer has the
// regression.
func (r *RevertOnTip) Gone() bool {
	return r.Verdict == RevertNotOnTip || r.Verdict == RevertNoGain
}

// Text says the verdict in one sentence, as the issue and the command
// line print it.
func (r *RevertOnTip) Text() string {
	tip := r.Tip.Short()
	switch r.Verdict {
	case RevertRestores:
		return fmt.Sprintf("Reverting on tip %s restores %s (%d interleaved pairs)", tip, r.Effect, r.Pairs)
	case RevertNoGain:
		return fmt.Sprintf("The tip %s no longer has the regression: reverting on it changes %s (%d interleaved pairs)", tip, r.Effect, r.Pairs)
	case RevertNotOnTip:
		return fmt.Sprintf("The tip %s no longer has the regression: a later commit already undid the change", tip)
	case RevertConflicts:
		return fmt.Sprintf("The revert no longer applies on tip %s (later commits depend on it: %s)", tip, strings.Join(r.Conflicts, ", "))
	case RevertUnmeasurable:
		return fmt.Sprintf("The revert on tip %s could not be measured: %s", tip, r.Reason)
	}
	return fmt.Sprintf("Revert on tip %s: %s", tip, r.Verdict)
}

// Changed says how r differs from an earlier verdict on an older tip in
// what it tells the team ("" when it tells the same): another verdict, or
// a recovery whose interval no longer overlaps the earlier one's.
func (r *RevertOnTip) Changed(old *RevertOnTip) string {
	if old == nil {
		return ""
	}
	if old.Verdict != r.Verdict {
		switch {
		case r.Gone():
			return "fixed upstream"
		case r.Verdict == RevertConflicts:
			return "the revert no longer applies"
		}
		return fmt.Sprintf("was %s, now %s", old.Verdict, r.Verdict)
	}
	if r.Verdict == RevertRestores && r.Effect != nil && old.Effect != nil {
		switch {
		case r.Effect.Hi < old.Effect.Lo:
			return "the recovery is smaller"
		case r.Effect.Lo > old.Effect.Hi:
			return "the recovery is larger"
		}
	}
	return ""
}
