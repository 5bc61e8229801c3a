package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
	"github.com/perfbot/perfbot/testbed"
)

// demoScanStep is the distance between the survey points of the demo's
// scan of the whole history: about ten stretches of a dozen commits.
const demoScanStep = 12

// DemoOptions configures Demo.
type DemoOptions struct {
	// Dir holds everything the demo makes: the testbed repository and its
	// manifest, the clone and worktree slots, the store and the issues.
	Dir  string
	Seed int64
	// Progress receives progress lines (stderr); nil discards them.
	Progress io.Writer
	Logger   *slog.Logger
}

// DemoSummary sets each ground-truth change of the testbed beside what
// perfbot found.
type DemoSummary struct {
	Repo     string            `json:"repo"`
	Commits  int               `json:"commits"`
	Verdict  record.Outcome    `json:"verdict"`
	Rows     []DemoRow         `json:"rows"`
	Issues   []string          `json:"issues"`
	Runs     int               `json:"runs"`
	Builds   int               `json:"builds"`
	Wall     float64           `json:"wall_seconds"`
	Findings []*record.Finding `json:"-"`
}

// DemoRow is one ground-truth change, or one culprit that matches none.
type DemoRow struct {
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

// Demo runs the whole manual path on the bundled testbed: it generates the
// repository (or reuses the one in Dir), bisects its whole history for
// every change of the primary metric without reading the manifest,
// continues each regression into its hunks, files one Markdown issue per
// regression and compares the findings with the manifest.
func Demo(ctx context.Context, opts DemoOptions) (*DemoSummary, error) {
	start := now()
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
	cfg, err := TestbedConfig(repoDir)
	if err != nil {
		return nil, err
	}

	bot, err := Open(ctx, cfg, Options{Progress: opts.Progress, Logger: opts.Logger})
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
	rep, err := bot.Bisect(ctx, BisectRequest{Good: root.Hash, Bad: head.Hash, Direction: record.Any, Scan: demoScanStep, MinEffect: cfg.Detect.MinEffect})
	if err != nil {
		return nil, err
	}
	for _, c := range rep.Culprits {
		if c.Direction != record.Regression {
			rep.Hunks = append(rep.Hunks, nil)
			continue
		}
		hr, err := bot.Hunks(ctx, HunksRequest{Rev: c.Commit})
		var ie *InputError
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
	tracker, err := report.NewDir(cfg.IssuesDir)
	if err != nil {
		return nil, err
	}
	filer := &report.Filer{Tracker: tracker, Index: bot.Store, PublishConfidence: cfg.Report.PublishConfidence, Reopen: cfg.Report.Reopen, Logger: opts.Logger}
	sum := &DemoSummary{Repo: repoDir, Commits: n, Verdict: rep.Verdict, Findings: findings}
	for _, f := range findings {
		if f.Direction != record.Regression {
			continue
		}
		if err := filer.File(ctx, f); err != nil {
			return nil, fmt.Errorf("file finding %s: %w", f.ID, err)
		}
		if err := bot.Store.PutFinding(*f); err != nil {
			return nil, err
		}
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
	sum.Wall = now().Sub(start).Seconds()
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
func compareWithManifest(m *testbed.Manifest, findings []*record.Finding) []DemoRow {
	byCommit := map[string]*record.Finding{}
	for _, f := range findings {
		for _, c := range f.Culprits {
			byCommit[c.Commit.Hash] = f
		}
	}
	var rows []DemoRow
	matched := map[string]bool{}
	for _, ch := range m.Changes {
		row := DemoRow{Change: ch.ID, Kind: string(ch.Kind), TrueCommit: ch.Commit, IntendedPct: ch.Effects[testbed.VerifyTokS]}
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
			row := DemoRow{Change: "-", Kind: "unexpected"}
			fillFound(&row, f)
			rows = append(rows, row)
		}
	}
	return rows
}

func fillFound(row *DemoRow, f *record.Finding) {
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

// TestbedConfig is the embedded testbed configuration pointed at a
// generated repository: the clone, the store and the issues live beside
// it, so the demo and `perfbot testbed verify` share measurements.
func TestbedConfig(repoDir string) (*config.Config, error) {
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
