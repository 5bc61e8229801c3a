package service

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
	"github.com/perfbot/perfbot/runner/runnertest"
)

// specNights is a history whose engine reports the breakdown's terms as
// the testbed does: the whole cycle (ms/verify), the draft's part of it,
// tokens per cycle and a plain decode step; cycle(i) is commit i's cycle
// time (3.4 ms: speculation pays 1.35x; 6.4 ms: it costs 28%).
func specNights(t *testing.T, n int, cycleOf func(i int) float64) *nights {
	t.Helper()
	repo := gitopstest.NewBuilder(t)
	commits := repo.Numbered(n)
	h := &nights{t: t, repo: repo, commits: commits, speed: 1, rng: rand.New(rand.NewSource(11)),
		now: time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)}
	h.host = &runnertest.Fake{Commits: map[string]runnertest.FakeCommit{}, Trees: 4}
	var mu sync.Mutex
	for i, c := range commits {
		cycle := cycleOf(i)
		h.host.Commits[c] = runnertest.FakeCommit{Output: func(int) string {
			mu.Lock()
			defer mu.Unlock()
			noise := func() float64 { return 1 + 0.01*h.rng.NormFloat64() }
			cyc, accept := cycle*noise(), 3.625
			return fmt.Sprintf("BenchmarkVerifyStep-2  32  1000 ns/op  %.4f ms/draft  %.4f ms/verify  %.3f tok/s  %.3f tok/verify\n"+
				"BenchmarkDecode-2  32  1000 ns/op  %.4f ms/token  787 tok/s\n", 1.4*noise(), cyc, accept/cyc*1000, accept, 1.27*noise())
		}}
	}
	dir := t.TempDir()
	cfg, err := config.Parse(fmt.Appendf(nil, `repo: {url: %s, branch: main}
build: [{name: build, run: go build ./...}]
benchmarks: [{name: engine, run: ./bench, format: gobench}]
metrics:
  - {name: verify_tok_s, benchmark: engine, select: BenchmarkVerifyStep, unit: tok/s, primary: true}
  - {name: verify_step_ms, alert: false, benchmark: engine, select: BenchmarkVerifyStep, unit: ms/verify}
  - {name: draft_ms, alert: false, benchmark: engine, select: BenchmarkVerifyStep, unit: ms/draft}
  - {name: decode_ms, alert: false, benchmark: engine, select: BenchmarkDecode, unit: ms/token}
  - {name: accept_len, alert: false, benchmark: engine, select: BenchmarkVerifyStep, unit: tok/verify, better: higher}
speculative: {tok_s: verify_tok_s, cycle_ms: verify_step_ms, draft_ms: draft_ms, decode_ms: decode_ms, accept_len: accept_len, tokens: 4}
detect: {min_effect: 3%%, repeats: 6, warmup: 5}
bisect: {confidence: 0.95, repeats: 6}
`, repo.Dir), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	cfg.IssuesDir = filepath.Join(dir, "issues")
	h.cfg = cfg
	return h
}

// TestNightlySpeculationSlower: the nights on which speculation is slower
// than plain decoding raise one finding, filed once however many nights
// follow; the regression that made it so is bisected, and its evidence
// attributes the drop to the verify time.
func TestNightlySpeculationSlower(t *testing.T) {
	const slowFrom = 6
	h := specNights(t, 10, func(i int) float64 {
		if i >= slowFrom {
			return 6.4 // the verify pass takes 3 ms more
		}
		return 3.4
	})
	b := h.open()
	var ids []string
	for i := range h.commits {
		rep := h.night(b, i, 1)
		for _, a := range rep.Alerts {
			require.Contains(t, []string{"verify_tok_s"}, a.Metric, "the breakdown's terms are quiet (alert: false)")
		}
		if i < slowFrom {
			require.Empty(t, rep.Speculation, "night %d: speculation pays", i)
			continue
		}
		require.NotEmpty(t, rep.Speculation, "night %d: speculation is slower", i)
		ids = append(ids, rep.Speculation)
	}
	for _, id := range ids {
		require.Equal(t, ids[0], id, "one finding for the whole stretch")
	}
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	var slower, culprit []record.Finding
	for _, f := range fs {
		switch f.Outcome {
		case record.OutcomeSpeculationSlower:
			slower = append(slower, f)
		case record.OutcomeCulprit:
			culprit = append(culprit, f)
		}
	}
	require.Len(t, slower, 1)
	s := slower[0]
	assert.Equal(t, record.StateFiled, s.State)
	assert.Equal(t, h.commits[slowFrom], s.Candidates[0].Hash, "named by the first night that was slower")
	require.NotNil(t, s.Speculative)
	assert.True(t, s.Speculative.Bad.Slower())
	assert.InDelta(t, 3.625*1.27/6.4, s.Speculative.Bad.SpeedUp.Median, 0.03)
	assert.InDelta(t, 6.4/1.27, s.Speculative.Bad.BreakEven.Median, 0.1)

	require.NotEmpty(t, culprit, "the verify regression is bisected")
	f := culprit[0]
	assert.Equal(t, h.commits[slowFrom], f.Culprits[0].Commit.Hash)
	require.NotNil(t, f.Speculative, "the evidence carries the breakdown")
	require.Equal(t, "verify_tok_s", f.Metric, "the alerts of one change follow the primary metric")
	require.Len(t, f.Speculative.Terms, 3)
	lead := f.Speculative.Lead()
	assert.Equal(t, record.SpecTermVerify, lead.Name, "%+v", f.Speculative.Terms)
	assert.InDelta(t, (6.4-1.4)/(3.4-1.4)*100-100, lead.ChangePct, 10)
	assert.InDelta(t, (3.4/6.4-1)*100, f.Speculative.ExpectedPct, 3)
	assert.False(t, f.Speculative.Good.Slower())
	assert.True(t, f.Speculative.Bad.Slower())
}

