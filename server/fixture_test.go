package server_test

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/views"
)

// The populated store the dashboard tests read: 30 nights of two metrics
// on a branch that advances one commit a night, with an 8% regression of
// verify_tok_s at night 15 (commit 15, "communicator: ..."), which is
// bisected and filed, and a 10% improvement at night 24, acknowledged;
// the runs and fingerprints of the commits around them, and three jobs
// with their traces. Everything is deterministic: no clock, no random
// source, so rendered pages are golden.

const fixtureNights = 30

var fixtureT0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

func fixtureCommit(i int) string {
	sum := sha1.Sum([]byte(fmt.Sprintf("commit %d", i)))
	return hex.EncodeToString(sum[:])
}

var fixtureSubjects = map[int]string{
	15: "communicator: all-reduce through the one-shot path for every size",
	24: "attention: fuse the verify step's softmax into the kernel",
}

func fixtureSubject(i int) string {
	if s, ok := fixtureSubjects[i]; ok {
		return s
	}
	return fmt.Sprintf("engine: small change number %d", i)
}

// level is the true verify tok/s of commit i.
func fixtureLevel(i int) float64 {
	v := 1000.0
	if i >= 15 {
		v *= 0.92
	}
	if i >= 24 {
		v *= 1.10
	}
	return v
}

// noise is a fixed pattern of ±1%: the same store every time.
func fixtureNoise(night, rep int) float64 {
	return 1 + 0.01*math.Sin(float64(night*7+rep*3)+0.5)
}

const fixtureConfig = `repo:
  url: /srv/infer.git
  branch: main
build:
  - name: build
    run: go build ./...
benchmarks:
  - name: engine
    run: go test -run '^$' -bench . ./...
    format: gobench
metrics:
  - name: verify_tok_s
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/s
    better: higher
    primary: true
  - name: verify_ms
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: ms/verify
    better: lower
detect:
  min_effect: 3%
  repeats: 5
  warmup: 6
`

// fixture is a populated store: its views, and a Bot over it that
// queues and triages (service.OnStore: it measures nothing).
type fixture struct {
	*views.Views
	*service.Bot
}

// handler is the server over the fixture.
func (f *fixture) handler(opts server.Options) http.Handler {
	return server.New(f.Views, f.Bot, opts)
}

// populated returns the fixture over a new populated store.
func populated(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fixtureConfig), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	path := filepath.Join(dir, "perfbot.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	fillFixture(t, db)
	require.NoError(t, db.Close())
	db, err = store.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return &fixture{Views: views.New(cfg, db), Bot: service.OnStore(cfg, db, service.Options{})}
}

