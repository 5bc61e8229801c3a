package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/internal/sshdtest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/views"
)

// An ssh host that goes away in the middle of a measurement stops it with
// an infrastructure error naming the host; the run recorded before stays
// in the store, so once the host is back the measurement only adds what
// is missing.
func TestSSHHostGoesAwayKeepsRecordedRuns(t *testing.T) {
	srv := sshdtest.Start(t)
	repo, _ := gitopstest.NewRepo(t, 2)
	state := t.TempDir()
	count, ready := filepath.Join(state, "count"), filepath.Join(state, "ready")
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`repo:
  url: %s
hosts:
  - {name: gpu1, kind: ssh, address: %q, user: %s, key_file: %s, known_hosts: %s, workdir: %s}
build:
  - {name: build, run: "true"}
benchmarks:
  - name: engine
    format: gobench
    env: {COUNT: %s, READY: %s}
    run: |
      n=$(($(cat "$COUNT" 2> /dev/null || echo 0) + 1)); echo $n > "$COUNT"
      if [ $n -eq 2 ]; then touch "$READY"; sleep 60; fi
      echo "BenchmarkVerifyStep 1 $(cat counter.txt)00 tok/s"
metrics:
  - {name: verify_tok_s, benchmark: engine, select: BenchmarkVerifyStep, unit: tok/s}
`, repo, srv.Addr, srv.User, srv.KeyFile, srv.KnownHosts, filepath.Join(t.TempDir(), "remote"), count, ready)), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	ctx := context.Background()
	b, err := Open(ctx, cfg, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })

	go func() {
		assert.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, time.Minute, 10*time.Millisecond)
		srv.Kill()
	}()
	_, err = b.Measure(ctx, []string{"main"}, 3)
	require.Error(t, err)
	assert.True(t, record.IsInfra(err), "%v", err)
	assert.Contains(t, err.Error(), "host gpu1")

	srv.Restart(t)
	ms, err := b.Measure(ctx, []string{"main"}, 3)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Equal(t, record.StatusOK, ms[0].Status)
	rows, err := readViews(b).History(ctx, views.HistoryQuery{Metric: "verify_tok_s"})
	require.NoError(t, err)
	ok := 0
	for _, r := range rows {
		if r.Status == string(record.StatusOK) {
			ok++
			assert.Equal(t, "gpu1", r.Host)
			assert.Equal(t, 200.0, r.Value)
		}
	}
	assert.Equal(t, 3, ok)
	n, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, "4", strings.TrimSpace(string(n)), "the run before the host went away counts: two more runs, not three")
}
