package bisect_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/record"
)

func TestScan(t *testing.T) {
	tests := []struct {
		name    string
		h       bisecttest.History
		want    []int // culprit indexes
		verdict record.Outcome
	}{
		{
			name: "regression masked by a later improvement",
			h: bisecttest.History{Len: 126, CV: 0.01, Changes: []bisecttest.Change{
				{At: 27, Factor: 0.85}, {At: 60, Factor: 0.91}, {At: 85, Factor: 0.955}, {At: 100, Factor: 1.11},
			}, Broken: []bisecttest.Range{{From: 40, To: 40}}},
			want:    []int{27, 60, 85, 100},
			verdict: record.OutcomeCulprit,
		},
		{
			name:    "no change",
			h:       bisecttest.History{Len: 60, CV: 0.01},
			verdict: record.OutcomeNotReproduced,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.h.Oracle(1)
			res, err := bisect.Scan(context.Background(), tt.h.Chain(), o, bisect.Options{Direction: record.Any}, 8)
			require.NoError(t, err)
			require.Equal(t, tt.verdict, res.Verdict)
			var got []int
			for _, c := range res.Culprits {
				got = append(got, c.Index)
				require.Equal(t, bisecttest.CommitID(c.Index), c.Commit)
				require.GreaterOrEqual(t, c.Confidence, 0.99)
			}
			require.Equal(t, tt.want, got)
			t.Logf("%d runs, %d builds", o.Runs(), o.Builds())
		})
	}
}
