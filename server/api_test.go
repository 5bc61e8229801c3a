package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/views"
)

type call struct {
	method, path, token, body string
}

func (c call) do(t *testing.T, base string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	require.NoError(t, err)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

func get[T any](t *testing.T, base, path string) T {
	t.Helper()
	status, body := call{method: "GET", path: path}.do(t, base)
	require.Equal(t, http.StatusOK, status, string(body))
	var v T
	require.NoError(t, json.Unmarshal(body, &v), string(body))
	return v
}

// The read endpoints over a populated store answer what it holds.
func TestAPIReads(t *testing.T) {
	bot := populated(t)
	ts := httptest.NewServer(bot.handler(server.Options{}))
	defer ts.Close()

	rows := get[[]views.HistoryRow](t, ts.URL, "/api/history?metric=verify_tok_s&limit=3")
	require.Len(t, rows, 3)
	require.Equal(t, fixtureCommit(24), rows[0].Commit, "newest run first")
	require.Equal(t, "tok/s", rows[0].Unit)
	require.Equal(t, fixtureSubject(24), rows[0].Subject)
	require.True(t, rows[0].Time.After(rows[2].Time) || rows[0].Time.Equal(rows[2].Time))

	c := get[views.CommitView](t, ts.URL, "/api/commits/"+fixtureCommit(15)[:8])
	require.Equal(t, fixtureCommit(15), c.Commit.Hash)
	require.Len(t, c.Runs, 6)
	require.Equal(t, "verify_tok_s", c.Metrics[0].Metric)
	require.Equal(t, 6, c.Metrics[0].N)
	require.InEpsilon(t, 920, c.Metrics[0].Median, 0.015)
	require.Equal(t, "SYS", c.Fingerprint.Env["NCCL_P2P_LEVEL"])
	require.Equal(t, []uint64{16}, c.Nights)
	require.Len(t, c.Findings, 1)

	cmp := get[views.Comparison](t, ts.URL, "/api/compare?a="+fixtureCommit(14)+"&b="+fixtureCommit(15))
	require.Equal(t, "worse", cmp.Metrics[0].Verdict, "verify_tok_s fell")
	require.InDelta(t, -8, cmp.Metrics[0].DeltaPct, 1.5)
	require.Equal(t, "worse", cmp.Metrics[1].Verdict, "verify_ms rose, and lower is better")
	require.Equal(t, []record.EnvDiff{{Name: "NCCL_P2P_LEVEL", Good: "", Bad: "SYS"}}, cmp.Env)

	fs := get[[]views.FindingRow](t, ts.URL, "/api/findings")
	require.Len(t, fs, 2)
	require.Equal(t, record.Improvement, fs[0].Direction, "newest first")
	require.Equal(t, record.TriageAcknowledged, fs[0].TriageState)
	require.Equal(t, record.TriageUntriaged, fs[1].TriageState)
	require.Equal(t, 42, fs[1].Issue)

	// One finding, by its id or any unique prefix of it, or by the id an
	// older perfbot gave it.
	for _, name := range []string{fs[1].ID, fs[1].ID[:5], "perfbotfp" + fs[1].ID} {
		f := get[views.FindingRow](t, ts.URL, "/api/findings/"+name)
		require.Equal(t, fs[1].ID, f.ID, name)
		require.Equal(t, 42, f.Issue)
		require.Equal(t, record.TriageUntriaged, f.TriageState)
	}

	jobs := get[[]json.RawMessage](t, ts.URL, "/api/jobs")
	require.Len(t, jobs, 3)
	j := get[views.JobView](t, ts.URL, "/api/jobs/alert-1f2e3d4c5b6a")
	require.Len(t, j.Trace, 4)
	require.Contains(t, j.Trace[3].Text, "issues/42")
}

// Bad parameters get 400 naming the parameter, what does not exist 404,
// a mutation without the token 401, and a server without a token 403; a
// refused request changes nothing.
func TestAPIErrors(t *testing.T) {
	bot := populated(t)
	withToken := httptest.NewServer(bot.handler(server.Options{Tokens: []string{"s3cret"}}))
	defer withToken.Close()
	none := httptest.NewServer(bot.handler(server.Options{}))
	defer none.Close()
	finding := "/api/findings/" + fixtureFindingID(t, bot) + "/triage"
	for _, tt := range []struct {
		name   string
		base   string
		call   call
		status int
		param  string
	}{
		{"history: bad limit", withToken.URL, call{"GET", "/api/history?limit=many", "", ""}, 400, "limit"},
		{"history: bad since", withToken.URL, call{"GET", "/api/history?since=2026-13-01", "", ""}, 400, "since"},
		{"history: unknown metric", withToken.URL, call{"GET", "/api/history?metric=tok", "", ""}, 400, "metric"},
		{"commit: not hex", withToken.URL, call{"GET", "/api/commits/HEAD~1", "", ""}, 400, "sha"},
		{"commit: unknown", withToken.URL, call{"GET", "/api/commits/abcdef0", "", ""}, 404, "sha"},
		{"compare: missing b", withToken.URL, call{"GET", "/api/compare?a=" + fixtureCommit(1), "", ""}, 400, "b"},
		{"job: unknown", withToken.URL, call{"GET", "/api/jobs/bisect-000", "", ""}, 404, "id"},
		{"triage: no token", withToken.URL, call{"POST", finding, "", `{"state":"invalid"}`}, 401, ""},
		{"triage: wrong token", withToken.URL, call{"POST", finding, "guess", `{"state":"invalid"}`}, 401, ""},
		{"triage: bad state", withToken.URL, call{"POST", finding, "s3cret", `{"state":"wontfix"}`}, 400, "state"},
		{"triage: unknown field", withToken.URL, call{"POST", finding, "s3cret", `{"state":"invalid","why":"x"}`}, 400, "body"},
		{"triage: unknown finding", withToken.URL, call{"POST", "/api/findings/perfbotfp00/triage", "s3cret", `{"state":"invalid"}`}, 404, "id"},
		{"finding: unknown", withToken.URL, call{"GET", "/api/findings/00", "", ""}, 404, "id"},
		{"bisect: no token", withToken.URL, call{"POST", "/api/bisect", "", `{"Good":"a","Bad":"b"}`}, 401, ""},
		{"bisect: no body", withToken.URL, call{"POST", "/api/bisect", "s3cret", ``}, 400, "body"},
		{"bisect: unknown field", withToken.URL, call{"POST", "/api/bisect", "s3cret", `{"Goood":"a"}`}, 400, "body"},
		{"nightly: no token", withToken.URL, call{"POST", "/api/nightly", "", ``}, 401, ""},
		{"nightly: bad body", withToken.URL, call{"POST", "/api/nightly", "s3cret", `{"scheduled":"tonight"}`}, 400, "body"},
		{"no token configured: triage", none.URL, call{"POST", finding, "s3cret", `{"state":"invalid"}`}, 403, ""},
		{"no token configured: bisect", none.URL, call{"POST", "/api/bisect", "s3cret", `{"Good":"a","Bad":"b"}`}, 403, ""},
		{"no token configured: nightly", none.URL, call{"POST", "/api/nightly", "s3cret", ``}, 403, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := tt.call.do(t, tt.base)
			require.Equal(t, tt.status, status, string(body))
			var e server.Error
			require.NoError(t, json.Unmarshal(body, &e), "errors are JSON: %s", body)
			require.NotEmpty(t, e.Error)
			require.Equal(t, tt.param, e.Param)
		})
	}
	fs, err := bot.ListFindings(context.Background())
	require.NoError(t, err)
	for _, f := range fs {
		require.NotEqual(t, record.TriageInvalid, f.TriageState(), "no refused triage was recorded")
	}
	jobs, err := bot.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 3, "no refused job was queued")
}

