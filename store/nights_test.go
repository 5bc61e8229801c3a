package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store/storetest"
)

func TestNights(t *testing.T) {
	db := storetest.Open(t)
	s, err := db.NightlyState()
	require.NoError(t, err)
	require.Empty(t, s.Reference, "no state before the first night")

	first := &record.Night{Time: t0, Branch: "main", Tip: "aaa", Status: record.StatusOK,
		Metrics: map[string]record.NightMetric{"tok_s": {Tip: []float64{100, 101}, Level: 100.5, Values: []float64{100, 101}}}}
	require.NoError(t, db.AddNight(first, record.NightlyState{Reference: "aaa", Levels: map[string]float64{"tok_s": 100.5}}))
	second := &record.Night{Time: t0.Add(24 * time.Hour), Branch: "main", Tip: "bbb", Reference: "aaa", Status: record.StatusBuildFailed, Error: "exit 2"}
	require.NoError(t, db.AddNight(second, record.NightlyState{Reference: "aaa", Levels: map[string]float64{"tok_s": 100.5}}))
	require.Equal(t, uint64(1), first.Seq)
	require.Equal(t, uint64(2), second.Seq)

	nights, err := db.Nights()
	require.NoError(t, err)
	require.Len(t, nights, 2)
	require.Equal(t, "aaa", nights[0].Tip)
	require.Equal(t, []float64{100, 101}, nights[0].Metrics["tok_s"].Values)
	require.Equal(t, record.StatusBuildFailed, nights[1].Status)

	require.NoError(t, db.UpdateNightlyState(func(s *record.NightlyState) error {
		s.Alerts = map[string]record.Alert{
			"k": {Metric: "tok_s", Decision: record.DecisionAct, Job: "alert-1"},
			"l": {Metric: "tok_s", Decision: record.DecisionAct, Job: "alert-2"},
		}
		return nil
	}))
	s, err = db.NightlyState()
	require.NoError(t, err)
	require.Equal(t, "aaa", s.Reference)
	require.Equal(t, "alert-1", s.Alerts["k"].Job)

	// The job records what it found on its alerts, and only on its own.
	require.NoError(t, db.SetAlertOutcome("alert-1", record.AlertRefuted))
	s, err = db.NightlyState()
	require.NoError(t, err)
	require.Equal(t, record.AlertRefuted, s.Alerts["k"].Outcome)
	require.Empty(t, s.Alerts["l"].Outcome)
}

// A state written before it kept its alerts (Handled and Transient) is
// read with them as alerts, and written back without the old fields.
func TestNightlyStateOfAnOlderPerfbot(t *testing.T) {
	db := storetest.Open(t)
	old := record.NightlyState{Reference: "aaa", Handled: map[string]string{"k": "alert-1"}, Transient: map[string]uint64{"t": 4},
		Alerts: map[string]record.Alert{"n": {Metric: "tok_s", Decision: record.DecisionNoted}}}
	require.NoError(t, db.AddNight(&record.Night{Time: t0, Tip: "aaa", Status: record.StatusOK}, old))
	s, err := db.NightlyState()
	require.NoError(t, err)
	require.Equal(t, map[string]record.Alert{
		"k": {Decision: record.DecisionAct, Job: "alert-1"},
		"t": {Decision: record.DecisionTransient, Decided: 4},
		"n": {Metric: "tok_s", Decision: record.DecisionNoted},
	}, s.Alerts)
	require.Empty(t, s.Handled)
	require.Empty(t, s.Transient)
}

func TestAddNightRefusesBadNights(t *testing.T) {
	db := storetest.Open(t)
	for name, n := range map[string]*record.Night{
		"no tip":     {Status: record.StatusOK},
		"bad status": {Tip: "aaa", Status: "sleepy"},
	} {
		t.Run(name, func(t *testing.T) {
			require.Error(t, db.AddNight(n, record.NightlyState{}))
		})
	}
	nights, err := db.Nights()
	require.NoError(t, err)
	require.Empty(t, nights, "a refused night leaves nothing behind")
}
