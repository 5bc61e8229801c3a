// Package demo runs perfbot's own service cycle on the bundled testbed and
// sets what it found beside the testbed's ground truth: it generates the
// testbed repository, replays its history as nights (a repository it
// serves as the origin, whose branch advances a few commits a night),
// runs the nightly cycle each night exactly as `perfbot nightly` would —
// measure the tip beside the reference, detect, queue one alert job per
// change — and works off the queue: bisect, hunks, one Markdown issue per
// regression. Row.Match judges each row of the comparison. It is a client
// of package service, as the command line is; service knows nothing of
// the testbed.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/testbed"
)

// DefaultStep is how many commits the branch advances a night.
const DefaultStep = 5

// QuietNights is how many nights the branch stays on its first commit
// before it advances: a quiet week, whose nights give detection a first
// estimate of the noise (it alerts from the second night all the same).
const QuietNights = 7

// Options configures Run.
type Options struct {
	// Dir holds everything the demo makes: the testbed repository and its
	// manifest, the origin it serves, the clone and worktree slots, the
	// store and the issues.
	Dir  string
	Seed int64
	// Step is the number of commits the branch advances a night; zero is
	// DefaultStep.
	Step int
	// Progress receives progress lines (stderr); nil discards them.
	Progress io.Writer
	Logger   *slog.Logger
}

// Summary sets each ground-truth change of the testbed beside what
// perfbot found.
type Summary struct {
	Repo     string            `json:"repo"`
	Commits  int               `json:"commits"`
	Nights   int               `json:"nights"`
	Alerts   int               `json:"alerts"`
	Rows     []Row             `json:"rows"`
	Issues   []string          `json:"issues"`
	Runs     int               `json:"runs"`
	Builds   int               `json:"builds"`
	Wall     float64           `json:"wall_seconds"`
	Findings []*record.Finding `json:"-"`
}

// Row is one ground-truth change, or one culprit that matches none.
type Row struct {
	Change      string  `json:"change"` // manifest id, or "-" for an unexpected culprit
	Kind        string  `json:"kind"`
	TrueCommit  string  `json:"true_commit"`
	IntendedPct float64 `json:"intended_pct"`
	TrueHunk    string  `json:"true_hunk"`
	FoundCommit string  `json:"found_commit"`
	FoundHunk   string  `json:"found_hunk"`
	Component   string  `json:"component"`
	DeltaPct    float64 `json:"delta_pct"`
	Confidence  float64 `json:"confidence"`
	CommitMatch bool    `json:"commit_match"`
	HunkMatch   bool    `json:"hunk_match"`
	// Night is the night whose cycle first saw the change (0: none).
	Night uint64 `json:"night,omitempty"`
	// Unconfirmed is set when fresh runs did not show the change again;
	// the finding was kept, not filed.
	Unconfirmed bool `json:"unconfirmed,omitempty"`
	// NoCode is set when the culprit changes no code (comments, docs):
	// what was measured came from noise or the code's layout, and the
	// finding was kept, not filed.
	NoCode bool `json:"no_code,omitempty"`
	// Noted is set on a change that no bisection named but whose commit
	// lies in the range of an alert the nights only noted (an
	// improvement under detect.improvements: note).
	Noted bool   `json:"noted,omitempty"`
	Issue string `json:"issue,omitempty"`
}

