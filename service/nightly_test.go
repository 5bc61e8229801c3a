package service

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner/runnertest"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/views"
)

// nights scripts the scheduled service over a real repository whose
// branch advances night by night, measured on a fake host whose speed
// changes from night to night as a shared machine's does.
type nights struct {
	t       *testing.T
	repo    *gitopstest.Builder
	commits []string
	host    *runnertest.Fake
	cfg     *config.Config
	now     time.Time

	mu    sync.Mutex
	speed float64 // the host's speed tonight
	cv    float64 // the noise of a run
	rng   *rand.Rand
}

// newNights builds n numbered commits whose true tok/s is level(i) and
// scripts each to print it, times tonight's host speed, with 1% noise (cv,
// which a test may change before the first night). Commits for which
// broken(i) fail to build.
func newNights(t *testing.T, n int, level func(i int) float64, broken func(i int) bool) *nights {
	t.Helper()
	return newNightsDetecting(t, n, level, broken, `detect:
  min_effect: 3%
  repeats: 5
  missing_nights: 3
  warmup: 5
`)
}

// newNightsDetecting is newNights with the config's detect section (""
// for the defaults).
func newNightsDetecting(t *testing.T, n int, level func(i int) float64, broken func(i int) bool, detect string) *nights {
	t.Helper()
	repo := gitopstest.NewBuilder(t)
	commits := repo.Numbered(n)
	h := &nights{t: t, repo: repo, commits: commits, speed: 1, cv: 0.01, rng: rand.New(rand.NewSource(7)),
		now: time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)}
	h.host = &runnertest.Fake{Commits: map[string]runnertest.FakeCommit{}, Trees: 4}
	for i, c := range commits {
		if broken != nil && broken(i) {
			h.host.Commits[c] = runnertest.FakeCommit{BuildFails: true}
			continue
		}
		h.host.Commits[c] = runnertest.FakeCommit{Output: func(int) string {
			h.mu.Lock()
			defer h.mu.Unlock()
			v := level(i) * h.speed * (1 + h.cv*h.rng.NormFloat64())
			return fmt.Sprintf("BenchmarkVerifyStep-2  10  1000 ns/op  %.3f tok/s\n", v)
		}}
	}
	dir := t.TempDir()
	cfg, err := config.Parse(fmt.Appendf(nil, `repo:
  url: %s
  branch: main
build:
  - name: build
    run: go build ./...
benchmarks:
  - name: engine
    run: ./bench
    format: gobench
metrics:
  - name: verify_tok_s
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/s
    primary: true
%s`, repo.Dir, detect), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	cfg.IssuesDir = filepath.Join(dir, "issues")
	h.cfg = cfg
	return h
}

func (h *nights) open() *Bot {
	h.t.Helper()
	b, err := Open(context.Background(), h.cfg, Options{Host: h.host, Clock: func() time.Time { return h.now }})
	require.NoError(h.t, err)
	h.t.Cleanup(func() { b.Close() })
	return b
}

// night moves the branch to commit i, sets tonight's host speed, runs
// one cycle and works off its jobs.
func (h *nights) night(b *Bot, i int, speed float64) *NightReport {
	h.t.Helper()
	h.repo.Git("update-ref", "refs/heads/main", h.commits[i])
	h.mu.Lock()
	h.speed = speed
	h.mu.Unlock()
	h.now = h.now.Add(24 * time.Hour)
	ctx := context.Background()
	rep, err := b.Nightly(ctx)
	require.NoError(h.t, err)
	require.NoError(h.t, b.Drain(ctx))
	return rep
}

// tips are the commits of the nights: five quiet nights on the first
// commit (detection learns the noise), then every fourth commit from
// first on.
func (h *nights) tips(first int) []int {
	tips := []int{0, 0, 0, 0, 0}
	for i := first; i < len(h.commits); i += 4 {
		tips = append(tips, i)
	}
	return tips
}

