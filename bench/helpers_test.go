package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/record"
	"github.com/stretchr/testify/require"
)

// sampleParts returns the pieces of a file under testdata/ that holds
// several recorded outputs, each introduced by a "# source:" line (the
// line itself is dropped).
func sampleParts(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var parts []string
	var cur []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "# source:") {
			if len(cur) > 0 {
				parts = append(parts, strings.Join(cur, "\n"))
			}
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		parts = append(parts, strings.Join(cur, "\n"))
	}
	return parts
}

// parseText parses text in format and fails the test on error.
func parseText(t *testing.T, format, text string, opts Options) []record.Sample {
	t.Helper()
	samples, err := Parse(format, strings.NewReader(text), opts)
	require.NoError(t, err)
	return samples
}

// selected is one expected Select result.
type selected struct {
	sel, unit string
	want      float64
}

func requireSelected(t *testing.T, samples []record.Sample, want []selected) {
	t.Helper()
	for _, w := range want {
		got, err := Select(samples, w.sel, w.unit)
		require.NoError(t, err, "select %s %s", w.sel, w.unit)
		require.InDelta(t, w.want, got, 1e-9*max(1, w.want), "select %s %s", w.sel, w.unit)
	}
}

// errorCase is a named input that must fail to parse.
type errorCase struct {
	name    string
	format  string
	input   string
	opts    Options
	is      error    // the sentinel the error must wrap, or nil
	mention []string // texts the message must quote
}

func runErrorCases(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			samples, err := Parse(tc.format, strings.NewReader(tc.input), tc.opts)
			require.Error(t, err)
			require.Nil(t, samples)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			for _, m := range tc.mention {
				require.Contains(t, err.Error(), m)
			}
		})
	}
}
