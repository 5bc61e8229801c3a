package slurmtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { Main(m) }

// The cluster runs a job on its node, through the SLURM_CONF it set; its
// queue holds that job at most (completing, a moment after srun returned).
func TestClusterRunsAJob(t *testing.T) {
	c := Start(t)
	assert.Equal(t, c.Conf, os.Getenv("SLURM_CONF"))
	out, err := exec.Command("srun", "--quiet", "--job-name=hello", "/bin/sh", "-c", `echo "$SLURMD_NODENAME $SLURM_JOB_PARTITION"`).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, Node+" "+Partition, strings.TrimSpace(string(out)))
	queue, err := c.Queue()
	require.NoError(t, err)
	for _, job := range queue {
		assert.Regexp(t, `^\d+ hello COMPLETING$`, job)
	}
	assert.Same(t, c, Start(t), "one cluster per test binary")

	node, err := exec.Command("scontrol", "--oneliner", "show", "node", Node).CombinedOutput()
	require.NoError(t, err, "%s", node)
	assert.Contains(t, string(node), " Gres="+Gres+" ", "the node reports its GPUs")
	out, err = exec.Command("srun", "--quiet", "--gres=gpu:fake:1", "/bin/sh", "-c", "echo ran").CombinedOutput()
	require.NoError(t, err, "a job may ask for one of them: %s", out)
	assert.Equal(t, "ran", strings.TrimSpace(string(out)))
}
