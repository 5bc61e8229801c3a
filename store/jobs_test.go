package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

func TestJobs(t *testing.T) {
	db := storetest.Open(t)
	jobs, err := db.Jobs()
	require.NoError(t, err)
	assert.Empty(t, jobs)

	older := store.Job{ID: "bisect-1", Kind: record.JobBisect, Status: record.JobDone, Created: t0, Updated: t0.Add(time.Hour)}
	newer := store.Job{
		ID: "hunks-2", Kind: record.JobHunks, Status: record.JobRunning, Created: t0.Add(time.Hour), Updated: t0.Add(time.Hour),
		Params: json.RawMessage(`{"rev":"abc"}`), State: json.RawMessage(`{"tested":[]}`),
	}
	require.NoError(t, db.PutJob(older))
	require.NoError(t, db.PutJob(newer))
	// The job is persisted again after its next probe.
	newer.State, newer.Updated = json.RawMessage(`{"tested":["h1"]}`), t0.Add(2*time.Hour)
	require.NoError(t, db.PutJob(newer))

	got, ok, err := db.Job("hunks-2")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, newer.Updated, got.Updated)
	assert.JSONEq(t, `{"tested":["h1"]}`, string(got.State))
	assert.JSONEq(t, `{"rev":"abc"}`, string(got.Params))

	_, ok, err = db.Job("hunks")
	require.NoError(t, err)
	assert.False(t, ok, "job ids are not looked up by prefix")

	jobs, err = db.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	assert.Equal(t, []string{"hunks-2", "bisect-1"}, []string{jobs[0].ID, jobs[1].ID})
}

func TestPutJobRejects(t *testing.T) {
	valid := store.Job{ID: "j", Kind: record.JobEnvBisect, Status: record.JobFailed}
	for _, tc := range []struct {
		name    string
		edit    func(*store.Job)
		wantErr string
	}{
		{name: "no id", edit: func(j *store.Job) { j.ID = "" }, wantErr: "job has no id"},
		{name: "unknown kind", edit: func(j *store.Job) { j.Kind = "weekly" }, wantErr: `unknown kind "weekly"`},
		{name: "unknown status", edit: func(j *store.Job) { j.Status = "paused" }, wantErr: `unknown status "paused"`},
		{name: "params not JSON", edit: func(j *store.Job) { j.Params = json.RawMessage("{") }, wantErr: "params: not valid JSON"},
		{name: "state not JSON", edit: func(j *store.Job) { j.State = json.RawMessage("x") }, wantErr: "state: not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := storetest.Open(t)
			j := valid
			tc.edit(&j)
			require.ErrorContains(t, db.PutJob(j), tc.wantErr)
			jobs, err := db.Jobs()
			require.NoError(t, err)
			assert.Empty(t, jobs)
		})
	}
	require.NoError(t, storetest.Open(t).PutJob(valid), "the unedited job is valid")
	_, _, err := storetest.Open(t).Job("")
	require.ErrorContains(t, err, "empty id")
}

func TestTrace(t *testing.T) {
	db := storetest.Open(t)
	empty, err := db.Trace("bisect-1")
	require.NoError(t, err)
	assert.Nil(t, empty, "a job without a trace has no lines")

	lines := []store.TraceLine{
		{Time: t0, Text: "bisect a..b (64 commits)"},
		{Time: t0.Add(time.Second), Text: "verify a n=3"},
		{Time: t0.Add(time.Second), Text: "verify b n=3"},
	}
	for _, l := range lines {
		require.NoError(t, db.AppendTrace("bisect-1", l))
	}
	require.NoError(t, db.AppendTrace("hunks-2", store.TraceLine{Time: t0, Text: "other job"}))
	got, err := db.Trace("bisect-1")
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i := range lines {
		assert.True(t, lines[i].Time.Equal(got[i].Time))
		assert.Equal(t, lines[i].Text, got[i].Text, "lines keep their order")
	}
	require.Error(t, db.AppendTrace("", lines[0]))
}
