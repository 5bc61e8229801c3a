package service

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/record"
)

func stepAt(at int, drop float64) func(int) float64 {
	return func(i int) float64 {
		if i >= at {
			return 100 * (1 - drop)
		}
		return 100
	}
}

// TestRunJobTable starts the jobs as a queue or the HTTP API would: by
// kind, with the request in JSON.
func TestRunJobTable(t *testing.T) {
	h := newHistory(t, 9, stepAt(5, 0.1), nil)
	b := h.open(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		kind    record.JobKind
		req     string
		wantErr string
	}{
		{name: "unknown kind", kind: "nightly-typo", req: `{}`, wantErr: `unknown kind of job "nightly-typo"`},
		{name: "request that is not JSON", kind: record.JobBisect, req: `{"Good":`, wantErr: "request:"},
		{name: "unknown field", kind: record.JobBisect, req: `{"Good":"a","Bda":"b"}`, wantErr: `unknown field "Bda"`},
		{name: "measure without revisions", kind: record.JobMeasure, req: `{"Repeats":1}`, wantErr: "at least one revision"},
		{name: "bisect", kind: record.JobBisect, req: `{"Good":"` + h.commits[0] + `","Bad":"main"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := b.Run(ctx, tc.kind, json.RawMessage(tc.req))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				var ie *record.InputError
				require.ErrorAs(t, err, &ie, "a bad request is the caller's mistake")
				return
			}
			require.NoError(t, err)
			rep := got.(*Bisection)
			require.Equal(t, record.OutcomeCulprit, rep.Verdict)
			require.Equal(t, h.commits[5], rep.Culprits[0].Commit)
		})
	}
	assert.Equal(t, []record.JobKind{record.JobAlert, record.JobBisect, record.JobEnvBisect, record.JobFile, record.JobHunks, record.JobMeasure, record.JobNightly, record.JobRevert}, Kinds())
}

// TestJobRecordAndTrace checks what a job leaves in the store: its record,
// done with its report, and its trace with the Bot's clock.
func TestJobRecordAndTrace(t *testing.T) {
	h := newHistory(t, 9, stepAt(5, 0.1), nil)
	t0 := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	b, err := Open(context.Background(), h.cfg, Options{Host: h.host, Clock: func() time.Time { return t0 }})
	require.NoError(t, err)
	defer b.Close()

	rep, err := b.Bisect(context.Background(), BisectRequest{Good: h.commits[0], Bad: "main"})
	require.NoError(t, err)
	j, err := readViews(b).Job(context.Background(), rep.JobID)
	require.NoError(t, err)
	assert.Equal(t, record.JobBisect, j.Kind)
	assert.Equal(t, record.JobDone, j.Status)
	assert.True(t, j.Created.Equal(t0) && j.Updated.Equal(t0), "the job's times come from the Bot's clock")
	var stored Bisection
	require.NoError(t, json.Unmarshal(j.Result, &stored))
	assert.Equal(t, rep.Culprits, stored.Culprits, "the job keeps its report")

	var state bisectState
	require.NoError(t, json.Unmarshal(j.State, &state))
	assert.Contains(t, state.Confirmations, h.commits[5], "the confirmation it wrote is what resume reads")

	require.NotEmpty(t, j.Trace)
	assert.True(t, strings.HasPrefix(j.Trace[0].Text, "bisect "), j.Trace[0].Text)
	probes := 0
	for _, l := range j.Trace {
		assert.True(t, l.Time.Equal(t0))
		if strings.Contains(l.Text, "median=") {
			probes++
		}
	}
	assert.Positive(t, probes, "the probe log is in the trace")

	_, err = readViews(b).Job(context.Background(), "bisect-nope")
	var ie *record.InputError
	require.ErrorAs(t, err, &ie)
}

// TestBisectResumesWithItsConfirmations kills nothing but leaves a job
// running with a confirmation in its state, as a killed process would: the
// same request reads it back and does not confirm that culprit again.
func TestBisectResumesWithItsConfirmations(t *testing.T) {
	h := newHistory(t, 9, stepAt(5, 0.1), nil)
	b := h.open(t)
	ctx := context.Background()
	rep, err := b.Bisect(ctx, BisectRequest{Good: h.commits[0], Bad: "main"})
	require.NoError(t, err)
	j, ok, err := b.Store.Job(rep.JobID)
	require.NoError(t, err)
	require.True(t, ok)

	// Back to running, as if killed after the confirmation was saved: the
	// stored confirmation says something the fresh runs never would.
	j.Status, j.Result = record.JobRunning, nil
	c := bisect.Confirmation{Commit: h.commits[5], Confirmed: true}
	raw, err := json.Marshal(bisectState{Confirmations: map[string]bisect.Confirmation{h.commits[5]: c}})
	require.NoError(t, err)
	j.State = raw
	require.NoError(t, b.Store.PutJob(j))

	again, err := b.Bisect(ctx, BisectRequest{Good: h.commits[0], Bad: "main"})
	require.NoError(t, err)
	require.Len(t, again.Culprits, 1)
	require.NotNil(t, again.Culprits[0].Confirmation)
	assert.Equal(t, c, *again.Culprits[0].Confirmation, "the confirmation is the one read back, not taken again")
}
