package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

// HunksRequest asks which hunks of a change cause its effect.
type HunksRequest struct {
	// Rev is the commit whose diff against its first parent is searched.
	Rev string
	// Worktree searches the uncommitted changes of the configured working
	// copy against its HEAD instead of a commit.
	Worktree bool
	Metric   string
	// Direction is the kind of change whose hunks are searched: a
	// regression (the default) or an improvement. An improvement's hunks
	// are the ones that make the change better.
	Direction record.Direction
	// Known is the change's effect as a confirmed bisection measured it
	// (its culprit against the parent). A change of one hunk is then
	// named without a run: applying that hunk to the parent is the commit
	// itself, so the commit's effect is the hunk's. A change of
	// documentation only is searched all the same. Nil measures.
	Known *minimize.Effect
}

// HunksReport is the outcome of a hunk search as `perfbot hunks` prints it.
type HunksReport struct {
	Base    string `json:"base"`
	Change  string `json:"change"` // the commit, or "worktree"
	Subject string `json:"subject,omitempty"`
	Metric  string `json:"metric"`
	// Direction is the kind of change whose hunks were searched.
	Direction  record.Direction `json:"direction"`
	TotalHunks int              `json:"total_hunks"`
	// Hunks are the minimal set, by file.
	Hunks []record.Hunk `json:"hunks"`
	// Applied and Reverted are the effect of the minimal set applied
	// alone to the base and reverted alone from the change.
	Applied  minimize.Effect `json:"applied"`
	Reverted minimize.Effect `json:"reverted"`
	Tests    []minimize.Test `json:"tests"`
	// Unresolved are the configurations that did not apply or build, or
	// stayed undecided.
	Unresolved [][]string `json:"unresolved"`
	// Configurations counts the distinct configurations measured, the two
	// ends included.
	Configurations int `json:"configurations"`
	record.Cost
	Warnings []record.Warning `json:"warnings,omitempty"`
	// Undecided are hunks of the minimal set whose effect could not be
	// measured; they are not among Hunks.
	Undecided []string `json:"undecided,omitempty"`
	// NoRuntimeChange says why no hunk of the change can change the
	// benchmark (it touches documentation only, and no effect of it was
	// measured: HunksRequest.Known is nil); nothing was measured.
	NoRuntimeChange string `json:"no_runtime_change,omitempty"`
	// patch is the diff searched, for the finding of a culprit whose hunks
	// were searched in the same job: one diff of the commit, not two.
	patch *gitops.Patch
}

