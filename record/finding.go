package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Direction is the kind of change a search looks for, and the kind of change
// a finding is.
type Direction string

const (
	// Regression is a change for the worse.
	Regression Direction = "regression"
	// Improvement is a change for the better.
	Improvement Direction = "improvement"
	// Any is a change either way (a search only); each culprit carries its
	// own direction.
	Any Direction = "any"
)

// Indefinite is the direction with its indefinite article: "a
// regression", "an improvement", "a change either way".
func (d Direction) Indefinite() string {
	switch d {
	case Improvement:
		return "an improvement"
	case Any:
		return "a change either way"
	}
	return "a " + string(d)
}

// Outcome is what a search concluded.
type Outcome string

const (
	// OutcomeCulprit: one or more commits were found with the configured
	// confidence.
	OutcomeCulprit Outcome = "culprit"
	// OutcomeNotReproduced: re-measured, the ends do not differ by the minimum
	// effect in the searched direction; nothing was bisected.
	OutcomeNotReproduced Outcome = "not_reproduced"
	// OutcomeInconclusive: the run budget ran out before any commit reached the
	// configured confidence.
	OutcomeInconclusive Outcome = "inconclusive"
	// OutcomeCandidates: the change lies among commits that could not be measured
	// (a broken block and the first commit after it).
	OutcomeCandidates Outcome = "candidates"
	// OutcomeBuildBroken: the nightly tip has not built or benchmarked for
	// several nights; Candidates are those tips, Good the last that did.
	OutcomeBuildBroken Outcome = "build_broken"
	// OutcomeMissingData: the tip measured, but not this metric, for
	// several nights.
	OutcomeMissingData Outcome = "missing_data"
	// OutcomeSpeculationSlower: on the nightly tip, speculative decoding
	// was slower than plain decoding; Candidates are the nights' tips
	// since it was first, Speculative the breakdown that shows it.
	OutcomeSpeculationSlower Outcome = "speculation_slower"
)

// State is where a finding stands with the tracker.
type State string

const (
	StateKept    State = "kept"    // not filed: below the confidence cut-off, unconfirmed, or not a regression
	StateFiled   State = "filed"   // an issue exists
	StateUnfiled State = "unfiled" // filing failed; `perfbot report --retry-unfiled` retries
)

// Commit is one commit of the watched repository: what gitops reads of it,
// the store remembers and the evidence shows.
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
	Author  string `json:"author"`
	Email   string `json:"email,omitempty"`
	// Date is the author date.
	Date time.Time `json:"date"`
	URL  string    `json:"url,omitempty"`
	// Parents are the hashes of its parents, the first parent first.
	Parents []string `json:"parents,omitempty"`
	// Login is the author's GitHub login when the host's API gave one. An
	// issue shows it as text, never as an @-mention: the host matches
	// commits to accounts by email, which a committer writes at will.
	Login string `json:"login,omitempty"`
	// Files are the paths the commit changes, for the docs-or-tests-only
	// warning; nil when not known.
	Files []string `json:"files,omitempty"`
}

// Short is the commit's abbreviated hash.
func (c Commit) Short() string { return ShortHash(c.Hash) }

// End is a summary of one end of the searched range.
type End struct {
	Commit Commit  `json:"commit"`
	N      int     `json:"n"`
	Median float64 `json:"median"`
	// Interval is the median's confidence interval (95%).
	Interval
	// Runs are the commit's recorded runs of the metric, oldest first:
	// the raw values behind the summary.
	Runs []RunValue `json:"runs,omitempty"`
	// CPUAffinity is the CPU list the benchmark could run on ("0-15"),
	// when the host recorded it.
	CPUAffinity string `json:"cpu_affinity,omitempty"`
}

// RunValue is one run's value of a metric, with when and where it ran and
// the host's load before it.
type RunValue struct {
	Value   float64   `json:"value"`
	Started time.Time `json:"started"`
	Host    string    `json:"host,omitempty"`
	// LoadAvg is the host's load averages before the run, as
	// /proc/loadavg gives them ("0.52 0.40 0.33"); "" when unknown.
	LoadAvg string `json:"load_avg,omitempty"`
}

// Confirmation is what fresh interleaved runs of a culprit and its parent
// showed before the culprit was reported.
type Confirmation struct {
	Confirmed bool `json:"confirmed"`
	// Pairs counts the parent/culprit pairs the verdict rests on, Fresh
	// the runs taken for it (the others were the search's).
	Pairs int `json:"pairs"`
	Fresh int `json:"fresh"`
	// Effect is the culprit's change over its parent in those runs (stored
	// as delta_pct, lo_pct and hi_pct).
	Effect Effect `json:"-"`
	// Text says it in words.
	Text string `json:"text"`
}

