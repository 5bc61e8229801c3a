package report

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// issueServer answers every request with issue 7 and records the
// Authorization header of each; with redirect set, a request outside
// /moved/ is redirected there first (redirect returns the base URL).
type issueServer struct {
	srv      *httptest.Server
	redirect func() string
	status   int

	mu   sync.Mutex
	auth []string
}

func newIssueServer(t *testing.T) *issueServer {
	s := &issueServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *issueServer) serve(w http.ResponseWriter, r *http.Request) {
	if s.redirect != nil && !strings.HasPrefix(r.URL.Path, "/moved/") {
		http.Redirect(w, r, s.redirect()+"/moved"+r.URL.Path, s.status)
		return
	}
	s.mu.Lock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodPost {
		w.WriteHeader(http.StatusCreated)
	}
	_, _ = w.Write([]byte(`{"id": 1, "number": 7, "html_url": "https://example/7", "state": "open", "body": ""}`))
}

func (s *issueServer) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func newRedirectedGitHub(t *testing.T, api *issueServer) *GitHub {
	t.Helper()
	clock := newFakeClock()
	g, err := NewGitHub(GitHubOptions{Repo: testRepo, Token: testToken, APIURL: api.srv.URL,
		HTTPClient: api.srv.Client(), Sleep: clock.Sleep, Now: clock.Now})
	require.NoError(t, err)
	return g
}

// TestGitHubTokenStaysOnTheAPIHost: a redirect from the API host to another
// host (two httptest servers: another port is another host) is refused
// before anything is sent there, for reads and writes, and is not retried.
func TestGitHubTokenStaysOnTheAPIHost(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			ctx := context.Background()
			other := newIssueServer(t)
			api := newIssueServer(t)
			api.redirect, api.status = func() string { return other.srv.URL }, status
			g := newRedirectedGitHub(t, api)

			_, err := g.Get(ctx, 7)
			requireRefusedRedirect(t, err, other)
			_, err = g.Create(ctx, "title", "body", nil)
			requireRefusedRedirect(t, err, other)
			requireRefusedRedirect(t, g.Comment(ctx, 7, "comment"), other)
			assert.Empty(t, other.received(), "nothing reached the other host, least of all the token")
		})
	}
}

func requireRefusedRedirect(t *testing.T, err error, other *issueServer) {
	t.Helper()
	require.Error(t, err)
	var fe *FileError
	require.ErrorAs(t, err, &fe, "a refused redirect is a permanent error, not retried: %v", err)
	assert.Contains(t, err.Error(), "redirect to "+strings.TrimPrefix(other.srv.URL, "http://"))
	assert.Contains(t, err.Error(), "github.api_url")
	assert.NotContains(t, err.Error(), testToken)
}

// TestGitHubRedirectOnTheAPIHost: a redirect that stays on the API host
// (GitHub's answer for a renamed repository) is followed with the token.
func TestGitHubRedirectOnTheAPIHost(t *testing.T) {
	api := newIssueServer(t)
	api.redirect, api.status = func() string { return api.srv.URL }, http.StatusMovedPermanently
	g := newRedirectedGitHub(t, api)
	iss, err := g.Get(context.Background(), 7)
	require.NoError(t, err)
	assert.Equal(t, 7, iss.Number)
	assert.Equal(t, []string{"Bearer " + testToken}, api.received())
}

// TestGitHubPlainHTTPOnlyOnLoopback: over http:// the token crosses the
// network in clear, so NewGitHub takes it only for this machine.
func TestGitHubPlainHTTPOnlyOnLoopback(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string
	}{
		{url: "http://127.0.0.1:8080/api/v3/"},
		{url: "http://localhost/"},
		{url: "http://[::1]:9000/"},
		{url: "https://ghe.example.com/"},
		{url: "http://ghe.example.com/api/v3/", want: `github.api_url "http://ghe.example.com/api/v3/" sends the token in clear: use https, or http only for a loopback host (127.0.0.1, ::1, localhost)`},
		{url: "http://192.168.1.10/", want: "sends the token in clear"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := NewGitHub(GitHubOptions{Repo: testRepo, Token: testToken, APIURL: tc.url})
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
