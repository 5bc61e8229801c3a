package configs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
)

// The SSH example measures on one ssh host whose key is checked, in a
// workdir of its own on that host.
func TestSSHExample(t *testing.T) {
	c, err := config.Parse(mustRead(t, "sglang-ssh.yaml"), "sglang-ssh.yaml")
	require.NoError(t, err)
	require.Len(t, c.Hosts, 1)
	h := c.Hosts[0]
	assert.Equal(t, config.HostSSH, h.Kind)
	assert.Equal(t, "/data/perfbot", h.Workdir)
	assert.NotEmpty(t, h.KnownHosts)
	assert.False(t, h.InsecureIgnoreHostKey)
	assert.Equal(t, "LL", c.Benchmarks[0].Env["NCCL_PROTO"])
	assert.Equal(t, config.Pool{MaxFailures: 3, Cooldown: 30 * time.Minute}, c.Pool)
}
