package service

import (
	"regexp"
	"strings"
	"testing"
)

var fuzzEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// FuzzParseEnv feeds the env-file parser arbitrary bytes: it never panics,
// an error names the file, and what it accepts holds only variable names
// and values without NUL.
func FuzzParseEnv(f *testing.F) {
	for _, seed := range []string{
		"NCCL_PROTO=LL\nNCCL_ALGO=Ring\n",
		"# comment\n\nexport HF_TOKEN='abc'\n",
		"A=\"quoted value\"\nB=x=y\n",
		"\ufeffA=1\n", "A;B=1\n", "1BAD=x\n", "A=1\nA=2\n", "A=\x00\n", "=x\n", "A\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := ParseEnv("good.env", data)
		if err != nil {
			if !strings.Contains(err.Error(), "good.env") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for k, v := range env {
			if !fuzzEnvName.MatchString(k) {
				t.Fatalf("accepted name %q", k)
			}
			if strings.ContainsRune(v, 0) {
				t.Fatalf("accepted a NUL in %s", k)
			}
		}
	})
}