// Run replays the testbed's history as nights of the service and compares
// the findings with the manifest.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	start := time.Now()
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Step <= 0 {
		opts.Step = DefaultStep
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	repoDir := filepath.Join(dir, "testbed-repo")
	if _, err := os.Stat(repoDir); err != nil {
		fmt.Fprintf(opts.Progress, "generating the testbed repository in %s (seed %d)\n", repoDir, opts.Seed)
		if _, err := testbed.Generate(ctx, repoDir, opts.Seed); err != nil {
			return nil, fmt.Errorf("generate testbed: %w", err)
		}
	} else {
		fmt.Fprintf(opts.Progress, "reusing the testbed repository in %s\n", repoDir)
	}
	// The nights replay from the first: what an earlier demo left (its
	// store, clone, origin and issues) would make them a continuation.
	for _, name := range []string{"perfbot.db", "perfbot.db.serve", "work", "source", "origin.git", "issues"} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("start afresh: %w", err)
		}
	}
	src, err := gitops.Open(ctx, repoDir, filepath.Join(dir, "source"))
	if err != nil {
		return nil, err
	}
	head, err := src.Resolve(ctx, "HEAD")
	if err != nil {
		return nil, err
	}
	chain, err := src.FirstParents(ctx, head.Hash, 0)
	if err != nil {
		return nil, err
	}
	origin := filepath.Join(dir, "origin.git")
	if err := serveOrigin(ctx, repoDir, origin); err != nil {
		return nil, err
	}
	cfg, err := Config(origin)
	if err != nil {
		return nil, err
	}
	// The head stays long enough for a change of the last steps to be
	// confirmed: the nights hold waits for, and one more.
	tail := cfg.Detect.ConfirmNights + 2
	tips := nightTips(chain, opts.Step, QuietNights, tail)
	if err := setBranch(ctx, origin, cfg.Repo.Branch, tips[0].Hash); err != nil {
		return nil, err
	}
	// One night a day, from the first tip's date: the findings and the
	// issues carry the nights' dates, not the wall clock's.
	day0 := tips[0].Date.Truncate(24 * time.Hour).Add(26 * time.Hour)
	night, nightStart := 0, time.Now()
	clock := func() time.Time { return day0.Add(time.Duration(night) * 24 * time.Hour).Add(time.Since(nightStart)) }
	bot, err := service.Open(ctx, cfg, service.Options{Progress: opts.Progress, Logger: opts.Logger, Clock: clock})
	if err != nil {
		return nil, err
	}
	defer bot.Close()

	fmt.Fprintf(opts.Progress, "replaying %d commits %s..%s as %d nights: %d quiet ones, %d commits a night, then %d at the head\n",
		len(chain)-1, chain[0].Short(), head.Short(), len(tips), QuietNights, opts.Step, tail)
	sum := &Summary{Repo: repoDir, Commits: len(chain) - 1, Nights: len(tips)}
	for i, tip := range tips {
		night, nightStart = i, time.Now()
		if err := setBranch(ctx, origin, cfg.Repo.Branch, tip.Hash); err != nil {
			return nil, err
		}
		fmt.Fprintf(opts.Progress, "== night %d of %d: %s at %s (%s)\n", i+1, len(tips), cfg.Repo.Branch, tip.Short(), time.Since(start).Round(time.Second))
		rep, err := bot.Nightly(ctx)
		if err != nil {
			return nil, fmt.Errorf("night %d: %w", i+1, err)
		}
		sum.Alerts += len(rep.Alerts)
		if err := bot.Drain(ctx); err != nil {
			return nil, fmt.Errorf("night %d: %w", i+1, err)
		}
	}

	fs, err := bot.Store.Findings()
	if err != nil {
		return nil, err
	}
	var findings []*record.Finding
	for i := range fs {
		if len(fs[i].Culprits) > 0 {
			findings = append(findings, &fs[i])
		}
		if fs[i].State == record.StateFiled {
			sum.Issues = append(sum.Issues, fs[i].IssueURL)
		}
	}
	sum.Findings = findings
	m, err := testbed.LoadManifest(testbed.ManifestPath(repoDir))
	if err != nil {
		return nil, err
	}
	sum.Rows = compareWithManifest(m, findings, cfg.Primary().Name)
	nights, err := alertNights(bot)
	if err != nil {
		return nil, err
	}
	for i := range sum.Rows {
		sum.Rows[i].Night = nights[sum.Rows[i].FoundCommit]
	}
	// The alerts as the nights decided them, stored: what the dashboard
	// draws, so that the table and the dashboard cannot disagree.
	state, err := bot.Store.NightlyState()
	if err != nil {
		return nil, err
	}
	markNoted(sum.Rows, slices.Collect(maps.Values(state.Alerts)), chain)
	sum.Runs, sum.Builds = bot.Oracle.Counts()
	sum.Wall = time.Since(start).Seconds()
	return sum, nil
}

// markNoted marks the rows of improvements that no bisection named but
// that lie in the range of an improvement alert the nights only noted (the
// range its job would have bisected),
// with the night it was first seen. Other changes in such a range (a
// regression, a commit meant to change nothing) are not what the alert
// saw.
func markNoted(rows []Row, alerts []record.Alert, chain []record.Commit) {
	at := map[string]int{}
	for i, c := range chain {
		at[c.Hash] = i
	}
	for i := range rows {
		r := &rows[i]
		c, ok := at[r.TrueCommit]
		if r.FoundCommit != "" || !ok || r.Kind != string(testbed.Improvement) {
			continue
		}
		for _, a := range alerts {
			if a.Decision != record.DecisionNoted || a.Direction != record.Improvement {
				continue
			}
			from, to := a.Good, a.Bad
			if a.Unbisected != nil {
				from, to = a.Unbisected.Good, a.Unbisected.Bad
			}
			good, okGood := at[from]
			bad, okBad := at[to]
			if okGood && okBad && good < c && c <= bad {
				r.Noted = true
				if r.Night == 0 || a.Night < r.Night {
					r.Night = a.Night
				}
			}
		}
	}
}

