package main

import (
	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
)

// The JSON documents that bisect, hunks and envbisect print with --json.
// Their names are the commands' contract, kept whatever the records' own
// layout: an interval is a two-element "ci" or "ci_pct", a commit is named
// with its subject, and warnings are sentences.

type bisectDoc struct {
	Verdict      record.Outcome   `json:"verdict"`
	Metric       string           `json:"metric"`
	Unit         string           `json:"unit"`
	Direction    record.Direction `json:"direction"`
	Good         endDoc           `json:"good"`
	Bad          endDoc           `json:"bad"`
	Culprits     []culpritDoc     `json:"culprits"`
	Candidates   []commitDoc      `json:"candidates"`
	Skipped      []commitDoc      `json:"skipped"`
	SkippedInfra []commitDoc      `json:"skipped_infra,omitempty"`
	Probes       []probeDoc       `json:"probes"`
	Warnings     []string         `json:"warnings,omitempty"`
	Runs         int              `json:"runs"`
	Samples      int              `json:"samples"`
	Builds       int              `json:"builds"`
	WallSeconds  float64          `json:"wall_seconds"`
	JobID        string           `json:"job_id"`
	// Hunks are the hunk searches in the culprits' order, null for a
	// culprit whose hunks were not searched.
	Hunks    []*hunksDoc `json:"hunks,omitempty"`
	Findings []string    `json:"findings,omitempty"`
}

type endDoc struct {
	Commit  string     `json:"commit"`
	Subject string     `json:"subject"`
	N       int        `json:"n"`
	Median  float64    `json:"median"`
	CI      [2]float64 `json:"ci"`
}

type culpritDoc struct {
	Commit       string               `json:"commit"`
	Subject      string               `json:"subject"`
	Author       string               `json:"author"`
	Confidence   float64              `json:"confidence"`
	DeltaPct     float64              `json:"delta_pct"`
	CIPct        [2]float64           `json:"ci_pct"`
	Direction    record.Direction     `json:"direction"`
	Confirmed    bool                 `json:"confirmed"`
	Confirmation string               `json:"confirmation,omitempty"`
	Confirm      *record.Confirmation `json:"confirm,omitempty"`
	ParentRuns   endDoc               `json:"parent_runs"`
	CulpritRuns  endDoc               `json:"culprit_runs"`
	// Descents are the descents into the dependencies the culprit bumps
	// (with --hunks), in the order made.
	Descents []descentDoc `json:"descents,omitempty"`
}

// descentDoc is one descent into a dependency bump: the dependency, what
// was searched, and the culprit version or commit.
type descentDoc struct {
	Dependency    string           `json:"dependency"`
	Kind          string           `json:"kind"`
	File          string           `json:"file"`
	Old           string           `json:"old"`
	New           string           `json:"new"`
	Over          string           `json:"over"`
	Searched      int              `json:"searched"`
	Verdict       record.Outcome   `json:"verdict"`
	Before        string           `json:"before,omitempty"`
	Culprit       string           `json:"culprit,omitempty"`
	Subject       string           `json:"subject,omitempty"`
	PseudoVersion string           `json:"pseudo_version,omitempty"`
	DeltaPct      float64          `json:"delta_pct"`
	CIPct         [2]float64       `json:"ci_pct"`
	Confidence    float64          `json:"confidence"`
	Confirmed     bool             `json:"confirmed"`
	Steps         []descentStepDoc `json:"steps"`
	Hunks         []hunkDoc        `json:"hunks,omitempty"`
}

type descentStepDoc struct {
	Version string  `json:"version"`
	Commit  string  `json:"commit"`
	N       int     `json:"n"`
	Median  float64 `json:"median"`
	Verdict string  `json:"verdict"`
}

func descentJSON(d record.Descent) descentDoc {
	doc := descentDoc{
		Dependency: d.Dependency.Name, Kind: d.Dependency.Kind, File: d.Dependency.File, Old: d.Dependency.Old, New: d.Dependency.New,
		Over: d.Over, Searched: d.Searched, Verdict: d.Outcome, Before: d.Before, Culprit: d.Culprit, PseudoVersion: d.PseudoVersion,
		DeltaPct: d.Effect.Pct, CIPct: [2]float64{d.Effect.Lo, d.Effect.Hi}, Confidence: d.Confidence, Confirmed: d.Confirmed,
		Steps: []descentStepDoc{},
	}
	if d.Commit != nil {
		doc.Subject = d.Commit.Subject
	}
	for _, s := range d.Steps {
		doc.Steps = append(doc.Steps, descentStepDoc(s))
	}
	for _, h := range d.Hunks {
		doc.Hunks = append(doc.Hunks, hunkJSON(h))
	}
	return doc
}

