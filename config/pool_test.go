package config

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePool(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want Pool
		err  string // the first error
	}{
		{name: "absent: the runner's defaults", want: Pool{}},
		{name: "both", yaml: "pool: {max_failures: 5, cooldown: 30m}\n", want: Pool{MaxFailures: 5, Cooldown: 30 * time.Minute}},
		{name: "zero failures", yaml: "pool: {max_failures: 0}\n", err: "perfbot.yaml:12: pool.max_failures: 0 must be at least 1"},
		{name: "bad cooldown", yaml: "pool: {cooldown: soon}\n", err: `perfbot.yaml:12: pool.cooldown: bad duration "soon"`},
		{name: "unknown key", yaml: "pool: {retries: 2}\n", err: `perfbot.yaml:12: pool.retries: unknown key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(minimal+tc.yaml), "/srv/perf/perfbot.yaml")
			if tc.err != "" {
				var pe *Error
				require.True(t, errors.As(err, &pe), "%v", err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.Pool)
		})
	}
}
