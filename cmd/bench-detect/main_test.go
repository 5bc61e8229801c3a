package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunPrintsTable(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-trials", "20", "-nights", "200", "-rows", "CV 2%"}, &out, &errOut)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// The quiet rows and the seven drop rows at CV 2%, each with four
	// detectors, and a line for each target.
	detectors := []string{"perfbot detect", "perfbot watch", "perfherder t-test", "otava e-divisive"}
	require.Len(t, lines, 2+2+9*len(detectors)+1+len(targets), out.String())
	assert.Equal(t, "20 series per row (quiet: 200 nights each), 5 repeats a night, seed 1", lines[0])
	assert.Equal(t, "| series | detector | false alarms /1000 nights | detected | nights to alert: mean | p90 | change night right | in First…Last |", lines[2])
	for i, name := range detectors {
		assert.True(t, strings.HasPrefix(lines[4+i], "| quiet CV 2% | "+name+" | "), lines[4+i])
		assert.True(t, strings.HasPrefix(lines[8+i], "| 3% drop CV 2% | "+name+" | - | "), lines[8+i])
		assert.True(t, strings.HasPrefix(lines[20+i], "| quiet CV 2%, first 20 nights | "+name+" | "), lines[20+i])
		assert.True(t, strings.HasPrefix(lines[24+i], "| 5% drop on night 2, CV 2% | "+name+" | - | "), lines[24+i])
	}
	// Perfherder decides a night when its forward window of 12 is full.
	assert.Contains(t, lines[18], "| 10% drop CV 2% | perfherder t-test | - | 100.0% | 12.00 | 12 | 100.0% | - |")
	for i, tg := range targets {
		assert.True(t, strings.HasPrefix(lines[len(lines)-len(targets)+i], "target, CV 2%: "+tg.what+": "), lines[len(lines)-len(targets)+i])
	}
	// A target missed (20 series a row are few) exits 1.
	assert.Equal(t, strings.Contains(out.String(), "NOT MET"), code == 1, errOut.String())
}

func TestRunIsSeeded(t *testing.T) {
	args := []string{"-trials", "5", "-nights", "150", "-rows", "drop", "-seed", "7"}
	var a, b, errOut bytes.Buffer
	codeA := run(context.Background(), args, &a, &errOut)
	codeB := run(context.Background(), args, &b, &errOut)
	assert.Equal(t, a.String(), b.String())
	assert.Equal(t, codeA, codeB)
}

func TestRunBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-trials", "0"}, &out, &errOut))
	assert.Equal(t, 2, run(context.Background(), []string{"-nights", "50"}, &out, &errOut))
	assert.Equal(t, 2, run(context.Background(), []string{"-nosuchflag"}, &out, &errOut))
}

func TestPerfherderWeights(t *testing.T) {
	// The nearest night weighs 1, the farthest 1/n: (1·10 + ½·20)/(1+½).
	mean, variance, n := weighted([][]float64{{10}, {20}})
	assert.InDelta(t, 40.0/3, mean, 1e-12)
	assert.Equal(t, 2, n)
	assert.InDelta(t, (10-40.0/3)*(10-40.0/3)+(20-40.0/3)*(20-40.0/3), variance, 1e-9)
}