type commitDoc struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
}

type probeDoc struct {
	Commit  string  `json:"commit"`
	Subject string  `json:"subject"`
	Index   int     `json:"index"`
	N       int     `json:"n"`
	Median  float64 `json:"median"`
	Status  string  `json:"status"`
	Side    string  `json:"side,omitempty"`
}

// bisectJSON is the document `perfbot bisect --json` prints.
func bisectJSON(b *service.Bisection) *bisectDoc {
	end := func(e bisect.EndSummary) endDoc {
		return endDoc{Commit: e.Commit, Subject: b.Commit(e.Commit).Subject, N: e.N, Median: e.Median, CI: [2]float64{e.Lo, e.Hi}}
	}
	commits := func(hashes []string) []commitDoc {
		out := make([]commitDoc, 0, len(hashes))
		for _, h := range hashes {
			out = append(out, commitDoc{Commit: h, Subject: b.Commit(h).Subject})
		}
		return out
	}
	d := &bisectDoc{
		Verdict: b.Verdict, Metric: b.Metric, Unit: b.Unit, Direction: b.Direction, Good: end(b.Good), Bad: end(b.Bad),
		Culprits: []culpritDoc{}, Candidates: commits(b.Candidates), Skipped: commits(b.Skipped), Probes: []probeDoc{},
		Warnings: record.WarningStrings(b.Warnings), Runs: b.Runs, Samples: b.Samples, Builds: b.Builds, WallSeconds: b.WallSeconds,
		JobID: b.JobID, Findings: b.Findings,
	}
	if len(b.SkippedInfra) > 0 {
		d.SkippedInfra = commits(b.SkippedInfra)
	}
	for _, c := range b.Culprits {
		commit := b.Commit(c.Commit)
		cd := culpritDoc{
			Commit: c.Commit, Subject: commit.Subject, Author: commit.Author, Confidence: c.Confidence,
			DeltaPct: c.Effect.Pct, CIPct: [2]float64{c.Effect.Lo, c.Effect.Hi}, Direction: c.Direction,
			ParentRuns: end(c.Parent), CulpritRuns: end(c.Self),
		}
		if conf := c.Confirmation; conf != nil {
			cd.Confirmed, cd.Confirmation = conf.Confirmed, conf.String()
			cd.Confirm = conf.Record()
		}
		for _, ds := range b.Descents[c.Commit] {
			cd.Descents = append(cd.Descents, descentJSON(ds))
		}
		d.Culprits = append(d.Culprits, cd)
		if len(b.Hunks) > 0 {
			d.Hunks = append(d.Hunks, hunksJSON(b.Hunks[c.Commit]))
		}
	}
	for _, p := range b.Probes {
		d.Probes = append(d.Probes, probeDoc{Commit: p.Commit, Subject: b.Commit(p.Commit).Subject, Index: p.Index, N: p.N, Median: p.Median, Status: p.Status, Side: p.Side})
	}
	return d
}

type hunksDoc struct {
	Base            string           `json:"base"`
	Change          string           `json:"change"`
	Subject         string           `json:"subject,omitempty"`
	Metric          string           `json:"metric"`
	Direction       record.Direction `json:"direction"`
	TotalHunks      int              `json:"total_hunks"`
	Hunks           []hunkDoc        `json:"hunks"`
	Effect          effectDoc        `json:"effect"`
	Tests           []testDoc        `json:"tests"`
	Unresolved      [][]string       `json:"unresolved"`
	Configurations  int              `json:"configurations"`
	Runs            int              `json:"runs"`
	Builds          int              `json:"builds"`
	WallSeconds     float64          `json:"wall_seconds"`
	Warnings        []string         `json:"warnings,omitempty"`
	Undecided       []string         `json:"undecided,omitempty"`
	NoRuntimeChange string           `json:"no_runtime_change,omitempty"`
}

