package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/views"
)

// TestListsComePaged: an unauthenticated GET of a list without a limit
// returns DefaultLimit items and a link to the next page, never the whole
// store; a limit above MaxLimit is refused; following the links returns
// every item once.
func TestListsComePaged(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(benchConfig), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	db, err := store.Open(filepath.Join(dir, "perfbot.db"))
	require.NoError(t, err)
	defer db.Close()
	const runs = server.DefaultLimit + 201
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rs []*record.Run
	for j := range runs {
		r := &record.Run{SpecHash: "spec1", Target: record.Target{Commit: fmt.Sprintf("%040x", j/10)}, Host: "gpu1", Status: record.StatusOK,
			Started: t0.Add(time.Duration(j) * time.Minute), Duration: time.Minute, Values: map[string]float64{"verify_tok_s": float64(j)}}
		r.TargetKey = r.Target.Key()
		rs = append(rs, r)
	}
	require.NoError(t, db.AddRuns(rs))
	for i := range 5 {
		require.NoError(t, db.PutJob(store.Job{ID: fmt.Sprintf("bisect-%d", i), Kind: record.JobBisect, Status: record.JobDone, Created: t0.Add(time.Duration(i) * time.Hour)}))
		require.NoError(t, db.PutFinding(record.Finding{ID: fmt.Sprintf("f%d", i), Created: t0.Add(time.Duration(i) * time.Hour)}))
	}
	ts := httptest.NewServer(server.New(views.New(cfg, db), nil, server.Options{}))
	defer ts.Close()

	get := func(t *testing.T, path string) (int, []json.RawMessage, string) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		var items []json.RawMessage
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&items))
		}
		return resp.StatusCode, items, server.NextPage(resp.Header)
	}
	all := func(t *testing.T, path string) int {
		t.Helper()
		n, cursor := 0, ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 1000)
			p := path
			if cursor != "" {
				p += "&cursor=" + cursor
			}
			status, items, next := get(t, p)
			require.Equal(t, http.StatusOK, status)
			n += len(items)
			if cursor = next; next == "" {
				return n
			}
		}
	}

	status, rows, next := get(t, "/api/history")
	require.Equal(t, http.StatusOK, status)
	require.Len(t, rows, server.DefaultLimit, "no limit is the default limit, not every sample")
	require.NotEmpty(t, next)
	status, _, _ = get(t, fmt.Sprintf("/api/history?limit=%d", server.MaxLimit+1))
	require.Equal(t, http.StatusBadRequest, status)
	status, _, _ = get(t, "/api/history?limit=0")
	require.Equal(t, http.StatusBadRequest, status)
	status, _, _ = get(t, "/api/history?cursor=%21%21")
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, runs, all(t, "/api/history?limit=300"))
	require.Equal(t, runs, all(t, "/api/history?metric=verify_tok_s&fingerprints=true&limit=500"))

	for _, list := range []string{"/api/jobs", "/api/findings"} {
		t.Run(strings.TrimPrefix(list, "/api/"), func(t *testing.T) {
			status, items, next := get(t, list+"?limit=2")
			require.Equal(t, http.StatusOK, status)
			require.Len(t, items, 2)
			require.NotEmpty(t, next)
			require.Equal(t, 5, all(t, list+"?limit=2"))
			status, _, _ = get(t, list+"?limit=100000")
			require.Equal(t, http.StatusBadRequest, status)
		})
	}
}