// nightTips are the branch tips of the nights: quiet nights on the root
// commit, then every step-th commit of the first-parent chain, and the
// head for tail nights, so that a change of the last steps has the
// nights after it that confirm it (detect.confirm_nights).
func nightTips(chain []record.Commit, step, quiet, tail int) []record.Commit {
	var tips []record.Commit
	for range max(quiet, 1) {
		tips = append(tips, chain[0])
	}
	for i := step; i < len(chain)-1; i += step {
		tips = append(tips, chain[i])
	}
	for range max(tail, 1) {
		tips = append(tips, chain[len(chain)-1])
	}
	return tips
}

// serveOrigin makes origin a bare copy of the testbed repository: the
// repository perfbot watches, whose branch the demo moves night by night.
func serveOrigin(ctx context.Context, repoDir, origin string) error {
	if _, err := os.Stat(origin); err == nil {
		return nil
	}
	out, err := exec.CommandContext(ctx, "git", "clone", "--quiet", "--bare", repoDir, origin).CombinedOutput()
	if err != nil {
		return fmt.Errorf("serve the testbed as an origin: git clone --bare: %v: %s", err, out)
	}
	return nil
}

// setBranch points the origin's branch at the night's tip, as a push
// would.
func setBranch(ctx context.Context, origin, branch, hash string) error {
	out, err := exec.CommandContext(ctx, "git", "-C", origin, "update-ref", "refs/heads/"+branch, hash).CombinedOutput()
	if err != nil {
		return fmt.Errorf("advance %s of %s: %v: %s", branch, origin, err, out)
	}
	return nil
}

// alertNights maps each culprit of an alert job to the night its change
// was first seen.
func alertNights(bot *service.Bot) (map[string]uint64, error) {
	jobs, err := bot.Store.Jobs()
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, j := range jobs {
		if j.Kind != record.JobAlert || len(j.Result) == 0 {
			continue
		}
		var rep service.AlertReport
		if err := json.Unmarshal(j.Result, &rep); err != nil || rep.Bisect == nil {
			continue
		}
		for _, c := range rep.Bisect.Culprits {
			if n, ok := out[c.Commit]; !ok || rep.Request.Night < n {
				out[c.Commit] = rep.Request.Night
			}
		}
	}
	return out, nil
}

// compareWithManifest sets each ground-truth change beside the finding
// whose culprit is its commit; culprits that match no change get rows of
// their own. A row's intended effect is the change's on the metric it was
// found by, or, missed, on primary, the metric the nights follow (on
// verify_tok_s when the manifest gives none for primary).
func compareWithManifest(m *testbed.Manifest, findings []*record.Finding, primary string) []Row {
	byCommit := map[string]*record.Finding{}
	for _, f := range findings {
		for _, c := range f.Culprits {
			if g, ok := byCommit[c.Commit.Hash]; !ok || stronger(f, g) {
				byCommit[c.Commit.Hash] = f
			}
		}
	}
	var rows []Row
	matched := map[string]bool{}
	for _, ch := range m.Changes {
		row := Row{Change: ch.ID, Kind: string(ch.Kind), TrueCommit: ch.Commit, IntendedPct: ch.Effects[testbed.VerifyTokS]}
		if pct, ok := ch.Effects[primary]; ok {
			row.IntendedPct = pct
		}
		if ch.Hunk != nil {
			row.TrueHunk = fmt.Sprintf("%s::%s", ch.Hunk.File, ch.Hunk.Function)
		}
		if f, ok := byCommit[ch.Commit]; ok {
			matched[ch.Commit] = true
			fillFound(&row, f)
			if pct, ok := ch.Effects[f.Metric]; ok {
				// The intended effect on the metric the change was found by.
				row.IntendedPct = pct
			}
			row.CommitMatch = true
			row.HunkMatch = ch.Hunk != nil && hunkMatches(ch.Hunk, f.Hunks())
		}
		rows = append(rows, row)
	}
	for _, f := range findings {
		for _, c := range f.Culprits {
			if matched[c.Commit.Hash] {
				continue
			}
			row := Row{Change: "-", Kind: "unexpected"}
			fillFound(&row, f)
			rows = append(rows, row)
		}
	}
	return rows
}