// MarshalJSON writes c with its effect under the names stored findings and
// the API have always used.
func (c Confirmation) MarshalJSON() ([]byte, error) {
	type plain Confirmation
	return json.Marshal(struct {
		plain
		DeltaPct float64 `json:"delta_pct"`
		LoPct    float64 `json:"lo_pct"`
		HiPct    float64 `json:"hi_pct"`
	}{plain(c), c.Effect.Pct, c.Effect.Lo, c.Effect.Hi})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Confirmation) UnmarshalJSON(data []byte) error {
	type plain Confirmation
	var j struct {
		*plain
		DeltaPct float64 `json:"delta_pct"`
		LoPct    float64 `json:"lo_pct"`
		HiPct    float64 `json:"hi_pct"`
	}
	j.plain = (*plain)(c)
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	c.Effect = Effect{Pct: j.DeltaPct, Interval: Interval{Lo: j.LoPct, Hi: j.HiPct}}
	return nil
}

// Culprit is a commit found to cause the change, with the hunks of its diff
// that explain it.
type Culprit struct {
	Commit     Commit  `json:"commit"`
	Confidence float64 `json:"confidence"`
	// Effect is the change of the commit over its parent, in percent of
	// the parent's value (stored as delta_pct, ci_lo_pct and ci_hi_pct).
	Effect Effect `json:"-"`
	// BuildIdentical is set by the caller when the commit's build output is
	// byte-identical to its parent's: the measured change cannot come from
	// its code.
	BuildIdentical bool `json:"build_identical,omitempty"`
	// NoCodeChange is set when every line the commit adds or removes is a
	// comment or blank: like BuildIdentical, the measured change cannot
	// come from it, and the finding is kept, never filed.
	NoCodeChange bool `json:"no_code_change,omitempty"`
	// Hunks are the hunks of the commit's diff localized as the cause;
	// empty when no hunk search ran.
	Hunks []Hunk `json:"hunks,omitempty"`
	// HunkEffect is the effect of Hunks applied alone on the parent and
	// reverted alone from the culprit.
	HunkEffect *HunkEffect `json:"hunk_effect,omitempty"`
	// Confirmation is what confirmed (or failed to confirm) the culprit;
	// nil for findings from before confirmations were kept.
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	// Dependencies are the dependency versions the commit changes (Go
	// modules, Python pins, submodules).
	Dependencies []DependencyChange `json:"dependencies,omitempty"`
	// Descents are the searches of those dependencies' own versions and
	// commits, in the order made (a Go module's versions, then the
	// commits between the two that differ); a dependency that could not be
	// descended into is a WarnNotDescended of the finding.
	Descents []Descent `json:"descents,omitempty"`
	// Revert is the latest proof by revert on the watched branch's tip;
	// nil until one was made.
	Revert *RevertOnTip `json:"revert,omitempty"`
}

// MarshalJSON writes c with its effect under the names stored findings and
// the API have always used.
func (c Culprit) MarshalJSON() ([]byte, error) {
	type plain Culprit
	return json.Marshal(struct {
		plain
		DeltaPct float64 `json:"delta_pct"`
		CILoPct  float64 `json:"ci_lo_pct"`
		CIHiPct  float64 `json:"ci_hi_pct"`
	}{plain(c), c.Effect.Pct, c.Effect.Lo, c.Effect.Hi})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Culprit) UnmarshalJSON(data []byte) error {
	type plain Culprit
	var j struct {
		*plain
		DeltaPct float64 `json:"delta_pct"`
		CILoPct  float64 `json:"ci_lo_pct"`
		CIHiPct  float64 `json:"ci_hi_pct"`
	}
	j.plain = (*plain)(c)
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	c.Effect = Effect{Pct: j.DeltaPct, Interval: Interval{Lo: j.CILoPct, Hi: j.CIHiPct}}
	return nil
}

// Probe is one measured commit of the search.
type Probe struct {
	Commit  Commit  `json:"commit"`
	N       int     `json:"n"`
	Median  float64 `json:"median"`
	Status  string  `json:"status"`  // ok, broken
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
}

// LineCounts counts the lines the hunk adds and removes: the "+" and "-"
// lines of its fragments (a whole-file hunk's header is not counted).
func (h Hunk) LineCounts() (added, removed int) {
	inFragment := false
	for line := range strings.SplitSeq(h.Diff, "\n") {
		switch {
		case strings.HasPrefix(line, "@@"):
			inFragment = true
		case !inFragment:
		case strings.HasPrefix(line, "+"):
			added++
		case strings.HasPrefix(line, "-"):
			removed++
		}
	}
	return added, removed
}

