package secret

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Token-shaped test values. They are built by concatenation so that no
// scanner mistakes this file for a leak.
var (
	ghp    = "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	ghs    = "ghs_" + strings.Repeat("z9Y8x7W6v5", 4)[:36]
	gho    = "gho_" + strings.Repeat("Q1w2E3r4T5", 4)[:36]
	pat    = "github_pat_" + strings.Repeat("11ABCDEFG0", 3) + "_" + strings.Repeat("xYz123AbC4", 6)
	hf     = "hf_" + strings.Repeat("aBcDeFgHiJ", 4)[:34]
	xoxb   = "xoxb-" + "1234567890-1234567890123-" + strings.Repeat("aB3dE", 5)
	xoxp   = "xoxp-" + "1234567890-1234567890-1234567890123-" + strings.Repeat("f00d", 8)
	skKey  = "sk-" + "proj-" + strings.Repeat("Zx8Cv7Bn6M", 5)
	slack  = "https://hooks.slack.com/services/T000" + "00000/B00000000/" + strings.Repeat("X", 24)
	discrd = "https://discord.com/api/webhooks/1234567890/" + strings.Repeat("abcDEF123_", 6)
)

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"HF_TOKEN": true, "GITHUB_TOKEN": true, "GH_TOKEN": true, "HUGGING_FACE_HUB_TOKEN": true,
		"OPENAI_API_KEY": true, "APIKEY": true, "AWS_SECRET_ACCESS_KEY": true, "CLIENT_SECRET": true,
		"DB_PASSWORD": true, "PGPASSWORD": true, "MYSQL_PWD": true, "REDIS_PASS": true, "SMTP_PASSWD": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true, "AWS_CREDENTIALS": true, "NPM_AUTH": true, "GIT_AUTH": true,
		"DATABASE_URL": true, "SENTRY_DSN": true, "SLACK_WEBHOOK_URL": true, "WEBHOOK": true,
		"hf_token": true,
		// Not secrets, though a careless pattern would take them for some.
		"PWD": false, "OLDPWD": false, "TOKENIZERS_PARALLELISM": false, "NCCL_PROTO": false,
		"CUDA_VISIBLE_DEVICES": false, "GOPROXY": false, "PATH": false, "PASSTHROUGH": false,
		"AUTHOR": false, "KEYBOARD_LAYOUT": false, "HOME": false,
	} {
		assert.Equal(t, want, IsSecretName(name), name)
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string
	}{
		{"HF_TOKEN", hf, Mask},
		{"DB_PASSWORD", "hunter2hunter2", Mask},
		{"EMPTY_TOKEN", "", ""},
		{"DATABASE_URL", "postgres://app:s3cr3t@db:5432/perf", Mask},
		{"GOPROXY", "https://bot:pr0xyPass@goproxy.corp.example/,direct", "https://bot:REDACTED@goproxy.corp.example/,direct"},
		{"GOPROXY", "https://proxy.golang.org,direct", "https://proxy.golang.org,direct"},
		{"HTTPS_PROXY", "http://alice:w0nderland@proxy:3128", "http://alice:REDACTED@proxy:3128"},
		{"PIP_EXTRA_INDEX_URL", "https://__token__:pypiSecret123@pypi.corp/simple https://pypi.org/simple",
			"https://__token__:REDACTED@pypi.corp/simple https://pypi.org/simple"},
		{"GIT_REMOTE", "https://" + ghp + "@github.com/org/repo.git", "https://REDACTED@github.com/org/repo.git"},
		{"GIT_REMOTE", "https://git@example.com/org/repo.git", "https://git@example.com/org/repo.git"},
		{"GIT_REMOTE", "https://x-access-token:" + ghs + "@github.com/o/r", "https://x-access-token:REDACTED@github.com/o/r"},
		{"NOTIFY", slack, "https://hooks.slack.com/services/REDACTED"},
		{"NOTIFY", discrd, "https://discord.com/api/webhooks/REDACTED"},
		{"RESULTS", "https://storage.example/bucket/r.json?X-Amz-Signature=abcdef0123&X-Amz-Date=20260101",
			"https://storage.example/bucket/r.json?X-Amz-Signature=REDACTED&X-Amz-Date=20260101"},
		{"BENCH_ARGS", "--token " + ghp + " --n 3", "--token REDACTED --n 3"},
		{"NCCL_PROTO", "LL", "LL"},
		{"CUDA_VISIBLE_DEVICES", "0,1,2,3", "0,1,2,3"},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			assert.Equal(t, tc.want, Redact(tc.name, tc.value))
		})
	}
}

