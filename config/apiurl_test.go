package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGitHubAPIURL: the token goes in clear over plain HTTP, so http:// is
// for a server on this machine only; and the token goes in github.token_env,
// never in the URL.
func TestGitHubAPIURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string // the error; "" for a valid URL
	}{
		{url: "https://ghe.example.com/api/v3/"},
		{url: "http://127.0.0.1:8080/api/v3/"},
		{url: "http://localhost:8080/"},
		{url: "http://LOCALHOST/"},
		{url: "http://[::1]:9000/"},
		{url: "http://ghe.example.com/api/v3/",
			want: `perfbot.yaml:13: github.api_url: "http://ghe.example.com/api/v3/" sends the token in clear: use https, or http only for a loopback host (127.0.0.1, ::1, localhost)`},
		{url: "http://10.0.0.5/", want: "github.api_url: \"http://10.0.0.5/\" sends the token in clear"},
		{url: "http://localhost.example.com/", want: "github.api_url: \"http://localhost.example.com/\" sends the token in clear"},
		{url: "https://bot:hunter22@ghe.example.com/", want: "github.api_url: https://bot:xxxxx@ghe.example.com/ must not hold credentials; the token goes in the variable named by github.token_env"},
		{url: "ftp://ghe.example.com/", want: `github.api_url: "ftp://ghe.example.com/" is not an http(s) URL`},
	} {
		t.Run(tc.url, func(t *testing.T) {
			c, err := Parse([]byte(minimal+"github:\n  api_url: "+tc.url+"\n"), "perfbot.yaml")
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.url, c.GitHub.APIURL)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "hunter22")
		})
	}
}