// Size is the hunk's line counts as every view prints them: "+4 −3".
func (h Hunk) Size() string {
	added, removed := h.LineCounts()
	return fmt.Sprintf("+%d −%d", added, removed)
}

// EnvDiff is one variable that differs between the two ends.
type EnvDiff struct {
	Name string `json:"name"`
	Good string `json:"good"`
	Bad  string `json:"bad"`
}

// Finding is a localized change with all its evidence.
type Finding struct {
	ID      string    `json:"id"` // DerivedID: the one id every view shows
	Created time.Time `json:"created"`
	Repo    string    `json:"repo"` // repository URL or path, for links and commands
	// CommitURL is the printf pattern, with one %s for the hash, of the
	// tracker's commit pages ("" when there is none). It is not stored:
	// LinkCommits puts each commit's own URL in its record.
	CommitURL  string            `json:"-"`
	Outcome    Outcome           `json:"outcome"`
	Metric     string            `json:"metric"`
	Unit       string            `json:"unit"`
	Direction  Direction         `json:"direction"` // Regression or Improvement
	Good       End               `json:"good"`
	Bad        End               `json:"bad"`
	Culprits   []Culprit         `json:"culprits,omitempty"`
	Candidates []Commit          `json:"candidates,omitempty"`
	Skipped    []Commit          `json:"skipped,omitempty"`
	Probes     []Probe           `json:"probes,omitempty"`
	Components []string          `json:"components,omitempty"`
	Confidence float64           `json:"confidence"`
	Warnings   []Warning         `json:"warnings,omitempty"`
	EnvGood    map[string]string `json:"env_good,omitempty"`
	EnvDiffs   []EnvDiff         `json:"env_diffs,omitempty"`
	History    []float64         `json:"history,omitempty"` // metric medians around the change, oldest first
	Reproduce  []string          `json:"reproduce,omitempty"`
	Logs       string            `json:"logs,omitempty"`
	// Cost is what the search that found it cost.
	Cost
	State     State  `json:"state"`
	Issue     int    `json:"issue,omitempty"`
	IssueURL  string `json:"issue_url,omitempty"`
	FileError string `json:"file_error,omitempty"`

	// Unconfirmed, when set, says how fresh interleaved runs of the
	// culprit and its parent failed to show the change again; such a
	// finding is kept, never filed.
	Unconfirmed string `json:"unconfirmed,omitempty"`

	// Speculative is the speculative-decoding breakdown at the two ends,
	// with the change split into its terms when Metric is the speculative
	// throughput; nil when the configuration has no breakdown.
	Speculative *SpecAttribution `json:"speculative,omitempty"`

	// PublishConfidence is the cut-off below which the finding is kept
	// rather than filed; Warnings flags a confidence under it. Zero means
	// DefaultPublishConfidence (PublishCutOff).
	PublishConfidence float64 `json:"publish_confidence,omitempty"`

	// GoodState and BadState are the GPU and NCCL state of the ends'
	// runs (their fingerprints without Env, which EnvGood and EnvDiffs
	// hold, GPUState combined over the end's runs); StateDiffs is how
	// they differ.
	GoodState  *Fingerprint `json:"good_state,omitempty"`
	BadState   *Fingerprint `json:"bad_state,omitempty"`
	StateDiffs []StateDiff  `json:"state_diffs,omitempty"`
	// Triage is the last triage decision; nil until someone triages it.
	Triage *TriageNote `json:"triage,omitempty"`

	// HistoryOf says what History's points are: HistoryCommits (one per
	// commit of the chain; also when empty) or HistoryNights.
	HistoryOf string `json:"history_of,omitempty"`
	// Steps are the plain shell commands of the configured build and
	// benchmark steps, for reproducing without perfbot; Version is the
	// perfbot that found it, for the perfbot commands of Reproduce.
	Steps   []string `json:"steps,omitempty"`
	Version string   `json:"version,omitempty"`
	// ParentLogs are the logs of the good side's last run (the culprit's
	// parent), beside Logs of the bad side's.
	ParentLogs string `json:"parent_logs,omitempty"`
}

// DefaultPublishConfidence is the publish cut-off (report.publish_confidence)
// when none is configured. syzbot publishes nothing under 0.66; a perfbot
// bisection stops at bisect.DefaultConfidence, so a culprit under this cut-off
// means the search ran out of budget or the signal was too noisy to trust.
const DefaultPublishConfidence = 0.9

