package demo

import (
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/configs"
)

// GPUConfig is configs/gpu-testbed.yaml pointed at a GPU testbed generated
// in repoDir (testbed.GenerateGPU), with the clone, the store and the
// issues beside it, as Config does for the Go testbed.
func GPUConfig(repoDir string) (*config.Config, error) {
	data, err := configs.FS.ReadFile("gpu-testbed.yaml")
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse(data, "gpu-testbed.yaml (embedded)")
	if err != nil {
		return nil, err
	}
	return besideRepo(cfg, repoDir)
}