// Hunks searches the hunks of a commit (or of the working copy's
// uncommitted changes) for the minimal set that causes the change, with
// hierarchical delta debugging: files first, then hunks within files.
func (b *Bot) Hunks(ctx context.Context, req HunksRequest) (*HunksReport, error) {
	meter := b.startMeter()
	metric, err := b.metric(req.Metric)
	if err != nil {
		return nil, err
	}
	var (
		patch *gitops.Patch
		full  string
		rep   = &HunksReport{Metric: metric.Name, Direction: req.Direction}
	)
	switch req.Direction {
	case "":
		rep.Direction = record.Regression
	case record.Regression, record.Improvement:
	default:
		return nil, &record.InputError{Err: fmt.Errorf("hunks: direction %q: want %s or %s", req.Direction, record.Regression, record.Improvement)}
	}
	if req.Worktree {
		dir := b.Config.Repo.URL
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, &record.InputError{Err: fmt.Errorf("hunks --worktree: repo.url %q is not a local working copy", dir)}
		}
		// perfbot's own files, when its configuration sits inside the
		// working copy, are not the user's changes.
		store := b.Store.Path()
		p, head, err := b.Repo.WorkingDiff(ctx, dir, b.Config.Workdir, store, EndpointPath(store), b.Config.IssuesDir, b.Config.Path)
		if err != nil {
			return nil, &record.InputError{Err: fmt.Errorf("hunks --worktree: %w", err)}
		}
		if err := b.putCommit(head); err != nil {
			return nil, err
		}
		patch, rep.Change, rep.Subject = p, "worktree", "uncommitted changes in "+dir
	} else {
		c, err := b.resolve(ctx, req.Rev)
		if err != nil {
			return nil, err
		}
		if len(c.Parents) == 0 {
			return nil, &record.InputError{Err: fmt.Errorf("hunks %s: the root commit has no parent to compare with", c.Short())}
		}
		parent, err := b.Repo.Commit(ctx, c.Parents[0])
		if err != nil {
			return nil, err
		}
		if err := b.putCommit(parent); err != nil {
			return nil, err
		}
		p, err := b.Repo.Diff(ctx, parent.Hash, c.Hash)
		if err != nil {
			return nil, fmt.Errorf("diff %s: %w", c.Short(), err)
		}
		patch, full, rep.Change, rep.Subject = p, c.Hash, c.Hash, c.Subject
	}
	rep.Base, rep.patch = patch.Base, patch
	all := patch.Hunks()
	rep.TotalHunks = len(all)
	if len(all) == 0 {
		return nil, &record.InputError{Err: fmt.Errorf("hunks %s: the change has no hunks", rep.Change)}
	}
	// File names only guess what a build or benchmark reads: a change
	// whose effect a confirmed bisection measured is searched whatever
	// its files are called (a benchmark can read a docs/ file).
	if why := b.docsOnly(patch); why != "" && req.Known == nil {
		rep.NoRuntimeChange, rep.Hunks, rep.Tests, rep.Unresolved = why, []record.Hunk{}, []minimize.Test{}, [][]string{}
		b.progressf("hunks of %s: %s", record.ShortHash(rep.Change), why)
		rep.Cost = meter.read()
		return rep, nil
	}
	if len(all) == 1 && req.Known != nil && !req.Worktree {
		b.progressf("hunks of %s: one hunk, the whole change: its effect is the commit's, measured by the bisection", record.ShortHash(rep.Change))
		rep.Hunks = []record.Hunk{b.hunkOf(all[0])}
		rep.Applied = *req.Known
		rep.Reverted = minimize.Effect{Effect: req.Known.Inverse(), N: req.Known.N}
		rep.Tests, rep.Unresolved = []minimize.Test{}, [][]string{}
		rep.Cost = meter.read()
		return rep, nil
	}
	params := map[string]any{"base": patch.Base, "change": rep.Change, "patch": patch.ID, "metric": metric.Name, "spec": b.Oracle.SpecHash()}
	if rep.Direction == record.Improvement {
		params["direction"] = rep.Direction
	}
	return runJob(b, record.JobHunks, params, func(jb *Bot, _, _ func(any)) (*HunksReport, error) {
		return jb.hunks(ctx, meter, metric, patch, full, rep)
	})
}

// hunks is the body of the hunk search job.
func (b *Bot) hunks(ctx context.Context, meter meter, metric record.Metric, patch *gitops.Patch, full string, rep *HunksReport) (*HunksReport, error) {
	all := patch.Hunks()
	b.progressf("hunks of %s: %d hunks in %d files on %s", record.ShortHash(rep.Change), len(all), len(patch.Files), metric.Name)

	groups := make([]minimize.Group, 0, len(patch.Files))
	for _, f := range patch.Files {
		g := minimize.Group{Name: f.NewPath}
		if g.Name == "" {
			g.Name = f.OldPath
		}
		for _, h := range f.Hunks {
			g.Elements = append(g.Elements, h.ID)
		}
		if len(g.Elements) > 0 {
			groups = append(groups, g)
		}
	}
	opts := b.setSearch(searchedWorse(metric.Better, rep.Direction))
	opts.Groups, opts.Deps = groups, patch.Dependencies()
	iso, err := minimize.Isolate(ctx, newHunkOracle(b.Oracle, metric.Name, patch, full), opts)
	if err != nil {
		switch {
		case errors.Is(err, minimize.ErrEndsAlike):
			return nil, &record.InputError{Err: fmt.Errorf("hunks %s: %w (measured here, the change's effect on %s cannot be told from none, so no hunk can be singled out)", record.ShortHash(rep.Change), err, metric.Name)}
		case errors.Is(err, minimize.ErrNotWorse):
			return nil, &record.InputError{Err: fmt.Errorf("hunks %s: %w (measured again, the change is no %s of %s)", record.ShortHash(rep.Change), err, rep.Direction, metric.Name)}
		}
		return nil, fmt.Errorf("hunks %s: %w", record.ShortHash(rep.Change), err)
	}
	byID := map[string]*gitops.Hunk{}
	for _, h := range all {
		byID[h.ID] = h
	}
	for _, id := range iso.Minimal {
		rep.Hunks = append(rep.Hunks, b.hunkOf(byID[id]))
	}
	sort.Slice(rep.Hunks, func(i, j int) bool { return rep.Hunks[i].File < rep.Hunks[j].File })
	rep.Applied, rep.Reverted = iso.Applied, iso.Reverted
	rep.Warnings = iso.Warnings
	rep.Undecided = iso.Undecided
	rep.Tests = testsOf(iso)
	rep.Unresolved = iso.Unresolved
	if rep.Unresolved == nil {
		rep.Unresolved = [][]string{}
	}
	rep.Configurations = iso.Configurations
	rep.Cost = meter.read()
	return rep, nil
}

