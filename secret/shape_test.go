package secret

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRedactByValueShape: a value that holds a credential is redacted
// whatever its variable is called.
func TestRedactByValueShape(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string
	}{
		{"APP_SETTINGS", `{"db":{"host":"db1","password":"hunter2hunter2"}}`, Mask},
		{"APP_SETTINGS", `{"db": {"api_key": "k-123456"}}`, Mask},
		{"CONFIG_JSON", `{"auth":{"client_secret":"s3cr3t-value"}}`, Mask},
		{"BENCH_OPTS", "mode=fast token=abcdef123456", Mask},
		{"DB_CRED", "hunter2hunter2", Mask},
		{"SERVICE_CRED", "x", Mask},
		{"APP_SETTINGS", `{"db":{"host":"db1","port":5432}}`, `{"db":{"host":"db1","port":5432}}`},
		{"BENCH_OPTS", "max_new_tokens=128 use_auth=true", "max_new_tokens=128 use_auth=true"},
		{"CREDIT_LIMIT", "5", "5"},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			assert.Equal(t, tc.want, Redact(tc.name, tc.value))
		})
	}
}

// TestScrubKeyedValues: in free text, the value of a JSON key or a
// key=value whose key is a secret name is masked; numbers and booleans,
// and keys that are not secret names, stay.
func TestScrubKeyedValues(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"json", `settings: {"db": {"password": "hunter2hunter2", "port": 5432}}`, `settings: {"db": {"password": "REDACTED", "port": 5432}}`},
		{"json escaped", `{"token":"ab\"cd"}`, `{"token":"REDACTED"}`},
		{"env dump", "HOME=/root\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\nPATH=/bin\n", "HOME=/root\nAWS_SECRET_ACCESS_KEY=REDACTED\nPATH=/bin\n"},
		{"args", "launch --model x api_key='abc def' max_new_tokens=128", "launch --model x api_key=REDACTED max_new_tokens=128"},
		{"ordinary json", `{"output_throughput": 95.1, "model_id": "meta-llama/Llama-3"}`, `{"output_throughput": 95.1, "model_id": "meta-llama/Llama-3"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Scrub(tc.in, nil)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, got, Scrub(got, nil), "scrubbing scrubbed text changes nothing")
		})
	}
}

// TestFromEnvFindsHeldCredentials: the credentials inside a value are
// scrubbed on their own too, so a benchmark that prints one is caught.
func TestFromEnvFindsHeldCredentials(t *testing.T) {
	got := FromEnv([]string{
		`APP_SETTINGS={"db":{"password":"hunter2hunter2"}}`,
		"GOPROXY=https://bot:pr0xyPass@goproxy.corp.example/,direct",
		"DB_CRED=credvalue1",
		"PATH=/usr/bin",
	})
	assert.ElementsMatch(t, []string{"hunter2hunter2", "pr0xyPass", "credvalue1"}, got)
}
