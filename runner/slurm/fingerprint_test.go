package slurm

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/internal/slurmtest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// TestFingerprintOnSlurm is one real run through the real Slurm: its
// fingerprint holds the variables the benchmark received and its node as
// Slurm describes it. With -v it prints it.
func TestFingerprintOnSlurm(t *testing.T) {
	ctx := context.Background()
	spec := record.Spec{
		Build: []record.Step{{Name: "build", Run: "true", Timeout: time.Minute}},
		Benchmarks: []record.BenchStep{{
			Step:   record.Step{Name: "engine", Run: `export NCCL_ALGO=Ring; echo "BenchmarkVerifyStep 1 $(cat counter.txt) tok/s"`, Timeout: time.Minute, Env: map[string]string{"NCCL_PROTO": "LL"}},
			Format: "gobench",
		}},
		Metrics: []record.Metric{{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher, Primary: true}},
	}
	h, commits := newSlurm(t, 1, 2)
	pool, err := runner.NewPool(h)
	require.NoError(t, err)
	runs, err := runnertest.Measure(t, ctx, pool, &runner.Runner{Spec: spec}, runner.Source{Target: record.Target{Commit: commits[1]}}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	run := runs[0]
	require.Equal(t, record.StatusOK, run.Status, run.Error)
	fp := run.Fingerprint
	assert.Equal(t, h.Name(), run.Host)
	assert.NotEmpty(t, fp.Host, "the cluster's name")
	assert.Equal(t, map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring"}, fp.Env, "what the benchmark received, its own exports too")
	assert.Equal(t, slurmtest.Node, run.Node)
	require.NotNil(t, fp.ClusterNode)
	assert.Equal(t, slurmtest.Gres, fp.ClusterNode.Gres)
	out, err := json.MarshalIndent(struct {
		Host        string             `json:"host"`
		Node        string             `json:"node,omitempty"`
		Fingerprint record.Fingerprint `json:"fingerprint"`
	}{run.Host, run.Node, fp}, "", "  ")
	require.NoError(t, err)
	t.Logf("run on slurm:\n%s", out)
}