type hunkDoc struct {
	ID        string `json:"id"`
	File      string `json:"file"`
	Component string `json:"component"`
	Function  string `json:"function"`
	OldStart  int    `json:"old_start"`
	OldLines  int    `json:"old_lines"`
	NewStart  int    `json:"new_start"`
	NewLines  int    `json:"new_lines"`
	Diff      string `json:"diff"`
}

// effectDoc holds the effects of a set applied alone and reverted alone;
// one that was not measured is null.
type effectDoc struct {
	Applied  *deltaDoc `json:"applied"`
	Reverted *deltaDoc `json:"reverted"`
}

type deltaDoc struct {
	DeltaPct float64    `json:"delta_pct"`
	CIPct    [2]float64 `json:"ci_pct"`
	N        int        `json:"n"`
}

type testDoc struct {
	Set     []string `json:"set"`
	Side    string   `json:"side"`
	N       int      `json:"n"`
	Median  float64  `json:"median"`
	PBad    float64  `json:"p_bad"`
	Outcome string   `json:"outcome"`
}

// hunksJSON is the document `perfbot hunks --json` prints; nil for nil.
func hunksJSON(r *service.HunksReport) *hunksDoc {
	if r == nil {
		return nil
	}
	d := &hunksDoc{
		Base: r.Base, Change: r.Change, Subject: r.Subject, Metric: r.Metric, Direction: r.Direction, TotalHunks: r.TotalHunks,
		Hunks: []hunkDoc{}, Effect: effectJSON(r.Applied, r.Reverted), Tests: testsJSON(r.Tests), Unresolved: r.Unresolved,
		Configurations: r.Configurations, Runs: r.Runs, Builds: r.Builds, WallSeconds: r.WallSeconds,
		Warnings: record.WarningStrings(r.Warnings), Undecided: r.Undecided, NoRuntimeChange: r.NoRuntimeChange,
	}
	for _, h := range r.Hunks {
		d.Hunks = append(d.Hunks, hunkJSON(h))
	}
	return d
}

type envBisectDoc struct {
	Commit      string            `json:"commit"`
	Metric      string            `json:"metric"`
	Differing   []string          `json:"differing"`
	Minimal     []string          `json:"minimal"`
	Good        map[string]string `json:"good"`
	Bad         map[string]string `json:"bad"`
	Effect      effectDoc         `json:"effect"`
	Tests       []testDoc         `json:"tests"`
	Unresolved  [][]string        `json:"unresolved"`
	Runs        int               `json:"runs"`
	Builds      int               `json:"builds"`
	WallSeconds float64           `json:"wall_seconds"`
	Warnings    []string          `json:"warnings,omitempty"`
}

// envBisectJSON is the document `perfbot envbisect --json` prints.
func envBisectJSON(r *service.EnvBisectReport) *envBisectDoc {
	return &envBisectDoc{
		Commit: r.Commit, Metric: r.Metric, Differing: r.Differing, Minimal: r.Minimal, Good: r.Good, Bad: r.Bad,
		Effect: effectJSON(r.Applied, r.Reverted), Tests: testsJSON(r.Tests), Unresolved: r.Unresolved,
		Runs: r.Runs, Builds: r.Builds, WallSeconds: r.WallSeconds, Warnings: record.WarningStrings(r.Warnings),
	}
}

func effectJSON(applied, reverted minimize.Effect) effectDoc {
	delta := func(e minimize.Effect) *deltaDoc {
		if !e.Measured() {
			return nil
		}
		return &deltaDoc{DeltaPct: e.Pct, CIPct: [2]float64{e.Lo, e.Hi}, N: e.N}
	}
	return effectDoc{Applied: delta(applied), Reverted: delta(reverted)}
}

func testsJSON(tests []minimize.Test) []testDoc {
	out := []testDoc{}
	for _, t := range tests {
		out = append(out, testDoc{Set: t.Set, Side: t.Side, N: t.N, Median: t.Median, PBad: t.PBad, Outcome: t.Outcome})
	}
	return out
}

func hunkJSON(h record.Hunk) hunkDoc {
	return hunkDoc{ID: h.ID, File: h.File, Component: h.Component, Function: h.Function,
		OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines, Diff: h.Diff}
}
