package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// withServer is minimal whose benchmark has the server given (indented
// under "server:").
func withServer(server string) string {
	return strings.Replace(minimal, "    format: gobench\n", "    format: gobench\n    server:\n"+server, 1)
}

func TestParseServer(t *testing.T) {
	c, err := Parse([]byte(withServer(`      run: ./serve --port 30000
      env: {NCCL_DEBUG: INFO}
      ready_url: http://127.0.0.1:30000/health
      start_timeout: 90s
      log: 256KiB
`)), "perfbot.yaml")
	require.NoError(t, err)
	assert.Equal(t, &record.Server{
		Run: "./serve --port 30000", Env: map[string]string{"NCCL_DEBUG": "INFO"},
		ReadyURL: "http://127.0.0.1:30000/health", StartTimeout: 90 * time.Second, LogCap: 256 << 10,
	}, c.Benchmarks[0].Server)

	c, err = Parse([]byte(withServer("      run: ./serve\n      ready_url: http://127.0.0.1:1/\n")), "perfbot.yaml")
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, c.Benchmarks[0].Server.StartTimeout, "the default")
	assert.Zero(t, c.Benchmarks[0].Server.LogCap, "the runner's log cap")

	c, err = Parse([]byte(minimal), "perfbot.yaml")
	require.NoError(t, err)
	assert.Nil(t, c.Benchmarks[0].Server)
	withSrv := c.Spec()
	withSrv.Benchmarks = append([]record.BenchStep(nil), withSrv.Benchmarks...)
	withSrv.Benchmarks[0].Server = &record.Server{Run: "x", ReadyURL: "http://127.0.0.1:1/"}
	assert.NotEqual(t, c.Spec().Hash(), withSrv.Hash(), "the server is part of what is measured")
}

func TestParseServerErrors(t *testing.T) {
	tests := []struct {
		name, server, want string
	}{
		{"no run", "      ready_url: http://127.0.0.1:1/\n", "benchmarks[0].server.run: missing"},
		{"no ready_url", "      run: ./serve\n", "benchmarks[0].server.ready_url: missing"},
		{"a ready_url without scheme", "      run: ./serve\n      ready_url: 127.0.0.1:1/health\n", `bad URL "127.0.0.1:1/health"`},
		{"a bad timeout", "      run: ./serve\n      ready_url: http://127.0.0.1:1/\n      start_timeout: soon\n", `bad duration "soon"`},
		{"a bad log size", "      run: ./serve\n      ready_url: http://127.0.0.1:1/\n      log: 1GiB\n", `bad size "1GiB"`},
		{"an unknown key", "      run: ./serve\n      ready_url: http://127.0.0.1:1/\n      port: 3\n", "port"},
		{"a bad env name", "      run: ./serve\n      ready_url: http://127.0.0.1:1/\n      env: {1X: a}\n", "not an environment variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(withServer(tt.server)), "perfbot.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
