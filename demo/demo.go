// Package demo runs perfbot's whole manual path on the bundled testbed
// and sets what it found beside the testbed's ground truth: it generates
// the testbed repository, bisects its whole history for every change of
// the primary metric without reading the manifest, continues each
// regression into its hunks, files one Markdown issue per regression and
// judges each row of the comparison (Row.Match). It is a client of
// package service, as the command line is; service knows nothing of the
// testbed.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/testbed"
)

// scanStep is the distance between the survey points of the demo's
// scan of the whole history: about ten stretches of a dozen commits.
const scanStep = 12

// Options configures Run.
type Options struct {
	// Dir holds everything the demo makes: the testbed repository and its
	// manifest, the clone and worktree slots, the store and the issues.
	Dir  string
	Seed int64
	// Progress receives progress lines (stderr); nil discards them.
	Progress io.Writer
	Logger   *slog.Logger
}

// Summary sets each ground-truth change of the testbed beside what
// perfbot found.
type Summary struct {
	Repo     string            `json:"repo"`
	Commits  int               `json:"commits"`
	Verdict  record.Outcome    `json:"verdict"`
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
	// Unconfirmed is set when fresh runs did not show the change again;
	// the finding was kept, not filed.
	Unconfirmed bool   `json:"unconfirmed,omitempty"`
	Issue       string `json:"issue,omitempty"`
}

// Run runs the whole manual path on the bundled testbed: it generates the
// repository (or reuses the one in Dir), bisects its whole history for
// every change of the primary metric without reading the manifest,
// continues each regression into its hunks, files one Markdown issue per
// regression and compares the findings with the manifest.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	start := time.Now()
	if opts.Progress == nil {
		opts.Progress = io.Discard
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
		fmt.Fprintf(opts.Progress, "reusing the testbed repository in %s (remove %s to start afresh)\n", repoDir, dir)
	}
	cfg, err := Config(repoDir)
	if err != nil {
		return nil, err
	}

	bot, err := service.Open(ctx, cfg, service.Options{Progress: opts.Progress, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	defer bot.Close()

	head, err := bot.Repo.Resolve(ctx, "HEAD")
	if err != nil {
		return nil, err
	}
	root, n, err := firstParentRoot(ctx, bot.Repo, head)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Progress, "searching %d commits %s..%s for every change of %s\n", n, root.Short(), head.Short(), cfg.Primary().Name)
	rep, err := bot.Bisect(ctx, service.BisectRequest{Good: root.Hash, Bad: head.Hash, Direction: record.Any, Scan: scanStep, MinEffect: cfg.Detect.MinEffect})
	if err != nil {
		return nil, err
	}
	for _, c := range rep.Culprits {
		if c.Direction != record.Regression {
			rep.Hunks = append(rep.Hunks, nil)
			continue
		}
		hr, err := bot.Hunks(ctx, service.HunksRequest{Rev: c.Commit})
		var ie *service.InputError
		switch {
		case errors.As(err, &ie):
			// The culprit's own effect is too small to split: keep the
			// culprit, say why its hunks are missing.
			fmt.Fprintf(opts.Progress, "no hunks for %s: %v\n", record.ShortHash(c.Commit), err)
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("hunks of %s not localized: %v", record.ShortHash(c.Commit), err))
		case err != nil:
			return nil, fmt.Errorf("hunks of culprit %s: %w", record.ShortHash(c.Commit), err)
		}
		rep.Hunks = append(rep.Hunks, hr)
	}
	findings, err := bot.Findings(ctx, rep)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Repo: repoDir, Commits: n, Verdict: rep.Verdict, Findings: findings}
	var regressions []*record.Finding
	for _, f := range findings {
		if f.Direction == record.Regression {
			regressions = append(regressions, f)
		}
	}
	if err := bot.File(ctx, regressions); err != nil {
		return nil, err
	}
	for _, f := range regressions {
		if f.State == record.StateFiled {
			sum.Issues = append(sum.Issues, f.IssueURL)
		}
	}
	m, err := testbed.LoadManifest(testbed.ManifestPath(repoDir))
	if err != nil {
		return nil, err
	}
	sum.Rows = compareWithManifest(m, findings)
	sum.Runs, sum.Builds = bot.Oracle.Counts()
	sum.Wall = time.Since(start).Seconds()
	return sum, nil
}

// firstParentRoot walks the first parents of head to the root commit and
// returns it with the number of commits after it.
func firstParentRoot(ctx context.Context, repo *gitops.Repo, head gitops.Commit) (gitops.Commit, int, error) {
	c, n := head, 0
	for len(c.Parents) > 0 {
		if err := ctx.Err(); err != nil {
			return gitops.Commit{}, 0, err
		}
		p, err := repo.Commit(ctx, c.Parents[0])
		if err != nil {
			return gitops.Commit{}, 0, err
		}
		c, n = p, n+1
	}
	return c, n, nil
}

// compareWithManifest sets each ground-truth change beside the finding
// whose culprit is its commit; culprits that match no change get rows of
// their own.
func compareWithManifest(m *testbed.Manifest, findings []*record.Finding) []Row {
	byCommit := map[string]*record.Finding{}
	for _, f := range findings {
		for _, c := range f.Culprits {
			byCommit[c.Commit.Hash] = f
		}
	}
	var rows []Row
	matched := map[string]bool{}
	for _, ch := range m.Changes {
		row := Row{Change: ch.ID, Kind: string(ch.Kind), TrueCommit: ch.Commit, IntendedPct: ch.Effects[testbed.VerifyTokS]}
		if ch.Hunk != nil {
			row.TrueHunk = fmt.Sprintf("%s::%s", ch.Hunk.File, ch.Hunk.Function)
		}
		if f, ok := byCommit[ch.Commit]; ok {
			matched[ch.Commit] = true
			fillFound(&row, f)
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

func fillFound(row *Row, f *record.Finding) {
	c := f.Culprits[0]
	row.FoundCommit, row.DeltaPct, row.Confidence = c.Commit.Hash, c.DeltaPct, c.Confidence
	row.Unconfirmed = f.Unconfirmed != ""
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
// repository: the clone, the store and the issues live beside it, so the
// demo and `perfbot testbed verify` share measurements.
func Config(repoDir string) (*config.Config, error) {
	cfg, err := config.Default()
	if err != nil {
		return nil, err
	}
	repoDir, err = filepath.Abs(repoDir)
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
	MatchNone             = "-"
	// unconfirmedSuffix follows the judgement of a culprit whose fresh
	// runs did not show its change again.
	unconfirmedSuffix = ", not confirmed: kept"
)

// Match judges the row: whether perfbot found the change's commit (and
// its hunk), found a culprit the ground truth does not hold (unexpected),
// rightly found nothing where no effect was intended, or missed the
// change. A culprit that was not confirmed says so after the judgement.
func (r Row) Match() string {
	match := MatchNone
	switch {
	case r.CommitMatch && r.HunkMatch:
		match = MatchCommitAndHunk
	case r.CommitMatch:
		match = MatchCommit
	case r.FoundCommit != "" && r.Change == "-":
		match = MatchUnexpected
	case r.FoundCommit == "" && r.IntendedPct == 0:
		match = MatchNoEffectExpected
	case r.FoundCommit == "" && r.TrueCommit != "":
		match = MatchMissed
	}
	if r.Unconfirmed {
		match += unconfirmedSuffix
	}
	return match
}
