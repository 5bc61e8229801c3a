package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunPrintsEveryRow(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-trials", "2", "-seed", "3"}, &out, &errOut))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// A title, a blank line, the header, then scenarios × CVs × sizes.
	require.Len(t, lines, 3+len(scenarios)*2*4)
	assert.Contains(t, lines[2], "tests mean")
	for _, sc := range scenarios {
		assert.Equal(t, 8, strings.Count(out.String(), sc.name+" "), sc.name)
	}
	// The simplest row is found exactly even in two trials.
	assert.Regexp(t, `one culprit\s+2%\s+8\s+100\.0%`, out.String())

	var again bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-trials", "2", "-seed", "3"}, &again, &errOut))
	assert.Equal(t, out.String(), again.String(), "the seed decides the table")
}

func TestRunRejectsBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.ErrorContains(t, run(context.Background(), []string{"-trials", "0"}, &out, &errOut), "-trials 0")
	assert.Error(t, run(context.Background(), []string{"-bogus"}, &out, &errOut))
}
