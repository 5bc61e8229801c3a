// Package report renders the evidence of a finding as GitHub Markdown and
// delivers it: to GitHub through go-github, or to a directory of Markdown
// files. One finding is one issue: a re-detection comments on the issue
// that already exists.
package report

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Outcome is what a search concluded.
type Outcome string

const (
	OutcomeCulprit       Outcome = "culprit"
	OutcomeNotReproduced Outcome = "not_reproduced"
	OutcomeInconclusive  Outcome = "inconclusive"
	OutcomeCandidates    Outcome = "candidates"
)

// State is where a finding stands with the tracker.
type State string

const (
	StateKept    State = "kept"    // not filed: below the confidence cut-off, or not a regression
	StateFiled   State = "filed"   // an issue exists
	StateUnfiled State = "unfiled" // filing failed; `perfbot report --retry-unfiled` retries
)

// Commit is a commit as a reader of the evidence sees it.
type Commit struct {
	Hash    string    `json:"hash"`
	Subject string    `json:"subject"`
	Author  string    `json:"author"`
	Email   string    `json:"email,omitempty"`
	Date    time.Time `json:"date"`
	URL     string    `json:"url,omitempty"`
	Parents int       `json:"parents,omitempty"`
	// Login is the author's GitHub login when it is known (from the host's
	// API or a users.noreply.github.com address); only then is the author
	// @-mentioned.
	Login string `json:"login,omitempty"`
	// Files are the paths the commit changes, for the docs-or-tests-only
	// warning; nil when not known.
	Files []string `json:"files,omitempty"`
}

// Short is the first 10 characters of the hash.
func (c Commit) Short() string {
	if len(c.Hash) > 10 {
		return c.Hash[:10]
	}
	return c.Hash
}

// End is a summary of one end of the searched range.
type End struct {
	Commit Commit  `json:"commit"`
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"` // confidence interval of the median
	Hi     float64 `json:"hi"`
}

// Culprit is a commit found to cause the change.
type Culprit struct {
	Commit     Commit  `json:"commit"`
	Confidence float64 `json:"confidence"`
	DeltaPct   float64 `json:"delta_pct"`
	// CIPct is the half-width (or [lo,hi]) of the confidence interval of DeltaPct.
	CILoPct float64 `json:"ci_lo_pct"`
	CIHiPct float64 `json:"ci_hi_pct"`
	// BuildIdentical is set by the caller when the commit's build output is
	// byte-identical to its parent's: the measured change cannot come from
	// its code.
	BuildIdentical bool `json:"build_identical,omitempty"`
}

// Probe is one measured commit of the search.
type Probe struct {
	Commit  Commit  `json:"commit"`
	N       int     `json:"n"`
	Median  float64 `json:"median"`
	Status  string  `json:"status"`  // ok, build_failed, ...
	Verdict string  `json:"verdict"` // good, bad, skipped, end
}

// Hunk is one localized diff hunk.
type Hunk struct {
	ID        string `json:"id"`
	File      string `json:"file"`
	Component string `json:"component,omitempty"`
	Function  string `json:"function,omitempty"`
	OldStart  int    `json:"old_start"`
	OldLines  int    `json:"old_lines"`
	NewStart  int    `json:"new_start"`
	NewLines  int    `json:"new_lines"`
	Diff      string `json:"diff"`
	// Commit is the hash of the culprit the hunk belongs to, when a finding
	// has more than one culprit; empty means the first culprit.
	Commit string `json:"commit,omitempty"`
}

// Effect is the measured effect of a set of hunks applied alone on the
// parent, and reverted alone from the culprit.
type Effect struct {
	AppliedPct    float64 `json:"applied_pct"`
	AppliedCIPct  float64 `json:"applied_ci_pct"`
	RevertedPct   float64 `json:"reverted_pct"`
	RevertedCIPct float64 `json:"reverted_ci_pct"`
}

// EnvDiff is one variable that differs between the two ends.
type EnvDiff struct {
	Name string `json:"name"`
	Good string `json:"good"`
	Bad  string `json:"bad"`
}

// Finding is a localized change with all its evidence.
type Finding struct {
	ID          string            `json:"id"` // equals Fingerprint()
	Created     time.Time         `json:"created"`
	Repo        string            `json:"repo"`       // repository URL or path, for links and commands
	CommitURL   string            `json:"commit_url"` // printf pattern with one %s for the hash, may be empty
	Outcome     Outcome           `json:"outcome"`
	Metric      string            `json:"metric"`
	Unit        string            `json:"unit"`
	Direction   string            `json:"direction"` // regression | improvement
	Good        End               `json:"good"`
	Bad         End               `json:"bad"`
	Culprits    []Culprit         `json:"culprits,omitempty"`
	Candidates  []Commit          `json:"candidates,omitempty"`
	Skipped     []Commit          `json:"skipped,omitempty"`
	Probes      []Probe           `json:"probes,omitempty"`
	Hunks       []Hunk            `json:"hunks,omitempty"`
	HunkEffect  *Effect           `json:"hunk_effect,omitempty"`
	Components  []string          `json:"components,omitempty"`
	Confidence  float64           `json:"confidence"`
	Warnings    []string          `json:"warnings,omitempty"`
	EnvGood     map[string]string `json:"env_good,omitempty"`
	EnvDiffs    []EnvDiff         `json:"env_diffs,omitempty"`
	History     []float64         `json:"history,omitempty"` // metric medians around the change, oldest first
	Reproduce   []string          `json:"reproduce,omitempty"`
	Logs        string            `json:"logs,omitempty"`
	Runs        int               `json:"runs"`
	Builds      int               `json:"builds"`
	WallSeconds float64           `json:"wall_seconds"`
	State       State             `json:"state"`
	Issue       int               `json:"issue,omitempty"`
	IssueURL    string            `json:"issue_url,omitempty"`
	FileError   string            `json:"file_error,omitempty"`

	// Unconfirmed, when set, says how fresh interleaved runs of the
	// culprit and its parent failed to show the change again; such a
	// finding is kept, never filed.
	Unconfirmed string `json:"unconfirmed,omitempty"`

	// PublishConfidence is the cut-off below which the finding is kept
	// rather than filed; Warnings flags a confidence under it. Zero means
	// DefaultPublishConfidence.
	PublishConfidence float64 `json:"publish_confidence,omitempty"`
}

// Fingerprint identifies a regression across re-detections: the metric,
// the culprit commit and the hunks. It is one alphanumeric token so that
// GitHub search finds it as a word.
func (f *Finding) Fingerprint() string {
	var b strings.Builder
	b.WriteString(f.Metric + "|")
	for _, c := range f.Culprits {
		b.WriteString(c.Commit.Hash + ",")
	}
	if len(f.Culprits) == 0 {
		for _, c := range f.Candidates {
			b.WriteString(c.Hash + ",")
		}
	}
	b.WriteString("|")
	for _, h := range f.Hunks {
		b.WriteString(h.ID + ",")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "perfbotfp" + hex.EncodeToString(sum[:10])
}