// stronger reports whether f is better evidence for its culprit than g,
// another finding of the same commit (one change moves several metrics:
// a communicator regression is an allreduce regression and a verify_cost
// improvement): a filed issue first, then one with hunks.
func stronger(f, g *record.Finding) bool {
	if (f.Issue > 0) != (g.Issue > 0) {
		return f.Issue > 0
	}
	return len(f.Hunks()) > len(g.Hunks())
}

func fillFound(row *Row, f *record.Finding) {
	c := f.Culprits[0]
	row.FoundCommit, row.DeltaPct, row.Confidence = c.Commit.Hash, c.Effect.Pct, c.Confidence
	row.Unconfirmed = f.Unconfirmed != ""
	row.NoCode = c.NoCodeChange
	var hunks []string
	for _, h := range f.Hunks() {
		name := h.File
		if h.Function != "" {
			name += "::" + h.Function
		}
		hunks = append(hunks, name)
	}
	row.FoundHunk = strings.Join(hunks, " ")
	row.Component = strings.Join(f.Components, ",")
	if f.Issue > 0 {
		row.Issue = fmt.Sprintf("#%d", f.Issue)
	}
}

// hunkMatches reports whether a found hunk covers the lines that carry
// the change.
func hunkMatches(want *testbed.Hunk, found []record.Hunk) bool {
	for _, h := range found {
		if h.File != want.File {
			continue
		}
		lo, hi := h.NewStart, h.NewStart+max(h.NewLines, 1)
		if lo < want.Start+max(want.Lines, 1) && want.Start < hi {
			return true
		}
	}
	return false
}

// Config is the embedded testbed configuration pointed at a generated
// repository (or the origin the demo serves of it): the clone, the store
// and the issues live beside it, so the demo and `perfbot testbed verify`
// share measurements.
func Config(repoDir string) (*config.Config, error) {
	cfg, err := config.Default()
	if err != nil {
		return nil, err
	}
	return besideRepo(cfg, repoDir)
}

// besideRepo points cfg at the repository in repoDir and puts the clone,
// the store and the issues beside it.
func besideRepo(cfg *config.Config, repoDir string) (*config.Config, error) {
	repoDir, err := filepath.Abs(repoDir)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(repoDir)
	cfg.Repo.URL = repoDir
	cfg.Workdir = filepath.Join(dir, "work")
	cfg.Store = filepath.Join(dir, "perfbot.db")
	cfg.IssuesDir = filepath.Join(dir, "issues")
	cfg.GitHub.Repo = ""
	return cfg, nil
}

// What Row.Match says of a row.
const (
	MatchCommitAndHunk    = "commit+hunk"
	MatchCommit           = "commit"
	MatchUnexpected       = "unexpected"
	MatchNoEffectExpected = "no effect expected, none found"
	MatchMissed           = "missed"
	MatchNoted            = "noted, not bisected"
	MatchNone             = "-"
	// unconfirmedSuffix follows the judgement of a culprit whose fresh
	// runs did not show its change again.
	unconfirmedSuffix = ", not confirmed: kept"
	// noCodeSuffix follows the judgement of a culprit that changes no
	// code.
	noCodeSuffix = ", no code changed: kept"
)

// Match judges the row: whether perfbot found the change's commit (and
// its hunk), found a culprit the ground truth does not hold (unexpected),
// saw it on the nights and only noted it, rightly found nothing where no
// effect was intended, or missed the
// change. A culprit that was not confirmed, or that changes no code and
// so was not filed, says so after the judgement.
func (r Row) Match() string {
	match := MatchNone
	switch {
	case r.CommitMatch && r.HunkMatch:
		match = MatchCommitAndHunk
	case r.CommitMatch:
		match = MatchCommit
	case r.FoundCommit != "" && r.Change == "-":
		match = MatchUnexpected
	case r.FoundCommit == "" && r.Noted:
		match = MatchNoted
	case r.FoundCommit == "" && r.IntendedPct == 0:
		match = MatchNoEffectExpected
	case r.FoundCommit == "" && r.TrueCommit != "":
		match = MatchMissed
	}
	switch {
	case r.Unconfirmed:
		match += unconfirmedSuffix
	case r.NoCode && r.Issue == "":
		match += noCodeSuffix
	}
	return match
}
