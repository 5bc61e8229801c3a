package record

import "time"

// Triage is what a person decided about a finding, after Perfherder's
// alert states: untriaged until someone looks, then acknowledged (the
// change is real and accepted: intended, or an improvement), invalid (a
// false alarm) or fixed. It is apart from State, which says where the
// finding stands with the tracker.
type Triage string

// The triage states. The zero value reads as TriageUntriaged.
const (
	TriageUntriaged    Triage = "untriaged"
	TriageAcknowledged Triage = "acknowledged"
	TriageInvalid      Triage = "invalid"
	TriageFixed        Triage = "fixed"
)

// Triages lists the triage states in the order a person meets them.
func Triages() []Triage {
	return []Triage{TriageUntriaged, TriageAcknowledged, TriageInvalid, TriageFixed}
}

// Valid reports whether t is one of the states above.
func (t Triage) Valid() bool {
	switch t {
	case TriageUntriaged, TriageAcknowledged, TriageInvalid, TriageFixed:
		return true
	}
	return false
}

// Or is t, or TriageUntriaged when t is empty (a finding never triaged).
func (t Triage) Or() Triage {
	if t == "" {
		return TriageUntriaged
	}
	return t
}

// TriageNote is the last triage decision about a finding: who decided is
// not known, when and why is.
type TriageNote struct {
	State Triage    `json:"state"`
	Note  string    `json:"note,omitempty"`
	Time  time.Time `json:"time"`
	// Baseline says how the decision moved the nightly baseline, when it
	// did (an acknowledged change).
	Baseline string `json:"baseline,omitempty"`
}