// hunkOf is the record of hunk h, with the configured component of its
// file.
func (b *Bot) hunkOf(h *gitops.Hunk) record.Hunk {
	return record.Hunk{
		ID: h.ID, File: h.File, Component: b.Config.Components.Match(h.File), Function: h.Function,
		OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines, Diff: h.Text,
	}
}

// setSearch is the one set of options of every hunk and environment
// search (bisect.hunk_confidence, bisect.hunk_repeats, max_hunk_runs and
// min_effect), for a metric whose worse direction is better's opposite.
func (b *Bot) setSearch(better record.Better) minimize.Options {
	return minimize.Options{
		Confidence:  b.Config.Bisect.HunkConfidence,
		Better:      better,
		InitialRuns: b.Config.Bisect.HunkRepeats,
		MaxRuns:     b.Config.Bisect.MaxHunkRuns,
		MinEffect:   b.Config.Bisect.MinEffect,
		Logger:      b.Logger,
		OnTest:      b.testProgress,
		OnStep:      b.stepProgress,
	}
}

// searchedWorse is the direction minimize.Isolate is to treat as worse
// when it searches the hunks of a change in direction d: the metric's own
// for a regression, the other for an improvement (whose "bad end", the
// one the hunks turn the parent into, is the better one).
func searchedWorse(better record.Better, d record.Direction) record.Better {
	if d != record.Improvement {
		return better
	}
	switch better {
	case record.Higher:
		return record.Lower
	case record.Lower:
		return record.Higher
	}
	return better
}

// EnvBisectRequest asks which environment variables explain a change.
type EnvBisectRequest struct {
	Rev             string
	GoodEnv, BadEnv string // files of NAME=VALUE lines
	Metric          string
}

// EnvBisectReport is the outcome of `perfbot envbisect`.
type EnvBisectReport struct {
	Commit     string            `json:"commit"`
	Metric     string            `json:"metric"`
	Differing  []string          `json:"differing"`
	Minimal    []string          `json:"minimal"`
	Good       map[string]string `json:"good"`
	Bad        map[string]string `json:"bad"`
	Applied    minimize.Effect   `json:"applied"`
	Reverted   minimize.Effect   `json:"reverted"`
	Tests      []minimize.Test   `json:"tests"`
	Unresolved [][]string        `json:"unresolved"`
	record.Cost
	Warnings []record.Warning `json:"warnings,omitempty"`
}