// speeds is a host that runs up to 30% slower or 25% faster from one
// night to the next.
var speeds = []float64{1, 0.7, 1.25, 0.85, 1.1, 0.75, 1, 1.2}

func TestNightlyFindsTheInjectedChanges(t *testing.T) {
	level := func(i int) float64 {
		v := 1000.0
		if i >= 13 {
			v *= 0.92 // the regression
		}
		if i >= 37 {
			v *= 1.10 // an improvement, once the new level has formed
		}
		return v
	}
	for _, tc := range []struct {
		name         string
		improvements string
		culprits     func(commits []string) map[string]record.Direction
		noted        int // improvements noted with a bisect command instead of bisected
	}{
		{
			name:         "improvements bisected",
			improvements: config.ImprovementsBisect,
			culprits: func(c []string) map[string]record.Direction {
				return map[string]record.Direction{c[13]: record.Regression, c[37]: record.Improvement}
			},
		},
		{
			name:         "improvements noted",
			improvements: config.ImprovementsNote,
			culprits: func(c []string) map[string]record.Direction {
				return map[string]record.Direction{c[13]: record.Regression}
			},
			noted: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newNights(t, 49, level, nil)
			h.cfg.Detect.Improvements = tc.improvements
			b := h.open()
			alerts := 0
			var noted []AlertNote
			var changes []views.ChangePoint // the alerts raised, as the dashboard should draw them
			for n, i := range h.tips(0) {
				rep := h.night(b, i, speeds[n%len(speeds)])
				require.Equal(t, record.StatusOK, rep.Night.Status)
				for _, a := range rep.Alerts {
					if a.Note != "acted on before" {
						t.Logf("night %d: %+v", n+1, a)
						alerts++
						changes = append(changes, views.ChangePoint{Night: a.Night, Direction: a.Direction, DeltaPct: a.DeltaPct, Good: a.Good, Bad: a.Bad})
					}
					if a.Unbisected != nil {
						noted = append(noted, a)
					}
				}
			}
			require.Equal(t, 2, alerts, "one alert per injected change, no false alarm")
			require.Len(t, noted, tc.noted)
			for _, a := range noted {
				require.Equal(t, record.Improvement, a.Direction)
				require.Empty(t, a.Job)
				// The range holds the improvement, and the command
				// bisects it.
				require.Less(t, index(t, h.commits, a.Unbisected.Good), 37)
				require.GreaterOrEqual(t, index(t, h.commits, a.Unbisected.Bad), 37)
				require.Equal(t, fmt.Sprintf("perfbot bisect --good %s --bad %s --metric verify_tok_s --direction improvement",
					a.Unbisected.Good[:10], a.Unbisected.Bad[:10]), a.BisectCommand())
			}

			fs, err := b.Store.Findings()
			require.NoError(t, err)
			culprits := map[string]record.Direction{}
			filed := 0
			for _, f := range fs {
				for _, c := range f.Culprits {
					culprits[c.Commit.Hash] = f.Direction
				}
				if f.State == record.StateFiled {
					filed++
				}
			}
			require.Equal(t, tc.culprits(h.commits), culprits)
			require.Equal(t, 1, filed, "the regression is filed, the improvement is not")

			// The dashboard draws the alerts the nights raised, with what was
			// decided and what the jobs found.
			d, err := views.New(b.Config, b.Store).Dashboard(context.Background())
			require.NoError(t, err)
			require.Len(t, d.Series[0].Changes, len(changes))
			for i, c := range d.Series[0].Changes {
				want := changes[i]
				want.Decision, want.Outcome = record.DecisionAct, record.AlertConfirmed
				if c.Direction == record.Improvement && tc.noted > 0 {
					want.Decision, want.Outcome = record.DecisionNoted, ""
				}
				require.Equal(t, want, c)
			}
		})
	}
}