func fixtureFindingID(t *testing.T, b *fixture) string {
	fs, err := b.ListFindings(context.Background())
	require.NoError(t, err)
	for _, f := range fs {
		if f.Direction == record.Regression {
			return f.ID
		}
	}
	t.Fatal("no regression in the fixture")
	return ""
}

// With the token, the mutations do what they say.
func TestAPIMutations(t *testing.T) {
	bot := populated(t)
	woken := 0
	now := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	ts := httptest.NewServer(bot.handler(server.Options{Tokens: []string{"s3cret"}, Enqueued: func() { woken++ }, Now: func() time.Time { return now }}))
	defer ts.Close()
	id := fixtureFindingID(t, bot)

	status, body := call{"POST", "/api/findings/" + id[:6] + "/triage", "s3cret", `{"state":"invalid","note":"the host was throttled"}`}.do(t, ts.URL)
	require.Equal(t, http.StatusOK, status, string(body))
	var row views.FindingRow
	require.NoError(t, json.Unmarshal(body, &row))
	require.Equal(t, id, row.ID)
	require.Equal(t, record.TriageInvalid, row.TriageState)
	f, err := bot.Finding(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, "the host was throttled", f.Triage.Note)

	status, body = call{"POST", "/api/bisect", "s3cret", `{"Good":"` + fixtureCommit(20) + `","Bad":"` + fixtureCommit(29) + `"}`}.do(t, ts.URL)
	require.Equal(t, http.StatusAccepted, status, string(body))
	var queued server.EnqueueResponse
	require.NoError(t, json.Unmarshal(body, &queued))
	require.True(t, strings.HasPrefix(queued.ID, "bisect-"), queued.ID)

	status, body = call{"POST", "/api/nightly", "s3cret", ``}.do(t, ts.URL)
	require.Equal(t, http.StatusAccepted, status, string(body))
	require.NoError(t, json.Unmarshal(body, &queued))
	j, err := bot.Job(context.Background(), queued.ID)
	require.NoError(t, err)
	require.Equal(t, record.JobNightly, j.Kind)
	require.Equal(t, record.JobQueued, j.Status)
	require.JSONEq(t, `{"scheduled":"2026-12-01T02:00:00Z"}`, string(j.Params))
	require.Equal(t, 2, woken)
}

