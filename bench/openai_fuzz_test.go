package bench

import (
	"testing"
)

func FuzzOpenAI(f *testing.F) {
	fuzzSeeds(f, []string{"perfbot_loadgen.txt"}, loadgenReport, loadgenReport+"\n"+loadgenReport,
		`{"tool":"perfbot-loadgen","metrics":{"completed":6,"failed":2},"errors":{"x":2}}`,
		`{"tool":"perfbot-loadgen","metrics":{"completed":1e999}}`, `{"tool":"perfbot-loadgen","metrics":{"":1}}`,
		`{"tool":"perfbot-loadgen","metrics":null}`, `{"tool":"perfbot-loadgen"`)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, "openai", data, nil)
		checkParse(t, "openai", data, Options{"allow_failed": "3"})
	})
}
