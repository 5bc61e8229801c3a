package ssh

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/internal/sshdtest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// TestFingerprintOverSSH is one real run over ssh (sshd on 127.0.0.1):
// its fingerprint holds the machine's facts and the variables the
// benchmark received. With -v it prints it.
func TestFingerprintOverSSH(t *testing.T) {
	ctx := context.Background()
	spec := record.Spec{
		Build: []record.Step{{Name: "build", Run: "true", Timeout: time.Minute}},
		Benchmarks: []record.BenchStep{{
			Step:   record.Step{Name: "engine", Run: `export NCCL_ALGO=Ring; echo "BenchmarkVerifyStep 1 $(cat counter.txt) tok/s"`, Timeout: time.Minute, Env: map[string]string{"NCCL_PROTO": "LL"}},
			Format: "gobench",
		}},
		Metrics: []record.Metric{{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher, Primary: true}},
	}
	srv := sshdtest.Start(t)
	src, commits := gitopstest.NewRepo(t, 2)
	repo, err := gitops.Open(ctx, src, t.TempDir())
	require.NoError(t, err)
	h := sshHost(t, srv, repo)
	pool, err := runner.NewPool(h)
	require.NoError(t, err)
	runs, err := runnertest.Measure(t, ctx, pool, &runner.Runner{Spec: spec}, runner.Source{Target: record.Target{Commit: commits[1]}}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	run := runs[0]
	require.Equal(t, record.StatusOK, run.Status, run.Error)
	fp := run.Fingerprint
	assert.Equal(t, h.Name(), run.Host)
	assert.NotEmpty(t, fp.Host, "the machine's own name")
	assert.Equal(t, map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring"}, fp.Env, "what the benchmark received, its own exports too")
	assert.Positive(t, fp.CPUs)
	assert.NotEmpty(t, fp.Kernel)
	assert.Empty(t, run.Node)
	assert.Nil(t, fp.ClusterNode)
	out, err := json.MarshalIndent(struct {
		Host        string             `json:"host"`
		Fingerprint record.Fingerprint `json:"fingerprint"`
	}{run.Host, fp}, "", "  ")
	require.NoError(t, err)
	t.Logf("run over ssh:\n%s", out)
}
