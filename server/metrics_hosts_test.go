package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/views"
)

type fixedVitals struct{ v views.Vitals }

func (f fixedVitals) Read(context.Context) (*views.Vitals, error) { return &f.v, nil }

// /metrics has a gauge per host of the pool: in or out, and its failures
// in a row.
func TestMetricsHosts(t *testing.T) {
	left := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	v := fixedVitals{views.Vitals{Hosts: []runner.HostState{
		{Name: "gpu1"},
		{Name: "gpu2", Failures: 3, Out: true, Left: left, Retry: left.Add(10 * time.Minute), Error: "connect: refused"},
	}}}
	ts := httptest.NewServer(populated(t).handler(server.Options{Vitals: v}))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for _, line := range []string{
		`perfbot_host_in_pool{host="gpu1"} 1`,
		`perfbot_host_in_pool{host="gpu2"} 0`,
		`perfbot_host_failures{host="gpu1"} 0`,
		`perfbot_host_failures{host="gpu2"} 3`,
	} {
		assert.Contains(t, string(body), line+"\n")
	}
}