func TestSpecCycles(t *testing.T) {
	cycleCfg := &config.Speculative{TokS: "tok", CycleMs: "cycle", DraftMs: "draft", DecodeMs: "decode", AcceptLen: "accept"}
	verifyCfg := &config.Speculative{TokS: "tok", VerifyMs: "verify", DecodeMs: "decode", AcceptLen: "accept"}
	tests := []struct {
		name     string
		s        *config.Speculative
		byMetric map[string][]float64
		want     []float64 // verify ms of each cycle
		draft    []float64
	}{
		{name: "whole cycle less the draft", s: cycleCfg,
			byMetric: map[string][]float64{"cycle": {6.4, 6.5}, "draft": {1.4, 1.5}, "decode": {1.27, 1.28}, "accept": {3.6, 3.6}},
			want:     []float64{5.0, 5.0}, draft: []float64{1.4, 1.5}},
		{name: "verify alone, no draft metric: a draft of zero", s: verifyCfg,
			byMetric: map[string][]float64{"verify": {12.1}, "decode": {12.2}, "accept": {2.5}, "tok": {200}},
			want:     []float64{12.1}, draft: []float64{0}},
		{name: "a run without the draft cannot be paired", s: cycleCfg,
			byMetric: map[string][]float64{"cycle": {6.4, 6.5}, "draft": {1.4}, "decode": {1.27, 1.28}, "accept": {3.6, 3.6}}},
		{name: "no acceptance measured", s: verifyCfg,
			byMetric: map[string][]float64{"verify": {12.1}, "decode": {12.2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := specCycles(tc.s, tc.byMetric)
			require.Len(t, got, len(tc.want))
			for i, c := range got {
				assert.InDelta(t, tc.want[i], c.VerifyMs, 1e-9)
				assert.InDelta(t, tc.draft[i], c.DraftMs, 1e-9)
			}
		})
	}
}

// TestNightlySpeculationSlowerNoisyNight: a night whose speed-up interval
// spans 1 does not end the stretch, so the nights after it extend the
// same finding; one on which speculation pays would.
func TestNightlySpeculationSlowerNoisyNight(t *testing.T) {
	cycles := []float64{3.4, 6.4, 6.4, 3.625 * 1.27, 6.4}
	h := specNights(t, len(cycles), func(i int) float64 { return cycles[i] })
	h.cfg.Detect.MinEffect = 0.9 // no alerts: this test is about the nights alone
	b := h.open()
	var ids []string
	for i := range cycles {
		rep := h.night(b, i, 1)
		ids = append(ids, rep.Speculation)
	}
	assert.Empty(t, ids[0], "speculation pays")
	require.NotEmpty(t, ids[1])
	assert.Equal(t, ids[1], ids[2])
	assert.Empty(t, ids[3], "break-even within the noise: no verdict tonight")
	assert.Equal(t, ids[1], ids[4], "the same stretch")
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	require.Len(t, fs, 1)
	assert.Equal(t, h.commits[1], fs[0].Candidates[0].Hash)
}

// TestNightlySpeculationSlowerQuiet: with speculative.alert: false, nights
// on which speculation never pays raise no finding and file nothing.
func TestNightlySpeculationSlowerQuiet(t *testing.T) {
	h := specNights(t, 6, func(int) float64 { return 6.4 })
	h.cfg.Speculative.Quiet = true
	b := h.open()
	for i := range h.commits {
		rep := h.night(b, i, 1)
		require.Empty(t, rep.Speculation, "night %d", i)
	}
	fs, err := b.Store.Findings()
	require.NoError(t, err)
	for _, f := range fs {
		require.NotEqual(t, record.OutcomeSpeculationSlower, f.Outcome)
	}
}

// TestNightlySpeculationSlowerOneIssue: while the issue of a
// speculation_slower finding is open, the nights on which speculation is
// slower keep to that finding, whatever nights on which it paid by
// chance come between them; once a person closes the issue, the next
// stretch of slower nights files anew, and the stretch it was closed in
// does not.
func TestNightlySpeculationSlowerOneIssue(t *testing.T) {
	const pays, slower = 3.4, 6.4
	type night struct {
		cycle float64
		close string // the finding, by label, whose issue a person closes before the night
		down  bool   // the tracker cannot be read that night
		want  string // the finding the night names, by label; "" for none
	}
	tests := []struct {
		name     string
		nights   []night
		comments map[string]int // comments on each finding's issue, by label
	}{
		{name: "slower nights continuing", nights: []night{
			{cycle: pays}, {cycle: slower, want: "a"}, {cycle: slower, want: "a"}, {cycle: slower, want: "a"}},
			comments: map[string]int{"a": 0}},
		{name: "one paying night by chance while the issue is open", nights: []night{
			{cycle: pays}, {cycle: slower, want: "a"}, {cycle: slower, want: "a"}, {cycle: pays},
			{cycle: slower, want: "a"}, {cycle: slower, want: "a"}},
			comments: map[string]int{"a": 1}},
		{name: "paying nights by chance again and again", nights: []night{
			{cycle: pays}, {cycle: slower, want: "a"}, {cycle: pays}, {cycle: slower, want: "a"},
			{cycle: pays}, {cycle: slower, want: "a"}},
			comments: map[string]int{"a": 2}},
		{name: "closed then slower after a paying night", nights: []night{
			{cycle: pays}, {cycle: slower, want: "a"}, {cycle: pays, close: "a"}, {cycle: slower, want: "b"}},
			comments: map[string]int{"a": 0, "b": 0}},
		{name: "closed during a continued stretch then slower after a paying night", nights: []night{
			{cycle: pays}, {cycle: slower, want: "a"}, {cycle: pays}, {cycle: slower, want: "a"},
			{cycle: slower, close: "a", want: "a"}, {cycle: pays}, {cycle: slower, want: "b"}},
			comments: map[string]int{"a": 1, "b": 0}},
		{name: "a tracker that cannot say keeps to the finding and asks again", nights: []night{
			{cycle: pays}, {cycle: slower, want: "a"}, {cycle: pays}, {cycle: slower, down: true, want: "a"},
			{cycle: slower, close: "a", want: "b"}},
			comments: map[string]int{"a": 0, "b": 0}},
		{name: "a tracker that cannot say then can tells the issue once", nights: []night{
			{cycle: pays}, {cycle: slower, want: "a"}, {cycle: pays}, {cycle: slower, down: true, want: "a"},
			{cycle: slower, want: "a"}, {cycle: slower, want: "a"}},
			comments: map[string]int{"a": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := specNights(t, len(tc.nights), func(i int) float64 { return tc.nights[i].cycle })
			h.cfg.Detect.MinEffect = 0.9 // no alerts: this test is about the nights alone
			b := h.open()
			issues, err := report.NewDir(h.cfg.IssuesDir)
			require.NoError(t, err)
			ids := map[string]string{} // label → finding id
			for i, n := range tc.nights {
				if n.close != "" {
					f, ok, err := b.Store.Finding(ids[n.close])
					require.NoError(t, err)
					require.True(t, ok)
					require.NoError(t, issues.Close(context.Background(), f.Issue))
				}
				var got string
				if n.down {
					index := filepath.Join(h.cfg.IssuesDir, "index.json")
					saved, err := os.ReadFile(index)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(index, []byte("not json"), 0o644))
					got = h.night(b, i, 1).Speculation
					require.NoError(t, os.WriteFile(index, saved, 0o644))
				} else {
					got = h.night(b, i, 1).Speculation
				}
				if n.want == "" {
					require.Empty(t, got, "night %d: speculation pays", i)
					continue
				}
				require.NotEmpty(t, got, "night %d: speculation is slower", i)
				if _, seen := ids[n.want]; !seen {
					require.NotContains(t, slices.Collect(maps.Values(ids)), got, "night %d: a new finding", i)
					ids[n.want] = got
				}
				require.Equal(t, ids[n.want], got, "night %d: finding %s", i, n.want)
			}
			fs, err := b.Store.Findings()
			require.NoError(t, err)
			filed := map[int]bool{}
			for _, f := range fs {
				require.Equal(t, record.OutcomeSpeculationSlower, f.Outcome)
				require.Equal(t, record.StateFiled, f.State)
				filed[f.Issue] = true
			}
			assert.Len(t, fs, len(ids), "one finding per regression")
			assert.Len(t, filed, len(ids), "one issue per regression")
			files, err := filepath.Glob(filepath.Join(h.cfg.IssuesDir, "*.md"))
			require.NoError(t, err)
			assert.Len(t, files, len(ids), "issues written")
			for label, want := range tc.comments {
				f, ok, err := b.Store.Finding(ids[label])
				require.NoError(t, err)
				require.True(t, ok)
				iss, err := issues.Get(context.Background(), f.Issue)
				require.NoError(t, err)
				body, err := os.ReadFile(iss.URL)
				require.NoError(t, err)
				assert.Equal(t, want, strings.Count(string(body), "\n## Comment "), "comments on %s's issue", label)
			}
		})
	}
}
