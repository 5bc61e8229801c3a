package service

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// history scripts a fake host over a real repository of numbered commits:
// level(i) is the true tok/s of commit i, measured with 1% noise.
type history struct {
	commits []string
	host    *runnertest.Fake
	dir     string
	cfg     *config.Config
}

func newHistory(t *testing.T, n int, level func(i int) float64, broken func(i int) bool) *history {
	t.Helper()
	repo, commits := gitopstest.NewRepo(t, n)
	rng := rand.New(rand.NewSource(1))
	host := &runnertest.Fake{Commits: map[string]runnertest.FakeCommit{}}
	for i, c := range commits {
		if broken != nil && broken(i) {
			host.Commits[c] = runnertest.FakeCommit{BuildFails: true}
			continue
		}
		var outs []string
		for range 60 {
			v := level(i) * (1 + 0.01*rng.NormFloat64())
			outs = append(outs, fmt.Sprintf("BenchmarkVerifyStep-2  10  1000 ns/op  %.3f tok/s\n", v))
		}
		host.Commits[c] = runnertest.FakeCommit{Outputs: outs}
	}
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`repo:
  url: %s
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
`, repo)), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	return &history{commits: commits, host: host, dir: dir, cfg: cfg}
}

func (h *history) open(t *testing.T) *Bot {
	t.Helper()
	b, err := Open(context.Background(), h.cfg, Options{Host: h.host})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

func TestBisectJob(t *testing.T) {
	step := func(at int, drop float64) func(int) float64 {
		return func(i int) float64 {
			if i >= at {
				return 100 * (1 - drop)
			}
			return 100
		}
	}
	tests := []struct {
		name       string
		n          int
		level      func(int) float64
		broken     func(int) bool
		direction  record.Direction
		want       record.Outcome
		culprit    int // index, when want is culprit
		candidates int
	}{
		{name: "culprit found", n: 40, level: step(23, 0.08), want: record.OutcomeCulprit, culprit: 23},
		{name: "regression at the oldest commit", n: 20, level: step(1, 0.08), want: record.OutcomeCulprit, culprit: 1},
		{name: "not reproduced", n: 20, level: step(100, 0), want: record.OutcomeNotReproduced},
		{name: "improvement", n: 30, level: step(11, -0.08), direction: record.Improvement, want: record.OutcomeCulprit, culprit: 11},
		{name: "culprit among broken commits", n: 30, level: step(15, 0.08), broken: func(i int) bool { return i >= 13 && i <= 15 },
			want: record.OutcomeCandidates, candidates: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHistory(t, tt.n, tt.level, tt.broken)
			b := h.open(t)
			ctx := context.Background()
			rep, err := b.Bisect(ctx, BisectRequest{Good: h.commits[0], Bad: "main", Direction: tt.direction})
			require.NoError(t, err)
			require.Equal(t, tt.want, rep.Verdict)
			switch tt.want {
			case record.OutcomeCulprit:
				require.Len(t, rep.Culprits, 1)
				require.Equal(t, h.commits[tt.culprit], rep.Culprits[0].Commit)
				require.GreaterOrEqual(t, rep.Culprits[0].Confidence, 0.99)
				require.Equal(t, fmt.Sprint(tt.culprit+1), rep.Commit(rep.Culprits[0].Commit).Subject)
				conf := rep.Culprits[0].Confirmation
				require.NotNil(t, conf)
				require.True(t, conf.Confirmed, conf.String())
				require.Contains(t, conf.String(), "interleaved")
			case record.OutcomeCandidates:
				require.Len(t, rep.Candidates, tt.candidates)
			}
			require.Equal(t, rep.Runs, countOK(t, b), "runs counts the benchmark invocations")

			// The same bisection again runs nothing: the finished job's
			// report stands, with the whole job's cost.
			before := countOK(t, b)
			again, err := b.Bisect(ctx, BisectRequest{Good: h.commits[0], Bad: "main", Direction: tt.direction})
			require.NoError(t, err)
			require.Equal(t, before, countOK(t, b), "a finished job runs nothing")
			require.Equal(t, rep.Verdict, again.Verdict)
			require.Equal(t, rep.Runs, again.Runs, "the report keeps the job's cost")
			require.Equal(t, rep.Culprits, again.Culprits)

			fs, err := b.StoreFindings(ctx, rep)
			require.NoError(t, err)
			require.NotEmpty(t, fs)
			require.Equal(t, rep.Runs, countOK(t, b), "the evidence's runs are counted too")
			for _, f := range fs {
				_, _, err := report.Render(f)
				require.NoError(t, err)
			}
		})
	}
}