// index is the position of a commit in the history.
func index(t *testing.T, commits []string, hash string) int {
	t.Helper()
	for i, c := range commits {
		if c == hash {
			return i
		}
	}
	t.Fatalf("commit %s is not in the history", hash)
	return -1
}

// A metric's own threshold (metrics[].min_effect) overrides
// detect.min_effect: an 8% step raises no alert on a metric that alerts
// from 20% only.
func TestNightlyMetricThreshold(t *testing.T) {
	h := newNights(t, 30, func(i int) float64 {
		if i >= 13 {
			return 920
		}
		return 1000
	}, nil)
	h.cfg.Detect.MinEffects = map[string]float64{"verify_tok_s": 0.20}
	b := h.open()
	tips := append(h.tips(0), len(h.commits)-1, len(h.commits)-1)
	for n, i := range tips {
		rep := h.night(b, i, speeds[n%len(speeds)])
		require.Empty(t, rep.Alerts, "night %d", n+1)
	}
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	require.Empty(t, fs)
}

// No blind weeks: a branch whose tip drops 8% (2% noise a run) on its
// eighth night, watched with the default detection (no warmup set), is
// alerted that night or the next from the tip's runs beside the
// reference's, bisected to its culprit and filed once, in 14 nights.
func TestNightlyAlertsInTheFirstNights(t *testing.T) {
	const culprit = 7 // the eighth night's tip
	h := newNightsDetecting(t, 14, func(i int) float64 {
		if i >= culprit {
			return 920
		}
		return 1000
	}, nil, "")
	h.cv = 0.02
	b := h.open()
	var alerted []int
	for n := range 14 {
		for _, a := range h.night(b, n, speeds[n%len(speeds)]).Alerts {
			t.Logf("night %d: %+v", n+1, a)
			if a.Note != "acted on before" {
				alerted = append(alerted, n+1)
			}
		}
	}
	require.Len(t, alerted, 1, "one alert")
	require.Contains(t, []int{8, 9}, alerted[0], "alerted on the eighth night or the ninth")
	require.Equal(t, []string{h.commits[culprit]}, culpritsOf(t, b))
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	require.Len(t, fs, 1)
	require.Equal(t, record.StateFiled, fs[0].State)
}

func TestNightlyQuietHistoryRaisesNothing(t *testing.T) {
	h := newNights(t, 25, func(int) float64 { return 1000 }, nil)
	b := h.open()
	for n := 0; n < 24; n++ {
		rep := h.night(b, n, speeds[n%len(speeds)])
		require.Empty(t, rep.Alerts, "night %d", n+1)
	}
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	require.Empty(t, fs)
	nights, err := b.Store.Nights()
	require.NoError(t, err)
	require.Len(t, nights, 24)
	require.Equal(t, h.commits[0], nights[23].Reference, "the first tip stays the reference")
}

func TestNightlyFollowsAForcePushedBranch(t *testing.T) {
	h := newNights(t, 12, func(int) float64 { return 1000 }, nil)
	b := h.open()
	for i := 0; i < 8; i++ {
		h.night(b, i, speeds[i])
	}
	// The branch is rewritten from commit 5: commits 6 and 7 leave it and
	// a new line of commits, one of which is 9% slower, replaces them.
	left := h.commits[7]
	h.repo.Git("checkout", "-q", "-f", "-b", "rewrite", h.commits[5])
	rewritten := h.repo.Numbered(4)
	for _, c := range rewritten {
		v := 1000.0
		if c != rewritten[0] {
			v = 910
		}
		h.host.Commits[c] = runnertest.FakeCommit{Output: func(int) string {
			return fmt.Sprintf("BenchmarkVerifyStep-2  10  1000 ns/op  %.3f tok/s\n", v*(1+0.005*h.rng.NormFloat64()))
		}}
	}
	h.repo.Git("update-ref", "refs/heads/main", rewritten[0])
	h.commits = append(h.commits[:6], rewritten...)

	rep := h.night(b, 6, 1)
	require.True(t, rep.Night.Rewritten)
	require.Equal(t, []string{rewritten[0]}, rep.Night.New, "new commits start after the fork point")
	for i := 7; i < len(h.commits); i++ {
		h.night(b, i, 1)
	}
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	require.Len(t, fs, 1)
	require.Equal(t, rewritten[1], fs[0].Culprits[0].Commit.Hash, "bisected on the new first-parent chain")

	// The runs of the commits that left the branch are kept.
	runs, err := b.Store.Runs(store.RunFilter{Commit: left})
	require.NoError(t, err)
	require.NotEmpty(t, runs)
}

