package views

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store/storetest"
)

// openViews returns the views of a new store in a temporary directory,
// read with the default configuration.
func openViews(t *testing.T) *Views {
	t.Helper()
	cfg, err := config.Default()
	require.NoError(t, err)
	return New(cfg, storetest.Open(t))
}

// culpritFinding is a finding with one culprit, the commit, at the
// confidence.
func culpritFinding(commit string, confidence float64) record.Finding {
	c := record.Commit{Hash: commit, Subject: "communicator: prefer symmetric memory allreduce", Author: "Mei Lin", Date: time.Date(2026, 11, 20, 14, 0, 0, 0, time.UTC)}
	f := record.Finding{
		Created: time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC), Repo: "/srv/infer",
		Outcome: record.OutcomeCulprit, Metric: "verify_tok_s", Unit: "tok/s", Direction: record.Regression,
		Good:       record.End{Commit: record.Commit{Hash: strings.Repeat("a", 40)}, N: 10, Median: 100, Interval: record.Interval{Lo: 99, Hi: 101}},
		Bad:        record.End{Commit: c, N: 10, Median: 92, Interval: record.Interval{Lo: 91, Hi: 93}},
		Culprits:   []record.Culprit{{Commit: c, Confidence: confidence, Effect: record.Effect{Pct: -8, Interval: record.Interval{Lo: -9, Hi: -7}}}},
		Components: []string{"communicator"},
		Confidence: confidence,
		State:      record.StateKept,
	}
	f.ID = f.Fingerprint()
	return f
}
