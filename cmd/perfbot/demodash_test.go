package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// syncBuffer is a bytes.Buffer that a command and a test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// After the demo, its dashboard is written under dir/dashboard and, with
// --serve, served read-only until the command is interrupted.
func TestDemoDashboard(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, "perfbot.db"))
	require.NoError(t, err)
	night := record.Night{Time: time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC), Branch: "main", Tip: "0123456789abcdef0123456789abcdef01234567",
		Status: record.StatusOK, Metrics: map[string]record.NightMetric{"verify_tok_s": {Values: []float64{100, 101, 99}, Level: 100}}}
	require.NoError(t, db.AddNight(&night, record.NightlyState{Reference: night.Tip}))
	require.NoError(t, db.Close())

	var stderr syncBuffer
	g := &globals{stdout: io.Discard, stderr: &stderr}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- demoDashboard(ctx, g, dir, true, "127.0.0.1:0") }()
	addr := regexp.MustCompile(`serving the demo's dashboard on (http://\S+)`)
	waitFor(t, func() bool { return addr.MatchString(stderr.String()) })
	require.FileExists(t, filepath.Join(dir, "dashboard", "index.html"))
	base := addr.FindStringSubmatch(stderr.String())[1]

	resp, err := http.Get(base + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `<svg class="chart" data-metric="verify_tok_s"`)
	static, err := os.ReadFile(filepath.Join(dir, "dashboard", "index.html"))
	require.NoError(t, err)
	require.Contains(t, string(static), `href="commit-`+night.Tip+`.html"`, "the static copy links to files")

	resp, err = http.Post(base+"/api/nightly", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "the demo's server changes nothing")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the demo's server did not stop")
	}
}
