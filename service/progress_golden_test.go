package service

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/minimize"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestProgressLineFormat holds the progress lines of every phase in a
// golden file: a reader of a long job's stderr (or trace) sees these.
func TestProgressLineFormat(t *testing.T) {
	const c = "3f2a9c1e00aa"
	lines := []string{
		runLine("measure", "3f2a9c1e00", 2, 5, "verify_tok_s", 154412.5, true),
		runLine("measure", "3f2a9c1e00", 3, 5, "verify_tok_s", 0, false),
		runLine("night", "tip 3f2a9c1e00", 1, 5, "verify_tok_s", 98.76, true),
		probeLine(bisect.ProbeEvent{Phase: bisect.PhaseVerify, Commit: c, Index: 0, N: 3, Median: 1012.4, Status: bisect.StatusOK}),
		probeLine(bisect.ProbeEvent{Phase: bisect.PhaseSurvey, Commit: c, Index: 40, N: 1, Status: bisect.StatusOK}),
		probeLine(bisect.ProbeEvent{Phase: bisect.PhaseBisect, Commit: c, Index: 17, N: 4, Median: 861.2, Status: bisect.StatusOK, Best: "a1b2c3d4e5f6", Posterior: 0.8123}),
		probeLine(bisect.ProbeEvent{Phase: bisect.PhaseBisect, Commit: c, Index: 18, Status: bisect.StatusBroken}),
		probeLine(bisect.ProbeEvent{Phase: bisect.PhaseResidual, Commit: c, Index: 30, N: 3, Median: 860.9, Status: bisect.StatusInfra}),
		probeLine(bisect.ProbeEvent{Phase: bisect.PhaseConfirm, Commit: c, Index: -1, N: 7, Median: 862, Status: bisect.StatusOK}),
		stepLine(minimize.StepEvent{Phase: minimize.PhaseEnds, End: "good", N: 8, Median: 1000.2}),
		stepLine(minimize.StepEvent{Phase: minimize.PhaseEnds, Set: []string{"comm/a.go:31", "attn/b.go:6"}, End: "bad", N: 8, Median: 900.1}),
		stepLine(minimize.StepEvent{Phase: minimize.PhaseTest, Set: []string{"comm/a.go:31"}, N: 3, Median: 901.5, PBad: 0.97}),
		stepLine(minimize.StepEvent{Phase: minimize.PhaseTest, Set: []string{"attn/b.go:6"}, Broken: true}),
		stepLine(minimize.StepEvent{Phase: minimize.PhaseConfirm, Set: []string{"NCCL_PROTO", "NCCL_ALGO", "OMP_NUM_THREADS", "CUDA_DEVICE_MAX_CONNECTIONS"}, N: 12, Median: 88.8, PBad: 0.9991}),
		stepLine(minimize.StepEvent{Phase: minimize.PhaseEffect, Set: []string{"attn/b.go:6"}, N: 4, Median: 1001, PBad: 0.0001}),
		testLine(minimize.TestEvent{Test: minimize.Test{Set: []string{"comm/a.go:31"}, Side: minimize.SideApply, N: 5, Median: 900.3, PBad: 0.9995, Outcome: minimize.OutcomeBad}}),
		testLine(minimize.TestEvent{Test: minimize.Test{Set: []string{"attn/b.go:6"}, Side: minimize.SideRevert, N: 60, Median: 950, PBad: 0.5, Outcome: minimize.OutcomeUnresolved}}),
	}
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "progress.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}