func TestNightlyBrokenTipBecomesAFinding(t *testing.T) {
	h := newNights(t, 12, func(int) float64 { return 1000 }, func(i int) bool { return i >= 4 })
	b := h.open()
	var missing []string
	for i := 0; i < 10; i++ {
		rep := h.night(b, i, 1)
		if i >= 4 {
			require.Equal(t, record.StatusBuildFailed, rep.Night.Status)
		}
		missing = append(missing, rep.Missing...)
	}
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	require.Len(t, fs, 1, "one finding for the whole broken stretch")
	require.Equal(t, record.OutcomeBuildBroken, fs[0].Outcome)
	require.Equal(t, h.commits[4], fs[0].Bad.Commit.Hash)
	require.Equal(t, h.commits[3], fs[0].Good.Commit.Hash)
	require.Equal(t, record.StateFiled, fs[0].State)
	require.Len(t, fs[0].Probes, 3, "filed on the third night without data")
	require.NotEmpty(t, missing)
}

// On a host whose speed flips between two states a third apart from one
// run to the next, detect.estimator: best (the tip's best run against the
// reference's) still finds a regression and raises nothing else.
func TestNightlyBestOfABimodalHost(t *testing.T) {
	level := func(i int) float64 {
		if i >= 13 {
			return 920
		}
		return 1000
	}
	h := newNights(t, 25, level, nil)
	h.cfg.Detect.Estimator = config.EstimatorBest
	for i, c := range h.commits {
		h.host.Commits[c] = runnertest.FakeCommit{Output: func(int) string {
			h.mu.Lock()
			defer h.mu.Unlock()
			v := level(i) * (1 + 0.01*h.rng.NormFloat64())
			if h.rng.Float64() < 0.4 {
				v *= 0.65 // the slow state
			}
			return fmt.Sprintf("BenchmarkVerifyStep-2  10  1000 ns/op  %.3f tok/s\n", v)
		}}
	}
	b := h.open()
	tips := []int{0, 0, 0, 0, 0, 0, 0, 0}
	for i := 2; i < len(h.commits); i += 2 {
		tips = append(tips, i)
	}
	var alerts []AlertNote
	for _, i := range tips {
		for _, a := range h.night(b, i, 1).Alerts {
			if a.Note != "acted on before" {
				alerts = append(alerts, a)
			}
		}
	}
	require.Len(t, alerts, 1, "%+v", alerts)
	require.Equal(t, record.Regression, alerts[0].Direction)
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	require.Len(t, fs, 1)
	require.Equal(t, h.commits[13], fs[0].Culprits[0].Commit.Hash)
}

// A night that samples one of its new commits places the change between
// two measured commits of one night: the alert's range is half a night's.
func TestNightlySampledCommitNarrowsTheRange(t *testing.T) {
	level := func(i int) float64 {
		if i >= 23 {
			return 920
		}
		return 1000
	}
	h := newNights(t, 41, level, nil)
	h.cfg.Detect.Sample = 1
	b := h.open()
	tips := h.tips(4)
	var alerts []AlertNote
	for n, i := range tips {
		rep := h.night(b, i, speeds[n%len(speeds)])
		if n >= 5 {
			// Commits i-3..i are new; the middle of the three before the tip
			// is sampled.
			require.Len(t, rep.Night.Sampled, 1, "night %d", n+1)
			require.Equal(t, h.commits[i-2], rep.Night.Sampled[0].Commit, "night %d", n+1)
			require.Len(t, rep.Night.Sampled[0].Metrics["verify_tok_s"].Values, 5)
		}
		for _, a := range rep.Alerts {
			if a.Note != "acted on before" {
				alerts = append(alerts, a)
			}
		}
	}
	require.Len(t, alerts, 1, "%+v", alerts)
	// Commit 23 lies between the sampled commit 22 and the tip 24.
	require.Equal(t, h.commits[22], alerts[0].Good)
	require.Equal(t, h.commits[24], alerts[0].Bad)
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	require.Len(t, fs, 1)
	require.Equal(t, h.commits[23], fs[0].Culprits[0].Commit.Hash)
}