// EnvBisect finds the smallest set of environment variables whose values
// explain the difference between two environments at one commit.
func (b *Bot) EnvBisect(ctx context.Context, req EnvBisectRequest) (*EnvBisectReport, error) {
	meter := b.startMeter()
	metric, err := b.metric(req.Metric)
	if err != nil {
		return nil, err
	}
	good, err := ReadEnvFile(req.GoodEnv)
	if err != nil {
		return nil, &record.InputError{Err: err}
	}
	bad, err := ReadEnvFile(req.BadEnv)
	if err != nil {
		return nil, &record.InputError{Err: err}
	}
	c, err := b.resolve(ctx, req.Rev)
	if err != nil {
		return nil, err
	}
	names := minimize.EnvDiff(good, bad)
	if len(names) == 0 {
		return nil, &record.InputError{Err: fmt.Errorf("envbisect: %s and %s set the same variables", req.GoodEnv, req.BadEnv)}
	}
	params := map[string]any{"commit": c.Hash, "metric": metric.Name, "good": good, "bad": bad, "spec": b.Oracle.SpecHash()}
	return runJob(b, record.JobEnvBisect, params, func(jb *Bot, _, _ func(any)) (*EnvBisectReport, error) {
		return jb.envBisect(ctx, meter, metric, c, names, good, bad)
	})
}

// envBisect is the body of the environment search job.
func (b *Bot) envBisect(ctx context.Context, meter meter, metric record.Metric, c record.Commit, names []string, good, bad map[string]string) (*EnvBisectReport, error) {
	b.progressf("envbisect at %s: %d variables differ: %s", c.Short(), len(names), strings.Join(names, " "))
	o := &envOracle{o: b.Oracle, metric: metric.Name, commit: c.Hash, good: good, bad: bad}
	opts := b.setSearch(metric.Better)
	opts.Groups = []minimize.Group{{Name: "env", Elements: names}}
	iso, err := minimize.Isolate(ctx, o, opts)
	if err != nil {
		switch {
		case errors.Is(err, minimize.ErrEndsAlike):
			return nil, &record.InputError{Err: fmt.Errorf("envbisect: %w (measured here, the two environments make no measurable difference to %s at %s)", err, metric.Name, c.Short())}
		case errors.Is(err, minimize.ErrNotWorse):
			return nil, &record.InputError{Err: fmt.Errorf("envbisect: %w (the bad environment is no slower for %s at %s)", err, metric.Name, c.Short())}
		}
		return nil, fmt.Errorf("envbisect %s: %w", c.Short(), err)
	}
	rep := &EnvBisectReport{Commit: c.Hash, Metric: metric.Name, Differing: names, Minimal: iso.Minimal, Good: good, Bad: bad,
		Applied: iso.Applied, Reverted: iso.Reverted, Tests: testsOf(iso), Unresolved: iso.Unresolved, Warnings: iso.Warnings}
	rep.Cost = meter.read()
	return rep, nil
}

// testsOf is the search's tests, an empty list when it had none.
func testsOf(iso *minimize.Isolation) []minimize.Test {
	if iso.Tests == nil {
		return []minimize.Test{}
	}
	return iso.Tests
}

// ReadEnvFile reads NAME=VALUE lines; blank lines and # comments are
// skipped, `export ` prefixes and matching quotes are removed.
func ReadEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read env file: %w", err)
	}
	return ParseEnv(filepath.Base(path), data)
}

// envName is what a shell accepts as a variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseEnv reads NAME=VALUE lines (blank lines and # comments skipped, an
// optional "export " prefix, one pair of matching quotes around the value
// removed). A name that is not a variable name, a value holding a NUL and
// a name given twice are errors naming the file and the line.
func ParseEnv(name string, data []byte) (map[string]string, error) {
	env := map[string]string{}
	seen := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, value, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s:%d: want NAME=VALUE, got %q", name, i+1, line)
		case !envName.MatchString(key):
			return nil, fmt.Errorf("%s:%d: %q is not a variable name (letters, digits and _, not starting with a digit)", name, i+1, key)
		case strings.ContainsRune(value, 0):
			return nil, fmt.Errorf("%s:%d: the value of %s holds a NUL byte", name, i+1, key)
		case seen[key] > 0:
			return nil, fmt.Errorf("%s:%d: %s is set again (first on line %d)", name, i+1, key, seen[key])
		}
		seen[key] = i + 1
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		env[key] = value
	}
	return env, nil
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
