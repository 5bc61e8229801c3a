package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/server"
)

// TestHostCheck: a page whose domain was rebound to the server's address
// (its Host header names that domain) is refused; the names of the server
// are not.
func TestHostCheck(t *testing.T) {
	hostname, err := os.Hostname()
	require.NoError(t, err)
	tests := []struct {
		name, listen, host string
		want               int
	}{
		{"the listen address", "127.0.0.1:8080", "127.0.0.1:8080", http.StatusOK},
		{"localhost", "127.0.0.1:8080", "localhost:8080", http.StatusOK},
		{"IPv6 loopback", "127.0.0.1:8080", "[::1]:8080", http.StatusOK},
		{"a rebound domain", "127.0.0.1:8080", "rebind.attacker.example:8080", http.StatusMisdirectedRequest},
		{"a rebound domain without port", "127.0.0.1:8080", "attacker.example", http.StatusMisdirectedRequest},
		{"a configured name", "perf.internal:8080", "perf.internal:8080", http.StatusOK},
		{"another name of a configured one", "perf.internal:8080", "evil.example:8080", http.StatusMisdirectedRequest},
		{"every interface: an address", "0.0.0.0:8080", "10.1.2.3:8080", http.StatusOK},
		{"every interface: the machine's name", "0.0.0.0:8080", hostname + ":8080", http.StatusOK},
		{"every interface: a rebound domain", "0.0.0.0:8080", "rebind.attacker.example:8080", http.StatusMisdirectedRequest},
		{"no listen given: a domain", "", "attacker.example", http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(server.New(&fake{fixture: populated(t)}, nil, server.Options{Listen: tt.listen}))
			defer ts.Close()
			for _, path := range []string{"/healthz", "/api/history?limit=1"} {
				req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
				require.NoError(t, err)
				req.Host = tt.host
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, tt.want, resp.StatusCode, path)
			}
		})
	}
}