func fillFixture(t testing.TB, db *store.DB) {
	for i := 0; i < fixtureNights; i++ {
		require.NoError(t, db.PutCommit(record.Commit{Hash: fixtureCommit(i), Subject: fixtureSubject(i), Author: "Ada Lovelace",
			Date: fixtureT0.Add(time.Duration(i)*24*time.Hour - 6*time.Hour), Parents: parents(i)}))
	}
	state := record.NightlyState{Reference: fixtureCommit(0), Levels: map[string]float64{"verify_tok_s": 1000, "verify_ms": 12}}
	// The alerts the nightly cycles raised on the two changes, as its
	// detection placed them: the charts draw them.
	state.Alerts = map[string]record.Alert{}
	for _, a := range []record.Alert{
		{Metric: "verify_tok_s", Direction: record.Regression, DeltaPct: -8.928578831813095, Night: 16},
		{Metric: "verify_ms", Direction: record.Regression, DeltaPct: 9.803930494643499, Night: 16},
		{Metric: "verify_tok_s", Direction: record.Improvement, DeltaPct: 8.973667627575166, Night: 25},
		{Metric: "verify_ms", Direction: record.Improvement, DeltaPct: -8.234711947333262, Night: 25},
	} {
		a.Good, a.Bad = fixtureCommit(int(a.Night)-2), fixtureCommit(int(a.Night)-1)
		a.Decided, a.Decision = a.Night, record.DecisionAct
		state.Alerts[a.Key()] = a
	}
	for n := 0; n < fixtureNights; n++ {
		tip := n
		night := record.Night{Time: fixtureT0.Add(time.Duration(n) * 24 * time.Hour), Branch: "main", Tip: fixtureCommit(tip),
			Reference: fixtureCommit(0), New: []string{fixtureCommit(tip)}, Status: record.StatusOK, Metrics: map[string]record.NightMetric{}}
		var tok, ms []float64
		for r := 0; r < 5; r++ {
			v := fixtureLevel(tip) * fixtureNoise(n, r)
			tok = append(tok, v)
			ms = append(ms, 12*1000/v)
		}
		night.Metrics["verify_tok_s"] = record.NightMetric{Tip: tok, Level: 1000, Values: tok}
		night.Metrics["verify_ms"] = record.NightMetric{Tip: ms, Level: 12, Values: ms}
		require.NoError(t, db.AddNight(&night, state))
	}
	// Runs of the commits around the two changes.
	id := 0
	for _, i := range []int{14, 15, 23, 24} {
		for r := 0; r < 6; r++ {
			v := fixtureLevel(i) * fixtureNoise(i, r+10)
			env := map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring", "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7"}
			if i == 15 {
				env["NCCL_P2P_LEVEL"] = "SYS"
			}
			run := &record.Run{SpecHash: "spec1", Target: record.Target{Commit: fixtureCommit(i)}, Host: "gpu1", Status: record.StatusOK,
				Started: fixtureT0.Add(time.Duration(i)*24*time.Hour + time.Duration(id)*time.Minute), Duration: 92 * time.Second,
				Fingerprint: record.Fingerprint{Host: "gpu1", OS: "linux", Kernel: "6.8.0", CPUModel: "AMD EPYC 9654", CPUs: 192, GoVersion: "go1.26.0", Env: env,
					GPUs: []record.GPU{{Index: 0, Name: "NVIDIA H200", Driver: "570.86", SMClockMHz: 1980, MemClockMHz: 3201, TemperatureC: 41, PowerW: 310}}},
				Values: map[string]float64{"verify_tok_s": v, "verify_ms": 12 * 1000 / v}}
			run.TargetKey = run.Target.Key()
			_, err := db.AddRun(run)
			require.NoError(t, err)
			id++
		}
	}
	failed := &record.Run{SpecHash: "spec1", Target: record.Target{Commit: fixtureCommit(16)}, Host: "gpu2", Status: record.StatusBuildFailed,
		Error: "build: exit status 1", Started: fixtureT0.Add(16*24*time.Hour + time.Hour), Duration: 41 * time.Second}
	failed.TargetKey = failed.Target.Key()
	_, err := db.AddRun(failed)
	require.NoError(t, err)

	regression := record.Finding{Created: fixtureT0.Add(16 * 24 * time.Hour), Repo: "/srv/infer.git", Outcome: record.OutcomeCulprit,
		Metric: "verify_tok_s", Unit: "tok/s", Direction: record.Regression, Confidence: 0.997, State: record.StateFiled,
		Good:       record.End{Commit: record.Commit{Hash: fixtureCommit(14), Subject: fixtureSubject(14)}, N: 6, Median: 1000, Interval: record.Interval{Lo: 994, Hi: 1006}},
		Bad:        record.End{Commit: record.Commit{Hash: fixtureCommit(15), Subject: fixtureSubject(15)}, N: 6, Median: 920, Interval: record.Interval{Lo: 915, Hi: 926}},
		Culprits:   []record.Culprit{{Commit: record.Commit{Hash: fixtureCommit(15), Subject: fixtureSubject(15)}, Confidence: 0.997, Effect: record.Effect{Pct: -8.0, Interval: record.Interval{Lo: -8.9, Hi: -7.1}}}},
		Components: []string{"communicator"}, Issue: 42, IssueURL: "https://github.com/acme/infer/issues/42"}
	regression.ID = regression.DerivedID()
	improvement := record.Finding{Created: fixtureT0.Add(25 * 24 * time.Hour), Repo: "/srv/infer.git", Outcome: record.OutcomeCulprit,
		Metric: "verify_tok_s", Unit: "tok/s", Direction: record.Improvement, Confidence: 0.99, State: record.StateKept,
		Good:       record.End{Commit: record.Commit{Hash: fixtureCommit(23), Subject: fixtureSubject(23)}, N: 6, Median: 920, Interval: record.Interval{Lo: 914, Hi: 925}},
		Bad:        record.End{Commit: record.Commit{Hash: fixtureCommit(24), Subject: fixtureSubject(24)}, N: 6, Median: 1012, Interval: record.Interval{Lo: 1005, Hi: 1018}},
		Culprits:   []record.Culprit{{Commit: record.Commit{Hash: fixtureCommit(24), Subject: fixtureSubject(24)}, Confidence: 0.99, Effect: record.Effect{Pct: 10.0, Interval: record.Interval{Lo: 9.1, Hi: 10.9}}}},
		Components: []string{"attention"},
		Triage:     &record.TriageNote{State: record.TriageAcknowledged, Note: "intended: the fused kernel", Time: fixtureT0.Add(26 * 24 * time.Hour)}}
	improvement.ID = improvement.DerivedID()
	for _, f := range []record.Finding{regression, improvement} {
		require.NoError(t, db.PutFinding(f))
	}

	params, _ := json.Marshal(map[string]any{"metric": "verify_tok_s", "good": fixtureCommit(14), "bad": fixtureCommit(15)})
	for _, j := range []struct {
		job   store.Job
		trace []string
	}{
		{store.Job{ID: "alert-1f2e3d4c5b6a", Kind: record.JobAlert, Status: record.JobDone, Params: params,
			Created: fixtureT0.Add(15*24*time.Hour + time.Hour), Updated: fixtureT0.Add(15*24*time.Hour + 3*time.Hour)},
			[]string{"alert verify_tok_s regression -8.0% between " + fixtureCommit(14)[:10] + " and " + fixtureCommit(15)[:10],
				"verify ends: good 1000 [994, 1006] (6 runs), bad 920 [915, 926] (6 runs)",
				"culprit " + fixtureCommit(15)[:10] + " with confidence 0.997 after 14 runs",
				"filed as https://github.com/acme/infer/issues/42"}},
		{store.Job{ID: "bisect-9a8b7c6d5e4f", Kind: record.JobBisect, Status: record.JobRunning, Params: params,
			Created: fixtureT0.Add(29*24*time.Hour + time.Hour), Updated: fixtureT0.Add(29*24*time.Hour + 2*time.Hour)},
			[]string{"bisect " + fixtureCommit(20)[:10] + ".." + fixtureCommit(29)[:10] + " on verify_tok_s", "probe 3: commit " + fixtureCommit(25)[:10] + " (posterior 0.71 at it)"}},
		{store.Job{ID: "nightly-0a1b2c3d4e5f", Kind: record.JobNightly, Status: record.JobQueued,
			Created: fixtureT0.Add(30 * 24 * time.Hour), Updated: fixtureT0.Add(30 * 24 * time.Hour)}, nil},
	} {
		require.NoError(t, db.PutJob(j.job))
		for k, line := range j.trace {
			require.NoError(t, db.AppendTrace(j.job.ID, store.TraceLine{Time: j.job.Created.Add(time.Duration(k) * 7 * time.Minute), Text: line}))
		}
	}
}

func parents(i int) []string {
	if i == 0 {
		return nil
	}
	return []string{fixtureCommit(i - 1)}
}