func TestPickSample(t *testing.T) {
	fresh := []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "tip"}
	for _, tc := range []struct {
		name  string
		fresh []string
		n     int
		want  []string
	}{
		{"none asked", fresh, 0, nil},
		{"only the tip is new", []string{"tip"}, 2, nil},
		{"one of seven is the middle", fresh, 1, []string{"c4"}},
		{"two of seven", fresh, 2, []string{"c2", "c5"}},
		{"more than there are", []string{"c1", "c2", "tip"}, 5, []string{"c1", "c2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, pickSample(tc.fresh, tc.n))
		})
	}
}

// A tip whose runs on its night came out 15% slow (this host's builds can
// land a third apart) raises an alert that its bisection refutes; the
// night then leaves the series, and a real regression two nights later is
// alerted and bisected instead of vanishing into the level the outlier
// began.
func TestNightlyRefutedAlertLeavesTheSeries(t *testing.T) {
	const outlier, culprit = 6, 10
	h := newNights(t, 21, func(i int) float64 {
		if i >= culprit {
			return 920
		}
		return 1000
	}, nil)
	slow := h.host.Commits[h.commits[outlier]].Output
	h.host.Commits[h.commits[outlier]] = runnertest.FakeCommit{Output: func(n int) string {
		out := slow(n)
		if n < 5 { // its night's runs only
			var v float64
			fmt.Sscanf(strings.Fields(out)[4], "%g", &v)
			return fmt.Sprintf("BenchmarkVerifyStep-2  10  1000 ns/op  %.3f tok/s\n", 0.85*v)
		}
		return out
	}}
	b := h.open()
	tips := []int{0, 0, 0, 0, 0, 0}
	for i := 2; i < len(h.commits); i += 2 {
		tips = append(tips, i)
	}
	for _, i := range tips {
		h.night(b, i, 1)
	}
	require.Equal(t, []string{h.commits[culprit]}, culpritsOf(t, b))
	// The alert jobs wrote what they found where the nights read it.
	state, err := b.Store.NightlyState()
	require.NoError(t, err)
	outcomes := map[record.AlertOutcome]int{}
	for _, a := range state.Alerts {
		outcomes[a.Outcome]++
	}
	require.Equal(t, map[record.AlertOutcome]int{record.AlertRefuted: 1, record.AlertConfirmed: 1}, outcomes)
}

// culpritsOf lists the culprit commits of the stored findings.
func culpritsOf(t *testing.T, b *Bot) []string {
	t.Helper()
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	var culprits []string
	for _, f := range fs {
		for _, c := range f.Culprits {
			culprits = append(culprits, c.Commit.Hash)
		}
	}
	return culprits
}

// An alert placed on a quiet night (its tip the night before's) is the
// host's change only when every night it may lie on has that one commit.
func TestActOnAQuietNight(t *testing.T) {
	h := newNights(t, 6, func(int) float64 { return 1000 }, nil)
	b := h.open()
	ctx := context.Background()
	c0, c4 := h.commits[0], h.commits[4]
	act, err := b.actOn(ctx, AlertNote{Metric: "verify_tok_s", Direction: record.Regression, Good: c0, Bad: c0}, 7)
	require.NoError(t, err)
	require.Empty(t, act.job)
	require.Contains(t, act.note, "the host, not the code, changed")
	act, err = b.actOn(ctx, AlertNote{Metric: "verify_tok_s", Direction: record.Regression, Good: c0, Bad: c0, wideGood: c0, wideBad: c4}, 7)
	require.NoError(t, err)
	require.NotEmpty(t, act.job, "the wide range has commits: a job bisects it")
	require.Empty(t, act.note)
}

