package demo

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGPUConfigBesideRepo(t *testing.T) {
	dir := t.TempDir()
	cfg, err := GPUConfig(filepath.Join(dir, "gpu-testbed"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "gpu-testbed"), cfg.Repo.URL)
	assert.Equal(t, filepath.Join(dir, "perfbot.db"), cfg.Store)
	assert.Equal(t, filepath.Join(dir, "work"), cfg.Workdir)
	assert.Equal(t, "verify_tok_s", cfg.Primary().Name)
	assert.Equal(t, "import-check", cfg.Build[0].Name)
	assert.Equal(t, "python3 bench/run.py", cfg.Benchmarks[0].Run)
}