// /metrics is scraped and parsed as Prometheus text; each scrape counts
// the runs recorded since the last.
func TestMetrics(t *testing.T) {
	bot := populated(t)
	ts := httptest.NewServer(bot.handler(server.Options{}))
	defer ts.Close()
	scrape := func() map[string]*dto {
		resp, err := http.Get(ts.URL + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		p := expfmt.NewTextParser(model.UTF8Validation)
		families, err := p.TextToMetricFamilies(resp.Body)
		require.NoError(t, err)
		out := map[string]*dto{}
		for name, fam := range families {
			for _, m := range fam.GetMetric() {
				key := name
				for _, l := range m.GetLabel() {
					key += "," + l.GetName() + "=" + l.GetValue()
				}
				v := m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
				out[key] = &dto{value: v, kind: fam.GetType().String()}
			}
		}
		return out
	}
	got := scrape()
	want := map[string]float64{
		"perfbot_jobs,state=done":                                 1,
		"perfbot_jobs,state=running":                              1,
		"perfbot_jobs,state=queued":                               1,
		"perfbot_jobs,state=failed":                               0,
		"perfbot_runs_total,host=gpu1,status=ok":                  24,
		"perfbot_runs_total,host=gpu2,status=build_failed":        1,
		"perfbot_run_seconds_total,host=gpu1,status=ok":           24 * 92,
		"perfbot_run_seconds_total,host=gpu2,status=build_failed": 41,
		"perfbot_findings,state=untriaged":                        1,
		"perfbot_findings,state=acknowledged":                     1,
		"perfbot_findings,state=invalid":                          0,
		"perfbot_findings,state=fixed":                            0,
		"perfbot_last_successful_cycle_timestamp_seconds":         float64(fixtureT0.Add((fixtureNights - 1) * 24 * time.Hour).Unix()),
	}
	for k, v := range want {
		require.Contains(t, got, k)
		require.Equal(t, v, got[k].value, k)
	}
	require.Equal(t, "COUNTER", got["perfbot_runs_total,host=gpu1,status=ok"].kind)
	require.Equal(t, "GAUGE", got["perfbot_jobs,state=done"].kind)
	require.Contains(t, got, "go_goroutines", "the runtime's metrics too")

	_, err := bot.Triage(context.Background(), fixtureFindingID(t, bot), service.TriageRequest{State: record.TriageFixed})
	require.NoError(t, err)
	got = scrape()
	require.Equal(t, 1.0, got["perfbot_findings,state=fixed"].value)
	require.Equal(t, 0.0, got["perfbot_findings,state=untriaged"].value)
	require.Equal(t, 24.0, got["perfbot_runs_total,host=gpu1,status=ok"].value, "runs are counted once across scrapes")
}

type dto struct {
	value float64
	kind  string
}