// The range a new alert's job bisects, and a noted change's range, run
// from the tip of the night before the widest range's good end to the tip
// of its bad end's night: a sampled commit's few runs can place a change a
// night late on the one side and a commit early on the other.
func TestActOnRangeReachesTheNightsTip(t *testing.T) {
	h := newNights(t, 6, func(int) float64 { return 1000 }, nil)
	b := h.open()
	ctx := context.Background()
	c := h.commits
	a := AlertNote{Metric: "verify_tok_s", Direction: record.Improvement, Good: c[2], Bad: c[3],
		wideGood: c[2], wideBad: c[3], earlyGood: c[1], lateBad: c[4], decision: record.DecisionNoted}
	act, err := b.actOn(ctx, a, 7)
	require.NoError(t, err)
	require.Equal(t, &record.Range{Good: c[1], Bad: c[4]}, act.unbisected)

	a.Direction, a.decision = record.Regression, record.DecisionAct
	act, err = b.actOn(ctx, a, 7)
	require.NoError(t, err)
	j, ok, err := b.Store.Job(act.job)
	require.NoError(t, err)
	require.True(t, ok)
	var req AlertRequest
	require.NoError(t, json.Unmarshal(j.Params, &req))
	require.Equal(t, []string{c[1], c[4]}, []string{req.WideGood, req.WideBad})
}

// With detect.confirm_nights, an alert waits for the nights after its
// first: one outlying build costs no bisection and leaves the series, and
// a real change is bisected a night later, to the same culprit.
func TestNightlyConfirmNights(t *testing.T) {
	const culprit = 10
	tests := []struct {
		name    string
		outlier int // the commit whose night's runs alone land 15% slower; -1 for none
		step    bool
	}{
		{name: "an outlying build", outlier: 8},
		{name: "a real change", outlier: -1, step: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newNights(t, 21, func(i int) float64 {
				if tc.step && i >= culprit {
					return 920
				}
				return 1000
			}, nil)
			if tc.outlier >= 0 {
				fast := h.host.Commits[h.commits[tc.outlier]].Output
				h.host.Commits[h.commits[tc.outlier]] = runnertest.FakeCommit{Output: func(n int) string {
					var v float64
					out := fast(n)
					fmt.Sscanf(strings.Fields(out)[4], "%g", &v)
					return fmt.Sprintf("BenchmarkVerifyStep-2  10  1000 ns/op  %.3f tok/s\n", 0.85*v)
				}}
			}
			h.cfg.Detect.ConfirmNights = 1
			b := h.open()
			var notes []string
			jobs := map[string]bool{}
			for _, i := range []int{0, 0, 0, 0, 0, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20} {
				rep := h.night(b, i, 1)
				for _, a := range rep.Alerts {
					notes = append(notes, fmt.Sprintf("tip %d: %s %s", i, a.Job, a.Note))
					if a.Job != "" {
						jobs[a.Job] = true
					}
				}
			}
			culprits := culpritsOf(t, b)
			if !tc.step {
				require.Empty(t, jobs, "notes %q", notes)
				require.Empty(t, culprits)
				require.Contains(t, strings.Join(notes, "\n"), "did not hold")
				return
			}
			require.Equal(t, []string{h.commits[culprit]}, culprits, "notes %q", notes)
			require.Len(t, jobs, 1, "notes %q", notes)
			require.Contains(t, notes[0], "held until a later night agrees", "the change's first night waits")
		})
	}
}
