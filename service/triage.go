package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
	"github.com/perfbot/perfbot/store"
)

// TriageRequest is a person's decision about a finding: its new state and
// why.
type TriageRequest struct {
	State record.Triage `json:"state"`
	Note  string        `json:"note,omitempty"`
}

// Triage records the decision about the finding named by its id or a
// unique prefix of it. Acknowledging a change that perfbot placed at a
// culprit (an intended regression, or an improvement) also moves the
// nightly baseline, in the same transaction: the culprit becomes the
// reference that later nights are measured beside, and each metric's
// accepted level becomes the one its nights have shown since the culprit
// landed (the median of their values), so that detection measures later
// nights against the new level and does not alert on it again. Any other
// decision, or a finding whose culprit no night has measured yet, leaves
// the baseline where it is; so does taking an acknowledgement back.
// A state that is not one of record.Triages, or a name that matches no
// finding or several, is an *record.InputError.
func (b *Bot) Triage(ctx context.Context, name string, req TriageRequest) (record.Finding, error) {
	if err := ctx.Err(); err != nil {
		return record.Finding{}, err
	}
	if !req.State.Valid() {
		return record.Finding{}, &record.InputError{Err: fmt.Errorf("state %q: want one of %v", req.State, record.Triages())}
	}
	if name == "" {
		return record.Finding{}, &record.InputError{Err: errors.New("no finding named (see perfbot findings)")}
	}
	f, ok, err := b.Store.Triage(name, func(f *record.Finding, nights []record.Night, s *record.NightlyState) error {
		note := &record.TriageNote{State: req.State, Note: req.Note, Time: b.now()}
		if req.State == record.TriageAcknowledged {
			note.Baseline = moveBaseline(f, nights, s)
		}
		f.Triage = note
		return nil
	})
	switch {
	case errors.Is(err, store.ErrAmbiguous):
		return record.Finding{}, &record.InputError{Err: err}
	case err != nil:
		return record.Finding{}, fmt.Errorf("triage %s: %w", name, err)
	case !ok:
		return record.Finding{}, &record.InputError{Err: fmt.Errorf("no finding %q (see perfbot findings)", name)}
	}
	if f.Triage.Baseline != "" {
		b.progressf("triage %s: %s; %s", record.ShortHash(f.ID), f.Triage.State, f.Triage.Baseline)
	}
	return f, nil
}

// moveBaseline makes the culprit of f the nightly reference, with each
// metric at the level of the nights since it landed, and says what moved;
// "" when nothing did.
func moveBaseline(f *record.Finding, nights []record.Night, s *record.NightlyState) string {
	if f.Outcome != record.OutcomeCulprit || len(f.Culprits) == 0 {
		return ""
	}
	culprit := f.Culprits[len(f.Culprits)-1].Commit.Hash
	first := record.FirstNightWith(nights, culprit)
	if first < 0 || s.Reference == "" {
		return ""
	}
	levels := map[string]float64{}
	var moved []string
	for _, m := range slices.Sorted(maps.Keys(s.Levels)) {
		old := s.Levels[m]
		levels[m] = old
		var vs []float64
		for _, n := range nights[first:] {
			if v, ok := nightValue(n, m); ok {
				vs = append(vs, v)
			}
		}
		if len(vs) > 0 {
			levels[m] = stats.Median(vs)
			moved = append(moved, fmt.Sprintf("%s %.4g → %.4g", m, old, levels[m]))
		}
	}
	if len(moved) == 0 {
		return ""
	}
	from := record.ShortHash(s.Reference)
	s.Reference, s.Levels = culprit, levels
	return fmt.Sprintf("baseline moved: reference %s → %s, %s (nights %d–%d)", from, record.ShortHash(culprit),
		strings.Join(moved, ", "), nights[first].Seq, nights[len(nights)-1].Seq)
}

// nightValue is the night's value of the metric as detection reads it:
// the estimate when there is one, else the median of the scaled values.
func nightValue(n record.Night, metric string) (float64, bool) {
	m, ok := n.Metrics[metric]
	switch {
	case !ok || len(m.Values) == 0:
		return 0, false
	case m.Estimate > 0:
		return m.Estimate, true
	}
	return stats.Median(m.Values), true
}
