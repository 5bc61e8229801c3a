package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseRejectsValuesThatCannotBeMeant: values the parser used to take
// that no one means, each refused with the key and the limit.
func TestParseRejectsValuesThatCannotBeMeant(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"schedule every 0s", minimal + "schedule: '@every 0s'\n",
			`perfbot.yaml:12: schedule: "@every 0s" is more often than every 1m0s, the least interval between nightly cycles`},
		{"schedule every negative", minimal + "schedule: '@every -1h'\n",
			`perfbot.yaml:12: schedule: "@every -1h" is more often than every 1m0s, the least interval between nightly cycles`},
		{"schedule every second", minimal + "schedule: '@every 1s'\n",
			`perfbot.yaml:12: schedule: "@every 1s" is more often than every 1m0s, the least interval between nightly cycles`},
		{"negative timeout", minimal + "pool:\n  cooldown: -5m\n",
			`perfbot.yaml:13: pool.cooldown: duration "-5m" must be positive`},
		{"detect repeats huge", minimal + "detect:\n  repeats: 1000000000\n",
			"perfbot.yaml:13: detect.repeats: 1000000000 is more than 1000"},
		{"bisect repeats huge", minimal + "bisect:\n  repeats: 5000\n",
			"perfbot.yaml:13: bisect.repeats: 5000 is more than 1000"},
		{"hunk repeats huge", minimal + "bisect:\n  hunk_repeats: 5000\n",
			"perfbot.yaml:13: bisect.hunk_repeats: 5000 is more than 1000"},
		{"slots huge", minimal + "hosts:\n  - {name: local, kind: local, slots: 100000}\n",
			"perfbot.yaml:13: hosts[0].slots: 100000 is more than 256"},
		{"benchmark env value with NUL", minimal + "build:\n  - run: make\n    env: {GOFLAGS: \"-x\\0-y\"}\n",
			"perfbot.yaml:14: build[0].env.GOFLAGS: the value holds a NUL byte, which no environment variable can hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "perfbot.yaml")
			require.Error(t, err)
			var es Errors
			require.True(t, errors.As(err, &es), "error %T is not Errors", err)
			assert.Equal(t, tc.want, es[0].Error(), "all errors:\n%v", err)
		})
	}
}

// TestParseKeepsTheLimits: the limits themselves are taken.
func TestParseKeepsTheLimits(t *testing.T) {
	c, err := Parse([]byte(minimal+"schedule: '@every 1m'\ndetect:\n  repeats: 1000\nhosts:\n  - {name: local, kind: local, slots: 256}\n"), "perfbot.yaml")
	require.NoError(t, err)
	assert.Equal(t, "@every 1m", c.Schedule)
	assert.Equal(t, 1000, c.Detect.Repeats)
	assert.Equal(t, 256, c.Hosts[0].Slots)
}
