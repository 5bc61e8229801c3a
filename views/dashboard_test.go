package views

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

func TestPrecision(t *testing.T) {
	for _, tt := range []struct {
		name     string
		states   []record.Triage
		rate     float64
		triaged  bool
		untriage int
	}{
		{name: "nothing triaged", states: []record.Triage{"", record.TriageUntriaged}, untriage: 2},
		{name: "one false alarm in four", states: []record.Triage{record.TriageInvalid, record.TriageAcknowledged, record.TriageFixed, record.TriageFixed, ""},
			rate: 0.75, triaged: true, untriage: 1},
		{name: "all false alarms", states: []record.Triage{record.TriageInvalid, record.TriageInvalid}, rate: 0, triaged: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p Precision
			for _, s := range tt.states {
				p.add(s)
			}
			rate, ok := p.Rate()
			require.Equal(t, tt.triaged, ok)
			require.InDelta(t, tt.rate, rate, 1e-9)
			require.Equal(t, tt.untriage, p.Untriaged)
			require.Equal(t, len(tt.states), p.All)
		})
	}
}
