package runner

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/internal/slurmtest"
	"github.com/perfbot/perfbot/internal/sshdtest"
	"github.com/perfbot/perfbot/record"
)

// TestFingerprintOverSSHAndSlurm is one real run over ssh (sshd on
// 127.0.0.1) and one through the real Slurm: each fingerprint holds the
// machine's facts and the variables the benchmark received; the Slurm
// run's holds its node as Slurm describes it. With -v it prints both.
func TestFingerprintOverSSHAndSlurm(t *testing.T) {
	ctx := context.Background()
	spec := record.Spec{
		Build: []record.Step{{Name: "build", Run: "true", Timeout: time.Minute}},
		Benchmarks: []record.BenchStep{{
			Step:   record.Step{Name: "engine", Run: `export NCCL_ALGO=Ring; echo "BenchmarkVerifyStep 1 $(cat counter.txt) tok/s"`, Timeout: time.Minute, Env: map[string]string{"NCCL_PROTO": "LL"}},
			Format: "gobench",
		}},
		Metrics: []record.Metric{{Name: "verify_tok_s", Benchmark: "engine", Select: "BenchmarkVerifyStep", Unit: "tok/s", Better: record.Higher, Primary: true}},
	}
	hosts := map[string]func(t *testing.T) (Host, string){
		"ssh": func(t *testing.T) (Host, string) {
			srv := sshdtest.Start(t)
			src, commits := gitopstest.NewRepo(t, 2)
			repo, err := gitops.Open(ctx, src, t.TempDir())
			require.NoError(t, err)
			return sshHost(t, srv, repo), commits[1]
		},
		"slurm": func(t *testing.T) (Host, string) {
			s, commits := newSlurm(t, 1, 2)
			return s, commits[1]
		},
	}
	for _, kind := range []string{"ssh", "slurm"} {
		t.Run(kind, func(t *testing.T) {
			h, commit := hosts[kind](t)
			pool, err := NewPool(h)
			require.NoError(t, err)
			runs, err := measureIn(t, ctx, pool, &Runner{Spec: spec}, Source{Target: record.Target{Commit: commit}}, 1)
			require.NoError(t, err)
			require.Len(t, runs, 1)
			run := runs[0]
			require.Equal(t, record.StatusOK, run.Status, run.Error)
			fp := run.Fingerprint
			assert.Equal(t, h.Name(), run.Host)
			assert.NotEmpty(t, fp.Host, "the machine's own name (the cluster's, on Slurm)")
			assert.Equal(t, map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring"}, fp.Env, "what the benchmark received, its own exports too")
			switch kind {
			case "ssh":
				assert.Positive(t, fp.CPUs)
				assert.NotEmpty(t, fp.Kernel)
				assert.Empty(t, run.Node)
				assert.Nil(t, fp.ClusterNode)
			case "slurm":
				assert.Equal(t, slurmtest.Node, run.Node)
				require.NotNil(t, fp.ClusterNode)
				assert.Equal(t, slurmtest.Gres, fp.ClusterNode.Gres)
			}
			out, err := json.MarshalIndent(struct {
				Host        string             `json:"host"`
				Node        string             `json:"node,omitempty"`
				Fingerprint record.Fingerprint `json:"fingerprint"`
			}{run.Host, run.Node, fp}, "", "  ")
			require.NoError(t, err)
			t.Logf("run over %s:\n%s", kind, out)
		})
	}
}
