package report

import (
	"fmt"

	"github.com/perfbot/perfbot/record"
)

// specRow is one commit's line of the speculative-decoding table.
type specRow struct {
	Label  string
	Commit record.Commit
	B      record.SpecBreakdown
}

// SpecRows are the breakdowns to show: the good and the bad end, or, for
// a night on which speculation is slower, the tip (and the first tip of
// the nights that were, when there are several).
func (v *view) SpecRows() []specRow {
	s := v.Speculative
	if s == nil {
		return nil
	}
	if v.Outcome == record.OutcomeSpeculationSlower {
		if len(v.Candidates) <= 1 {
			return []specRow{{"tip", v.Bad.Commit, s.Bad}}
		}
		return []specRow{{"first night", v.Good.Commit, s.Good}, {"tonight", v.Bad.Commit, s.Bad}}
	}
	return []specRow{{v.GoodName(), v.Good.Commit, s.Good}, {v.BadName(), v.Bad.Commit, s.Bad}}
}

// OfTokens is " of N" when the configuration says how many tokens a cycle
// can keep.
func (v *view) OfTokens() string {
	if v.Speculative == nil || v.Speculative.Tokens <= 0 {
		return ""
	}
	return fmt.Sprintf(" of %d", v.Speculative.Tokens)
}

// SpecLead names the term that explains most of the change.
func (v *view) SpecLead() string {
	if v.Speculative == nil {
		return ""
	}
	return specTermLabel(v.Speculative.Lead().Name)
}

// specTermLabel is how the evidence names a term.
func specTermLabel(name string) string {
	switch name {
	case record.SpecTermVerify:
		return "verify time"
	case record.SpecTermDraft:
		return "draft time"
	case record.SpecTermAccept:
		return "acceptance"
	}
	return name
}

// specTermUnit is the unit of a term's values: tokens for acceptance,
// the breakdown's time unit for the others.
func specTermUnit(name, timeUnit string) string {
	if name == record.SpecTermAccept {
		return "tokens"
	}
	return timeUnit
}

// formatEstimate prints a median and its interval.
func formatEstimate(e record.SpecEstimate) string {
	return formatNum(e.Median) + " [" + formatNum(e.Lo) + ", " + formatNum(e.Hi) + "]"
}
