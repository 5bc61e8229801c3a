package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
)

// defaultGoProxy is the go command's GOPROXY when the environment sets
// none.
const defaultGoProxy = "https://proxy.golang.org,direct"

// notDescended is why a dependency bump was not descended into: a caveat
// of the finding, not an error of the job.
type notDescended struct{ reason string }

func (e *notDescended) Error() string { return e.reason }

func skip(format string, args ...any) error {
	return &notDescended{reason: fmt.Sprintf(format, args...)}
}

// descend goes down into the dependency bumps of every confirmed culprit
// of bis: a culprit that changes a dependency's version is measured with
// the dependency at each version (or commit) between the two, and the
// same bisection as the commits' (bisect.Locate through the Oracle) names
// the version, then the commit, of the dependency that makes the change,
// then its hunks. Each version or commit is a commit perfbot makes on top
// of the culprit (gitops.SwapDependency), so everything that measures
// commits measures it as it is. Go modules are searched over the module
// proxy's versions (GOPROXY) and, where the module's repository is
// configured (dependencies), over the commits between the two versions
// that differ; submodules and configured git dependencies over their
// commits; Python pins over the versions of the package's configured
// directory of wheels. What cannot be descended into (a Python pin
// without a wheels directory, a repository that cannot be reached, a
// version that is not semantic) is a
// WarnNotDescended on bis, and the culprit stands. The confirmations
// known from the job's state are taken as made, and each new one is
// given to confirmed to be persisted, as the bisection's own are.
func (b *Bot) descend(ctx context.Context, bis *Bisection, metric record.Metric, known map[string]bisect.Confirmation, confirmed func(bisect.Confirmation)) (map[string][]record.Descent, error) {
	run := &descentRun{metric: metric, known: known, confirmed: confirmed}
	out := map[string][]record.Descent{}
	for _, c := range bis.Culprits {
		if c.Confirmation == nil || !c.Confirmation.Confirmed {
			continue
		}
		culprit := bis.Commit(c.Commit)
		bumps, err := b.bumps(ctx, bis, culprit)
		if err != nil {
			return nil, err
		}
		for _, d := range bumps {
			ds, err := b.descendInto(ctx, culprit, d, c.Direction, run)
			var nd *notDescended
			switch {
			case errors.As(err, &nd):
				b.progressf("not descended into %s: %s", d, nd.reason)
				bis.Warnings = append(bis.Warnings, record.Warning{Kind: record.WarnNotDescended, Commit: c.Commit, Text: d.String(), Reasons: []string{nd.reason}})
			case err != nil:
				return nil, fmt.Errorf("descend into %s of %s: %w", d.Name, culprit.Short(), err)
			}
			if len(ds) > 0 {
				out[c.Commit] = append(out[c.Commit], ds...)
			}
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// bumps are the dependency changes of culprit that may explain its
// change: those of its minimal hunks when its hunks were searched and
// found, else all of them.
func (b *Bot) bumps(ctx context.Context, bis *Bisection, culprit record.Commit) ([]record.DependencyChange, error) {
	if len(culprit.Parents) == 0 {
		return nil, nil
	}
	hr := bis.Hunks[culprit.Hash]
	p, err := b.culpritDiff(ctx, hr, culprit.Parents[0], culprit.Hash)
	if err != nil {
		return nil, fmt.Errorf("dependencies of %s: %w", culprit.Short(), err)
	}
	all := p.DependencyChanges()
	subs, err := b.Repo.SubmoduleChanges(ctx, culprit.Parents[0], culprit.Hash)
	if err != nil {
		return nil, err
	}
	all = append(all, subs...)
	if hr == nil || len(hr.Hunks) == 0 {
		return all, nil
	}
	return slices.DeleteFunc(all, func(d record.DependencyChange) bool {
		return !slices.ContainsFunc(hr.Hunks, func(h record.Hunk) bool { return h.File == d.File && mentions(h.Diff, d) })
	}), nil
}

// mentions reports whether diff names d's dependency: a Python package
// in any spelling PEP 503 deems its name (d.Name is normalized, the pin
// may write "Flash_Infer").
func mentions(diff string, d record.DependencyChange) bool {
	if d.Kind == record.DependencyPython {
		return strings.Contains(gitops.PythonPackageName(diff), d.Name)
	}
	return strings.Contains(diff, d.Name)
}

// descendInto is the descent into one dependency change d of culprit.
func (b *Bot) descendInto(ctx context.Context, culprit record.Commit, d record.DependencyChange, dir record.Direction, run *descentRun) ([]record.Descent, error) {
	if d.Old == "" || d.New == "" {
		return nil, skip("the commit adds or drops it: there is no range to search")
	}
	switch d.Kind {
	case record.DependencyGo:
		return b.descendGo(ctx, culprit, d, dir, run)
	case record.DependencySubmodule:
		dep, ok := b.Config.Dependencies.Find(d.Name)
		if !ok || dep.Repo == "" {
			url, err := b.Repo.SubmoduleURL(ctx, culprit.Hash, d.Name)
			if err != nil {
				return nil, skip("its repository is neither configured (dependencies) nor in .gitmodules: %v", err)
			}
			dep.Name, dep.Repo = d.Name, url
		}
		if dep.Path == "" {
			dep.Path = d.Name
		}
		one, err := b.descendCommits(ctx, culprit, d, dep.Repo, dep.Path, "", d.Old, d.New, dir, run)
		return one, err
	case record.DependencyPython:
		return b.descendPython(ctx, culprit, d, dir, run)
	}
	return nil, skip("a dependency of kind %q", d.Kind)
}

// descendGo searches a Go module's versions between d's two, from the
// module proxy, and then, where the module's repository is configured,
// the commits between the two versions that differ.
func (b *Bot) descendGo(ctx context.Context, culprit record.Commit, d record.DependencyChange, dir record.Direction, run *descentRun) ([]record.Descent, error) {
	goproxy := os.Getenv("GOPROXY")
	if goproxy == "" {
		goproxy = defaultGoProxy
	}
	versions, err := gitops.GoModuleVersions(ctx, goproxy, d.Name, d.Old, d.New)
	if err != nil {
		return nil, skip("%v", err)
	}
	b.progressf("descend into %s: %d versions %s … %s from the module proxy", d.Name, len(versions), d.Old, d.New)
	chain, err := b.swapChain(ctx, culprit, len(versions), func(i int) (gitops.DependencySwap, string) {
		return gitops.DependencySwap{GoMod: d.File, Module: d.Name, Version: versions[i]}, d.Name + "@" + versions[i]
	})
	if err != nil {
		return nil, err
	}
	ds, err := b.searchDescent(ctx, d, record.DescentVersions, chain, versions, dir, run)
	if err != nil {
		return nil, err
	}
	out := []record.Descent{ds.Descent}
	dep, ok := b.Config.Dependencies.Find(d.Name)
	if !ok || dep.Repo == "" || ds.Outcome != record.OutcomeCulprit {
		return out, nil
	}
	if err := b.Repo.FetchDependency(ctx, dep.Name, dep.Repo); err != nil {
		b.progressf("the commits of %s were not searched: %v", d.Name, err)
		return out, nil
	}
	from, errFrom := b.Repo.DependencyTag(ctx, dep.Name, ds.Before)
	to, errTo := b.Repo.DependencyTag(ctx, dep.Name, ds.Culprit)
	if err := errors.Join(errFrom, errTo); err != nil {
		b.progressf("the commits of %s were not searched: %v", d.Name, err)
		return out, nil
	}
	where := dep.Path
	if where == "" {
		where = path.Join("_perfbot_deps", strings.ReplaceAll(dep.Name, "/", "_"))
	}
	commits, err := b.descendCommits(ctx, culprit, d, dep.Repo, where, d.Name, from.Hash, to.Hash, dir, run)
	if err != nil {
		var nd *notDescended
		if errors.As(err, &nd) {
			b.progressf("the commits of %s were not searched: %s", d.Name, nd.reason)
			return out, nil
		}
		return nil, err
	}
	for i := range commits {
		if c := commits[i].Commit; c != nil {
			commits[i].PseudoVersion = gitops.GoPseudoVersion(ds.Before, *c)
		}
	}
	return append(out, commits...), nil
}

// descendPython searches the versions of a Python package between d's
// two pins that its configured directory of wheels holds, each a commit
// on the culprit with the pin rewritten to it: the build step installs
// what the pin names, so perfbot installs nothing itself.
func (b *Bot) descendPython(ctx context.Context, culprit record.Commit, d record.DependencyChange, dir record.Direction, run *descentRun) ([]record.Descent, error) {
	dep, ok := b.Config.Dependencies.Find(d.Name)
	if !ok || dep.Wheels == "" {
		return nil, skip("no wheels directory is configured for %s (dependencies: {name: %s, wheels: DIR})", d.Name, d.Name)
	}
	versions, err := gitops.WheelVersions(dep.Wheels, d.Name, d.Old, d.New)
	if err != nil {
		return nil, skip("%v", err)
	}
	b.progressf("descend into %s: %d versions %s … %s from %s", d.Name, len(versions), d.Old, d.New, dep.Wheels)
	chain, err := b.swapChain(ctx, culprit, len(versions), func(i int) (gitops.DependencySwap, string) {
		return gitops.DependencySwap{Pins: d.File, Package: d.Name, Version: versions[i]}, d.Name + "==" + versions[i]
	})
	if err != nil {
		return nil, err
	}
	ds, err := b.searchDescent(ctx, d, record.DescentVersions, chain, versions, dir, run)
	if err != nil {
		return nil, err
	}
	return []record.Descent{ds.Descent}, nil
}

// descendCommits searches the commits old..new of a dependency's git
// repository (fetched into the clone) with each one's tree swapped in at
// where, and for a Go module (module set) go.mod pointed at it; then the
// hunks of the dependency's culprit commit.
func (b *Bot) descendCommits(ctx context.Context, culprit record.Commit, d record.DependencyChange, repo, where, module, old, new string, dir record.Direction, run *descentRun) ([]record.Descent, error) {
	if module == "" {
		// A Go module's repository was fetched by the caller.
		if err := b.Repo.FetchDependency(ctx, d.Name, repo); err != nil {
			return nil, skip("%v", err)
		}
	}
	depChain, err := b.Repo.Chain(ctx, old, new)
	if err != nil {
		return nil, skip("%v", err)
	}
	b.progressf("descend into %s: %d commits %s..%s of %s swapped in at %s", d.Name, len(depChain), record.ShortHash(old), record.ShortHash(new), repo, where)
	hashes := make([]string, len(depChain))
	for i, dc := range depChain {
		hashes[i] = dc.Hash
	}
	chain, err := b.swapChain(ctx, culprit, len(depChain), func(i int) (gitops.DependencySwap, string) {
		dc := depChain[i]
		return gitops.DependencySwap{GoMod: d.File, Module: module, Path: where, Tree: dc.Hash}, d.Name + " at " + dc.Short() + " " + dc.Subject
	})
	if err != nil {
		return nil, err
	}
	ds, err := b.searchDescent(ctx, d, record.DescentCommits, chain, hashes, dir, run)
	if err != nil {
		return nil, err
	}
	if ds.Outcome != record.OutcomeCulprit {
		return []record.Descent{ds.Descent}, nil
	}
	i := slices.Index(hashes, ds.Culprit)
	ds.Descent.Commit = &depChain[i]
	if err := b.descentHunks(ctx, ds, run); err != nil {
		return nil, err
	}
	return []record.Descent{ds.Descent}, nil
}

// swapped is the commit SwapDependency made, recorded in the store.
// swapChain makes n commits on top of the culprit, each the one before
// with the dependency swapped as swap(i) says, so that neighbours differ by
// the dependency's own change alone, and returns them in order. A swap
// that cannot be made is a notDescended.
func (b *Bot) swapChain(ctx context.Context, culprit record.Commit, n int, swap func(i int) (gitops.DependencySwap, string)) ([]record.Commit, error) {
	chain := make([]record.Commit, 0, n)
	on := culprit
	for i := range n {
		s, what := swap(i)
		h, err := b.Repo.SwapDependency(ctx, culprit, on, s, swapMessage(culprit, what))
		if err != nil {
			return nil, skip("%v", err)
		}
		if on, err = b.swapped(ctx, h); err != nil {
			return nil, err
		}
		chain = append(chain, on)
	}
	return chain, nil
}

func (b *Bot) swapped(ctx context.Context, hash string) (record.Commit, error) {
	c, err := b.Repo.Commit(ctx, hash)
	if err != nil {
		return record.Commit{}, err
	}
	return c, b.putCommit(c)
}

func swapMessage(culprit record.Commit, what string) string {
	return fmt.Sprintf("perfbot: %s on %s\n\nThe culprit %s %q with the dependency swapped, to measure it.\n", what, culprit.Short(), culprit.Hash, culprit.Subject)
}

// descentRun is what every search of a job's descents shares: the
// metric, and the confirmations of the job's state (known, taken as made;
// confirmed hears each new one, to persist it).
type descentRun struct {
	metric    record.Metric
	known     map[string]bisect.Confirmation
	confirmed func(bisect.Confirmation)
}

// descentSearch is a descent with the search it rests on.
type descentSearch struct {
	record.Descent
	res   *bisect.Result
	chain []record.Commit
}

// searchDescent bisects chain, the culprit with the dependency at each of
// labels (versions or commit hashes, in order), through the Oracle, as a
// bisection of commits is made: the ends verified first, the culprit
// confirmed with fresh interleaved runs.
func (b *Bot) searchDescent(ctx context.Context, d record.DependencyChange, over string, chain []record.Commit, labels []string, dir record.Direction, run *descentRun) (*descentSearch, error) {
	ds := &descentSearch{Descent: record.Descent{Dependency: d, Over: over, Searched: len(chain)}, chain: chain}
	if len(chain) < 2 {
		ds.Outcome = record.OutcomeNotReproduced
		return ds, nil
	}
	hashes := make([]string, len(chain))
	label := map[string]string{}
	for i, c := range chain {
		hashes[i] = c.Hash
		label[c.Hash] = labels[i]
	}
	opts := b.searchOptions(run.metric, dir)
	opts.Known = run.known
	opts.OnConfirm = func(c bisect.Confirmation) {
		b.progressf("%s", confirmLine(c))
		if run.confirmed != nil {
			run.confirmed(c)
		}
	}
	res, err := bisect.Locate(ctx, hashes, commitOracle{o: b.Oracle, metric: run.metric.Name}, opts)
	if err != nil {
		return nil, fmt.Errorf("search the %s of %s: %w", over, d.Name, err)
	}
	ds.res, ds.Outcome = res, res.Verdict
	for _, p := range res.Probes {
		verdict := p.Side
		switch {
		case p.Status == bisect.StatusBroken:
			verdict = "skipped"
		case p.Index == 0 || p.Index == len(chain)-1:
			verdict = "end"
		}
		ds.Steps = append(ds.Steps, record.DescentStep{Version: label[p.Commit], Commit: p.Commit, N: p.N, Median: p.Median, Verdict: verdict})
	}
	slices.SortStableFunc(ds.Steps, func(a, b record.DescentStep) int {
		return slices.Index(hashes, a.Commit) - slices.Index(hashes, b.Commit)
	})
	if len(res.Culprits) == 1 && res.Culprits[0].Index > 0 {
		c := res.Culprits[0]
		ds.Culprit, ds.Before = label[c.Commit], labels[c.Index-1]
		ds.Effect, ds.Confidence = c.Effect, c.Confidence
		ds.Confirmed = c.Confirmation != nil && c.Confirmation.Confirmed
	} else if ds.Outcome == record.OutcomeCulprit {
		// Several culprits: the dependency's range holds more than one
		// change, each a finding's worth; the descent names none.
		ds.Outcome = record.OutcomeInconclusive
	}
	b.progressf("  %s", ds.Text())
	return ds, nil
}

// descentHunks searches the hunks of a dependency's culprit commit: the
// diff between its swapped commit and the one before, which is the
// dependency's own change at its place in the tree.
func (b *Bot) descentHunks(ctx context.Context, ds *descentSearch, run *descentRun) error {
	c := ds.res.Culprits[0]
	known := knownEffect(c)
	if known == nil {
		return nil
	}
	hr, err := b.Hunks(ctx, HunksRequest{Rev: c.Commit, Metric: run.metric.Name, Direction: c.Direction, Known: known})
	var ie *record.InputError
	switch {
	case errors.As(err, &ie):
		b.progressf("the hunks of %s of %s were not searched: %v", ds.Label(ds.Culprit), ds.Dependency.Name, err)
		return nil
	case err != nil:
		return fmt.Errorf("hunks of %s of %s: %w", ds.Label(ds.Culprit), ds.Dependency.Name, err)
	}
	ds.Hunks = hr.Hunks
	return nil
}
