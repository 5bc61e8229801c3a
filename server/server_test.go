package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/views"
)

// fake is a Reader and a Writer answering from memory.
type fake struct {
	// fixture answers what the fake does not (a populated store).
	*fixture
	rows     []views.HistoryRow
	jobs     map[string]views.JobView
	enqueued []string
	lastQ    views.HistoryQuery
}

func (f *fake) HistoryPage(_ context.Context, q views.HistoryQuery, _ string) ([]views.HistoryRow, string, error) {
	f.lastQ = q
	if q.Metric == "nope" {
		return nil, "", &record.InputError{Err: errInput("metric \"nope\" is not configured")}
	}
	return f.rows, "", nil
}

func (f *fake) JobsPage(context.Context, string, int) ([]store.Job, string, error) {
	var out []store.Job
	for _, j := range f.jobs {
		out = append(out, j.Job)
	}
	return out, "", nil
}

func (f *fake) Job(_ context.Context, id string) (views.JobView, error) {
	j, ok := f.jobs[id]
	if !ok {
		return views.JobView{}, &record.InputError{Err: errInput("no job " + id)}
	}
	return j, nil
}

func (f *fake) Enqueue(kind record.JobKind, req any) (string, error) {
	f.enqueued = append(f.enqueued, string(kind))
	return string(kind) + "-1", nil
}

type errInput string

func (e errInput) Error() string { return string(e) }

func TestAPI(t *testing.T) {
	svc := &fake{
		fixture: populated(t),
		rows:    []views.HistoryRow{{Metric: "verify_tok_s", Value: 100, Commit: "abc"}},
		jobs: map[string]views.JobView{"bisect-1": {Job: store.Job{ID: "bisect-1", Kind: record.JobBisect, Status: record.JobDone},
			Trace: []store.TraceLine{{Text: "bisect a..b"}}}},
	}
	woken := 0
	ts := httptest.NewServer(server.New(svc, svc, server.Options{Tokens: []string{"s3cret"}, Enqueued: func() { woken++ }}))
	defer ts.Close()
	bisect := `{"kind":"bisect","request":{"Good":"a","Bad":"b"}}`
	tests := []struct {
		name, method, path, token, body string
		status                          int
		contains                        string
	}{
		{name: "health", method: "GET", path: "/healthz", status: 200, contains: "ok"},
		{name: "history", method: "GET", path: "/api/history?metric=verify_tok_s&limit=5&since=2026-11-30T02:00:00Z", status: 200, contains: `"commit":"abc"`},
		{name: "bad limit", method: "GET", path: "/api/history?limit=-1", status: 400, contains: `"param":"limit"`},
		{name: "bad since", method: "GET", path: "/api/history?since=yesterday", status: 400, contains: `"param":"since"`},
		{name: "unknown metric", method: "GET", path: "/api/history?metric=nope", status: 400, contains: `"param":"metric"`},
		{name: "jobs", method: "GET", path: "/api/jobs", status: 200, contains: `"bisect-1"`},
		{name: "job with its trace", method: "GET", path: "/api/jobs/bisect-1", status: 200, contains: `"bisect a..b"`},
		{name: "no such job", method: "GET", path: "/api/jobs/nope", status: 404, contains: `"param":"id"`},
		{name: "enqueue without a token", method: "POST", path: "/api/jobs", body: bisect, status: 401},
		{name: "enqueue with a wrong token", method: "POST", path: "/api/jobs", token: "guess", body: bisect, status: 401},
		{name: "enqueue", method: "POST", path: "/api/jobs", token: "s3cret", body: bisect, status: 202, contains: `"id":"bisect-1"`},
		{name: "unknown kind", method: "POST", path: "/api/jobs", token: "s3cret", body: `{"kind":"weekly","request":{}}`, status: 400, contains: `"param":"kind"`},
		{name: "bad request", method: "POST", path: "/api/jobs", token: "s3cret", body: `{"kind":"bisect","request":{"Goood":"a"}}`, status: 400, contains: `"param":"request"`},
		{name: "not JSON", method: "POST", path: "/api/jobs", token: "s3cret", body: `kind=bisect`, status: 400, contains: `"param":"body"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, ts.URL+tt.path, strings.NewReader(tt.body))
			require.NoError(t, err)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			require.Equal(t, tt.status, resp.StatusCode, string(body))
			require.Contains(t, string(body), tt.contains)
			if tt.status >= 400 && tt.path != "/healthz" {
				var e server.Error
				require.NoError(t, json.Unmarshal(body, &e), "errors are JSON")
				require.NotEmpty(t, e.Error)
			}
		})
	}
	require.Equal(t, []string{"bisect"}, svc.enqueued, "only the authorized, valid request was queued")
	require.Equal(t, 1, woken)
}

func TestNoTokenNoMutation(t *testing.T) {
	svc := &fake{fixture: populated(t)}
	ts := httptest.NewServer(server.New(svc, svc, server.Options{}))
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/api/jobs", "application/json", strings.NewReader(`{"kind":"bisect","request":{}}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Empty(t, svc.enqueued)
}