func TestScrubShapes(t *testing.T) {
	for _, tok := range []string{ghp, ghs, gho, pat, hf, xoxb, xoxp, skKey} {
		t.Run(tok[:6], func(t *testing.T) {
			got := Scrub("login with "+tok+", then run", nil)
			assert.Equal(t, "login with REDACTED, then run", got)
		})
	}
	for _, tc := range []struct{ name, in, want string }{
		{"webhook in a log", "posting to " + slack + " ok", "posting to https://hooks.slack.com/services/REDACTED ok"},
		{"userinfo in a log", "fetch https://u:p4ss@mirror.example/x failed", "fetch https://u:REDACTED@mirror.example/x failed"},
		{"authorization header", "> Authorization: Bearer abc.def.ghi\n", "> Authorization: Bearer REDACTED\n"},
		{"private key", "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\ndone",
			"key:\nREDACTED\ndone"},
		{"ordinary text", "BenchmarkVerifyStep-8 200 39650112 ns/op 75.66 tok/s task-0123456789abcdefghij",
			"BenchmarkVerifyStep-8 200 39650112 ns/op 75.66 tok/s task-0123456789abcdefghij"},
		{"commit hash and link", "https://github.com/example/infer/commit/3f2a9c1e00d4b5a6978877665544332211aabbcc",
			"https://github.com/example/infer/commit/3f2a9c1e00d4b5a6978877665544332211aabbcc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Scrub(tc.in, nil))
		})
	}
}

func TestScrubValues(t *testing.T) {
	const pw = "correct horse battery"
	text := "connecting as admin/" + pw + " (url-encoded: correct+horse+battery, path: correct%20horse%20battery)\n" +
		"short values stay: on 1 abc\n"
	got := Scrub(text, []string{pw, "on", "1", "abc", ""})
	assert.Equal(t, "connecting as admin/REDACTED (url-encoded: REDACTED, path: REDACTED)\nshort values stay: on 1 abc\n", got)

	// A secret that holds another is replaced whole.
	assert.Equal(t, "REDACTED and REDACTED", Scrub("secretvalue-long and secretvalue", []string{"secretvalue", "secretvalue-long"}))
	// Scrubbing twice changes nothing more.
	once := Scrub(text+" "+ghp+" "+slack, []string{pw})
	assert.Equal(t, once, Scrub(once, []string{pw}))
}

func TestFromEnv(t *testing.T) {
	got := FromEnv([]string{"HF_TOKEN=" + hf, "PATH=/usr/bin", "DB_PASSWORD=hunter2hunter2", "GH_TOKEN=", "USE_AUTH=1", "broken"})
	assert.ElementsMatch(t, []string{hf, "hunter2hunter2"}, got)
}

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		name string
		host string
		want bool
	}{
		{name: "localhost", host: "localhost", want: true},
		{name: "localhost in capitals", host: "LocalHost", want: true},
		{name: "IPv4 loopback", host: "127.0.0.1", want: true},
		{name: "elsewhere in 127/8", host: "127.1.2.3", want: true},
		{name: "IPv6 loopback", host: "::1", want: true},
		{name: "a LAN address", host: "192.168.1.10"},
		{name: "a host name", host: "ghe.example"},
		{name: "a name that starts like localhost", host: "localhost.example"},
		{name: "empty", host: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, IsLoopback(tt.host))
		})
	}
}
