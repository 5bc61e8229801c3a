package sshdtest_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/perfbot/perfbot/internal/sshdtest"
)

// The server accepts its client key under its known host key, and after
// Kill it accepts nothing until Restart.
func TestServer(t *testing.T) {
	s := sshdtest.Start(t)
	key, err := os.ReadFile(s.KeyFile)
	require.NoError(t, err)
	signer, err := ssh.ParsePrivateKey(key)
	require.NoError(t, err)
	check, err := knownhosts.New(s.KnownHosts)
	require.NoError(t, err)
	cfg := &ssh.ClientConfig{User: s.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: check}

	run := func() (string, error) {
		c, err := ssh.Dial("tcp", s.Addr, cfg)
		if err != nil {
			return "", err
		}
		defer c.Close()
		sess, err := c.NewSession()
		require.NoError(t, err)
		out, err := sess.Output("echo hello")
		return string(out), err
	}
	out, err := run()
	require.NoError(t, err)
	assert.Equal(t, "hello\n", out)

	s.Kill()
	_, err = run()
	require.Error(t, err, "a killed server accepts no connection")
	s.Restart(t)
	out, err = run()
	require.NoError(t, err)
	assert.Equal(t, "hello\n", out)
}