// PublishCutOff is the confidence below which f is kept rather than filed:
// its PublishConfidence, or DefaultPublishConfidence when that is zero.
func (f *Finding) PublishCutOff() float64 {
	if f.PublishConfidence == 0 {
		return DefaultPublishConfidence
	}
	return f.PublishConfidence
}

// What a Finding's History points are.
const (
	HistoryCommits = "commits"
	HistoryNights  = "nights"
)

// TriageState is the finding's triage state, untriaged when none was set.
func (f *Finding) TriageState() Triage {
	if f.Triage == nil {
		return TriageUntriaged
	}
	return f.Triage.State.Or()
}

// LinkCommits sets the URL of every commit f names (its ends, culprits,
// candidates, skipped commits and probes) that has none, from the
// CommitURL pattern; without a pattern it does nothing. It replaces the
// slices rather than editing them, so linking a copy of a finding leaves
// the original as it was.
func (f *Finding) LinkCommits() {
	if f.CommitURL == "" {
		return
	}
	link := func(c *Commit) {
		if c.URL == "" && c.Hash != "" {
			c.URL = fmt.Sprintf(f.CommitURL, c.Hash)
		}
	}
	link(&f.Good.Commit)
	link(&f.Bad.Commit)
	f.Culprits = slices.Clone(f.Culprits)
	for i := range f.Culprits {
		link(&f.Culprits[i].Commit)
	}
	f.Probes = slices.Clone(f.Probes)
	for i := range f.Probes {
		link(&f.Probes[i].Commit)
	}
	for _, cs := range []*[]Commit{&f.Candidates, &f.Skipped} {
		*cs = slices.Clone(*cs)
		for i := range *cs {
			link(&(*cs)[i])
		}
	}
}

// Hunks returns the hunks of every culprit, in culprit order.
func (f *Finding) Hunks() []Hunk {
	var hs []Hunk
	for _, c := range f.Culprits {
		hs = append(hs, c.Hunks...)
	}
	return hs
}

// Fingerprint identifies a regression across re-detections: the metric and
// the culprit commit(s) (the candidates when no culprit was named). Hunks
// are not part of it, so bisecting the same regression with and without a
// hunk search files one issue. It is one alphanumeric token so that GitHub
// search finds it as a word.
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
	// The separator that once led to the hunks stays, so that the id of a
	// finding without hunks is the one older versions gave it.
	b.WriteString("|")
	sum := sha256.Sum256([]byte(b.String()))
	return FindingMarker + hex.EncodeToString(sum[:10])
}

// FindingMarker starts every fingerprint: the marker an issue body
// carries, so that a tracker search finds the issue of a finding. A
// finding's id (DerivedID) is shorter, and an older perfbot's id was the
// fingerprint itself (FindingID maps it).
const FindingMarker = "perfbotfp"

// IDDigits is how many hex digits a finding's id has: few enough to read
// and type (any unique prefix of it names the finding), enough that two
// findings of one store do not share it (40 bits).
const IDDigits = 10

// DerivedID is the id f is stored and shown under, everywhere: the table,
// JSON, the API, the dashboard and the issue. It is FindingID of its key,
// the fingerprint followed, for an outcome whose fingerprint another
// outcome can share, by what tells them apart: "-nr:" and the two ends
// for a finding that was not reproduced (each range its own finding), "-"
// and the outcome for a nightly one (build broken, missing data,
// speculation slower). The id of a culprit's, candidates' or inconclusive
// finding is thus the first IDDigits digits of the fingerprint its issue
// carries.
func (f *Finding) DerivedID() string {
	key := f.Fingerprint()
	switch f.Outcome {
	case OutcomeCulprit, OutcomeCandidates, OutcomeInconclusive, "":
	case OutcomeNotReproduced:
		key += "-nr:" + f.Good.Commit.Hash + ".." + f.Bad.Commit.Hash
	default:
		key += "-" + string(f.Outcome)
	}
	return FindingID(key)
}

// FindingID is the id of the finding whose key is key: the first IDDigits
// hex digits of a fingerprint (all of them, for a shorter prefix of one),
// or of the SHA-256 of any other key. An older perfbot's id was such a key
// (the fingerprint, or it with a suffix such as "-nr"): FindingID of it is
// the id that finding has now, which is how stores are migrated and old
// ids still name their findings.
func FindingID(key string) string {
	if digits, ok := strings.CutPrefix(key, FindingMarker); ok && isHex(digits) {
		return digits[:min(len(digits), IDDigits)]
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:IDDigits]
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return s != ""
}