// TestBisectTheOtherWay: `bisect --direction improvement` over a range
// that regressed by 21% stores a not_reproduced finding that says so:
// which way the ends differ, by how much, and the command that searches
// it; its issue never says the change did not reproduce.
func TestBisectTheOtherWay(t *testing.T) {
	level := func(i int) float64 {
		if i >= 6 {
			return 798.5
		}
		return 1011
	}
	for _, tc := range []struct {
		name      string
		searched  record.Direction
		other     record.Direction
		wantTitle string
	}{
		{"a regression searched as an improvement", record.Improvement, record.Regression, "verify_tok_s: no improvement between"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistory(t, 12, level, nil)
			b := h.open(t)
			ctx := context.Background()
			rep, err := b.Bisect(ctx, BisectRequest{Good: h.commits[0], Bad: "main", Direction: tc.searched})
			require.NoError(t, err)
			require.Equal(t, record.OutcomeNotReproduced, rep.Verdict)
			fs, err := b.StoreFindings(ctx, rep)
			require.NoError(t, err)
			require.Len(t, fs, 1)
			f := fs[0]
			w, ok := record.OtherDirection(f.Warnings)
			require.True(t, ok, "warnings %q", record.WarningStrings(f.Warnings))
			assert.Equal(t, tc.other, w.Direction)
			assert.InDelta(t, -21, w.Pct, 1.5)
			assert.True(t, w.LoPct <= w.Pct && w.Pct <= w.HiPct && w.HiPct < 0, "%+v", w)
			good, bad := record.ShortHash(h.commits[0]), record.ShortHash(h.commits[11])
			want := fmt.Sprintf("perfbot bisect --good %s --bad %s --metric verify_tok_s --direction %s", good, bad, tc.other)
			require.NotEmpty(t, f.Reproduce)
			assert.True(t, strings.HasPrefix(f.Reproduce[0], want), "reproduce %q", f.Reproduce)

			title, body, err := report.Render(f)
			require.NoError(t, err)
			assert.Contains(t, title, tc.wantTitle)
			assert.Contains(t, body, "they differ the other way, "+tc.other.Indefinite()+" of −2")
			assert.Contains(t, body, want)
			assert.NotContains(t, body, "did not reproduce")
		})
	}
}

// TestBisectStaleRunsDoNotCount records ten runs of the bad end taken the
// night before, while the host was slow: nothing changed, but those runs
// say otherwise. They were taken with no run of another commit beside
// them, so they count in no comparison; the ends measured side by side
// show no change.
func TestBisectStaleRunsDoNotCount(t *testing.T) {
	h := newHistory(t, 20, func(int) float64 { return 100 }, nil)
	b := h.open(t)
	bad := record.Target{Commit: h.commits[19]}
	for k := range 10 {
		_, err := b.Store.AddRun(&record.Run{
			TargetKey: bad.Key(), SpecHash: b.Oracle.SpecHash(), Target: bad, Host: "fake", Status: record.StatusOK,
			Started: time.Now().Add(-20*time.Hour + time.Duration(k)*time.Minute),
			Values:  map[string]float64{"verify_tok_s": 96.5 + 0.1*float64(k%3)},
		})
		require.NoError(t, err)
	}
	rep, err := b.Bisect(context.Background(), BisectRequest{Good: h.commits[0], Bad: "main"})
	require.NoError(t, err)
	t.Logf("verdict %s, %d runs, warnings %q", rep.Verdict, rep.Runs, record.WarningStrings(rep.Warnings))
	require.Equal(t, record.OutcomeNotReproduced, rep.Verdict)
	require.Empty(t, rep.Culprits)
	require.Contains(t, record.WarningStrings(rep.Warnings), "10 recorded runs were taken at another time, with no run of another commit beside them, and were left out of the comparisons")
	require.InDelta(t, 100, rep.Bad.Median, 2, "the bad end's summary holds the runs that count")
}

func countOK(t *testing.T, b *Bot) int {
	t.Helper()
	n := 0
	for _, c := range b.Oracle.pool.Hosts()[0].(*runnertest.Fake).Calls() {
		if c.Phase == runner.PhaseBench {
			n++
		}
	}
	return n
}

func TestBisectBadInput(t *testing.T) {
	h := newHistory(t, 5, func(int) float64 { return 100 }, nil)
	b := h.open(t)
	_, err := b.Bisect(context.Background(), BisectRequest{Good: "nope", Bad: "main"})
	var ie *record.InputError
	require.ErrorAs(t, err, &ie)
	require.Contains(t, err.Error(), "nope")

	_, err = b.Bisect(context.Background(), BisectRequest{Good: "main", Bad: h.commits[0]})
	require.ErrorAs(t, err, &ie, "bad before good is an input error")
}

// TestBisectInfraError: commits whose runs fail on the infrastructure
// (more than two times in three) are skipped and the report says so; an
// end that fails so stops the job with an infrastructure error.
func TestBisectInfraError(t *testing.T) {
	level := func(i int) float64 { return map[bool]float64{true: 90, false: 100}[i >= 10] }
	t.Run("culprit and parent fail: skipped, not judged", func(t *testing.T) {
		h := newHistory(t, 20, level, nil)
		h.host.Commits[h.commits[10]] = runnertest.FakeCommit{InfraErr: fmt.Errorf("connection reset")}
		h.host.Commits[h.commits[9]] = runnertest.FakeCommit{InfraErr: fmt.Errorf("connection reset")}
		b := h.open(t)
		rep, err := b.Bisect(context.Background(), BisectRequest{Good: h.commits[0], Bad: "main"})
		require.NoError(t, err)
		assert.Equal(t, record.OutcomeCandidates, rep.Verdict, "warnings %q", record.WarningStrings(rep.Warnings))
		assert.Equal(t, []string{h.commits[9], h.commits[10]}, rep.SkippedInfra)
		assert.Contains(t, strings.Join(record.WarningStrings(rep.Warnings), "\n"), "skipped, not judged: their runs failed on the infrastructure")
	})
	t.Run("bad end fails: the job stops", func(t *testing.T) {
		h := newHistory(t, 20, level, nil)
		h.host.Commits[h.commits[19]] = runnertest.FakeCommit{InfraErr: fmt.Errorf("connection reset")}
		b := h.open(t)
		_, err := b.Bisect(context.Background(), BisectRequest{Good: h.commits[0], Bad: "main"})
		require.True(t, record.IsInfra(err), "%v", err)
	})
}
