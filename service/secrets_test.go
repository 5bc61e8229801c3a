package service

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/store"
)

// A benchmark that prints its environment on a real local host leaves no
// credential of perfbot's in the store: the build and benchmark processes
// never receive them.
func TestBenchmarksGetNoPerfbotSecrets(t *testing.T) {
	secrets := map[string]string{
		"BOT_GH_TOKEN":      "configured0token0value0000000000000000",
		"GITHUB_TOKEN":      "ghp_" + strings.Repeat("a", 36),
		"PERFBOT_API_TOKEN": "perfbot0api0token0value",
		"BOT_API":           "the0server0api0token0value", // serve.token_env
		"WANDB_LOGIN":       "listed0under0secrets0value", // a name no rule knows as secret
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	repo, commits := gitopstest.NewRepo(t, 1)
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`repo: {url: %s}
build: [{name: build, run: "env"}]
benchmarks:
  - {name: engine, run: "env; echo BenchmarkVerifyStep 1 100 tok/s", format: gobench}
metrics:
  - {name: verify_tok_s, benchmark: engine, select: BenchmarkVerifyStep, unit: tok/s}
github: {token_env: BOT_GH_TOKEN}
serve: {token_env: BOT_API}
secrets: [WANDB_LOGIN]
`, repo)), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	b, err := Open(context.Background(), cfg, Options{})
	require.NoError(t, err)
	defer b.Close()

	ms, err := b.Measure(context.Background(), []string{commits[0]}, 2)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	require.Equal(t, 2, ms[0].Metrics[0].N, ms[0].Error)
	runs, err := b.Store.Runs(store.RunFilter{Commit: commits[0]})
	require.NoError(t, err)
	require.Len(t, runs, 2)
	for _, run := range runs {
		require.NotEmpty(t, run.Logs)
		for _, l := range run.Logs {
			assert.Contains(t, l.Output, "PATH=", "the log holds the environment")
			for name, value := range secrets {
				assert.NotContains(t, l.Output, value, "%s in the log of %s", name, l.Step)
			}
		}
	}
}
