package service

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// An intended 8% slow-down at commit 13 is found and filed; what a person
// decides about it then either moves the baseline (acknowledged: later
// nights are measured beside the culprit, at the new level, and raise
// nothing) or leaves it (invalid).
func TestTriage(t *testing.T) {
	level := func(i int) float64 {
		if i >= 13 {
			return 920
		}
		return 1000
	}
	for _, tt := range []struct {
		name      string
		state     record.Triage
		moves     bool
		wantLevel float64
	}{
		{name: "acknowledged moves the baseline", state: record.TriageAcknowledged, moves: true, wantLevel: 920},
		{name: "invalid leaves it", state: record.TriageInvalid, wantLevel: 1000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newNights(t, 37, level, nil)
			b := h.open()
			ctx := context.Background()
			tips := []int{0, 0, 0, 0, 0}
			for i := 4; i <= 24; i += 4 {
				tips = append(tips, i)
			}
			for n, i := range tips {
				h.night(b, i, speeds[n%len(speeds)])
			}
			fs, err := readViews(b).ListFindings(ctx)
			require.NoError(t, err)
			require.Len(t, fs, 1)
			require.Equal(t, h.commits[13], fs[0].Culprits[0].Commit.Hash)
			require.Equal(t, record.TriageUntriaged, fs[0].TriageState())
			before, err := b.Store.NightlyState()
			require.NoError(t, err)

			f, err := b.Triage(ctx, fs[0].ID[:6], TriageRequest{State: tt.state, Note: "the new kernel trades speed for accuracy"})
			require.NoError(t, err)
			require.Equal(t, tt.state, f.TriageState())
			stored, err := readViews(b).Finding(ctx, f.ID)
			require.NoError(t, err)
			require.Equal(t, "the new kernel trades speed for accuracy", stored.Triage.Note)

			after, err := b.Store.NightlyState()
			require.NoError(t, err)
			if tt.moves {
				require.Equal(t, h.commits[13], after.Reference, "the culprit is the new reference")
				require.Contains(t, f.Triage.Baseline, "baseline moved")
			} else {
				require.Equal(t, before, after)
				require.Empty(t, f.Triage.Baseline)
			}
			require.InEpsilon(t, tt.wantLevel, after.Levels["verify_tok_s"], 0.02)

			// Later nights at the new level raise nothing new.
			for n, i := range []int{28, 32, 36, 36, 36} {
				rep := h.night(b, i, speeds[(n+3)%len(speeds)])
				require.Equal(t, after.Reference, rep.Night.Reference)
				for _, a := range rep.Alerts {
					require.Equal(t, "acted on before", a.Note, "night at %s: %+v", h.commits[i][:7], a)
				}
				got := rep.Night.Metrics["verify_tok_s"]
				require.InEpsilon(t, 920, medianOr(got.Values), 0.03, "measured at the new level")
			}
			fs, err = readViews(b).ListFindings(ctx)
			require.NoError(t, err)
			require.Len(t, fs, 1, "no new finding")
			require.Equal(t, tt.state, fs[0].TriageState(), "a re-filed finding keeps its triage")
		})
	}
}

func TestTriageRejects(t *testing.T) {
	r := openRecords(t, false)
	ctx := context.Background()
	_, err := r.bot.Triage(ctx, "perfbotfp", TriageRequest{State: "wontfix"})
	var ie *record.InputError
	require.ErrorAs(t, err, &ie)
	require.Contains(t, err.Error(), `state "wontfix"`)
	_, err = r.bot.Triage(ctx, "perfbotfp00", TriageRequest{State: record.TriageFixed})
	require.ErrorAs(t, err, &ie)
	require.Contains(t, err.Error(), "no finding")
}
