package testbed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// step is one scripted commit.
type step struct {
	subject string
	body    string
	// author indexes authors; -1 lets the seed choose.
	author int
	edits  []edit
	// later computes edits from the history so far and the commit's date,
	// for commits such as a changelog update; it runs after edits.
	later func(h *history, date time.Time) []edit
	truth *truth
	// side, on a merge step, is the branch merged; its commits fork from
	// the main commit forkBack steps before the merge.
	side     *branch
	forkBack int
}

// branch is a side branch merged into main.
type branch struct {
	name    string
	commits []step
}

// truth is what a step's commit is known to do.
type truth struct {
	id      string
	kind    Kind
	effects map[string]float64
	// effect indexes the edit that carries the effect, or -1.
	effect int
	note   string
}

// anchor places ground-truth steps near a position of the first-parent
// chain.
type anchor struct {
	at    int
	steps []step
}

var authors = []person{
	{"Mei Lin", "mei.lin@example.com"},
	{"Arjun Rao", "arjun.rao@example.com"},
	{"Sofia Marques", "sofia.marques@example.com"},
	{"Tom Becker", "tom.becker@example.com"},
	{"Yuki Tanaka", "yuki.tanaka@example.com"},
	{"Dana Okafor", "dana.okafor@example.com"},
}

// epoch is the date of the first commit.
var epoch = time.Date(2025, 2, 3, 9, 12, 0, 0, time.UTC)

// Generate creates a git repository in dir, which must not exist or be
// empty, holding the engine's scripted history on branch main, and writes
// its manifest to ManifestPath(dir). It needs the git command.
func Generate(ctx context.Context, dir string, seed int64) (*Manifest, error) {
	return generate(ctx, dir, seed, goScript())
}

// script is what the generator needs of one testbed: its first commit, the
// ground truth at its anchors, the ordinary commits, and how the manifest
// names a hunk's component and function.
type script struct {
	// testbed and module are copied into the manifest.
	testbed, module string
	root            func() (step, error)
	anchors         func() []anchor
	fillers         func() [][]step
	// component names the component of a path; function the function
	// around lines start..start+size-1 of src.
	component func(path string) string
	function  func(path, src string, start, size int) string
}

// goScript is the Go engine's history.
func goScript() script {
	return script{
		module: Module, root: rootStep, anchors: groundTruth, fillers: fillerThreads,
		component: componentOf, function: enclosingFunc,
	}
}

func generate(ctx context.Context, dir string, seed int64, s script) (*Manifest, error) {
	// git runs inside dir, so every path it is given must be absolute.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	if err := emptyDir(dir); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7e57bed))
	steps, err := plan(rng, s)
	if err != nil {
		return nil, err
	}
	h, err := replay(steps, rng)
	if err != nil {
		return nil, err
	}
	marks, err := h.importInto(ctx, dir)
	if err != nil {
		return nil, err
	}
	m, err := h.manifest(dir, seed, marks, s)
	if err != nil {
		return nil, err
	}
	if err := m.Save(ManifestPath(dir)); err != nil {
		return nil, err
	}
	return m, nil
}

func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return fmt.Errorf("generate: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("generate: %s is not empty", dir)
	}
	return nil
}

// plan lays out the first-parent chain: the root, the ground truth near its
// anchors (moved by up to three commits), and the ordinary commits in a
// seeded interleaving of their threads.
func plan(rng *rand.Rand, s script) ([]step, error) {
	root, err := s.root()
	if err != nil {
		return nil, err
	}
	fillers := interleave(rng, s.fillers())
	anchors := s.anchors()
	total := 1 + len(fillers)
	for _, a := range anchors {
		total += len(a.steps)
	}
	at := map[int]anchor{}
	prev := 0
	for _, a := range anchors {
		pos := a.at + rng.IntN(7) - 3
		if pos <= prev+1 || pos+len(a.steps) > total {
			return nil, fmt.Errorf("plan: anchor %q at %d does not fit after %d in %d commits", a.steps[0].subject, pos, prev, total)
		}
		at[pos] = a
		prev = pos + len(a.steps) - 1
	}
	steps := []step{root}
	for len(steps) < total {
		if a, ok := at[len(steps)]; ok {
			steps = append(steps, a.steps...)
			continue
		}
		steps = append(steps, fillers[0])
		fillers = fillers[1:]
	}
	return steps, nil
}

// interleave merges threads of steps in a seeded order that keeps each
// thread's own order.
func interleave(rng *rand.Rand, threads [][]step) []step {
	var out []step
	for {
		remaining := 0
		for _, t := range threads {
			remaining += len(t)
		}
		if remaining == 0 {
			return out
		}
		pick := rng.IntN(remaining)
		for i, t := range threads {
			if pick < len(t) {
				out = append(out, t[0])
				threads[i] = t[1:]
				break
			}
			pick -= len(t)
		}
	}
}

// history is the replayed plan: every commit with its tree.
type history struct {
	main []*commitState
	// side holds the commits of merged branches, by the index of their
	// merge on main.
	side map[int][]*commitState
}

type commitState struct {
	step
	author  person
	date    time.Time
	tree    tree
	spans   []span
	mark    int
	parents []int // marks
}

// replay applies the plan's edits in order and dates and signs every
// commit.
func replay(steps []step, rng *rand.Rand) (*history, error) {
	h := &history{side: map[int][]*commitState{}}
	date := epoch
	mark := 0
	var cur tree
	for i, s := range steps {
		if i > 0 {
			date = date.Add(time.Duration(30+rng.IntN(20*60)) * time.Minute)
		}
		next := tree{}
		if cur != nil {
			next = cur.clone()
		}
		var parents []int
		if i > 0 {
			parents = []int{h.main[i-1].mark}
		}
		if s.side != nil {
			side, err := h.replaySide(s, i, next, &mark, rng)
			if err != nil {
				return nil, err
			}
			h.side[i] = side
			parents = append(parents, side[len(side)-1].mark)
		}
		mark++
		c := &commitState{step: s, date: date, mark: mark, author: pickAuthor(rng, s.author), parents: parents}
		if err := c.apply(next, h); err != nil {
			return nil, fmt.Errorf("commit %d %q: %w", i, s.subject, err)
		}
		c.tree = next
		cur = next
		h.main = append(h.main, c)
	}
	return h, nil
}

// replaySide replays a merge step's branch from its fork point and applies
// the branch's edits to next, the tree the merge will hold.
func (h *history) replaySide(s step, at int, next tree, mark *int, rng *rand.Rand) ([]*commitState, error) {
	fork := h.main[at-s.forkBack]
	t := fork.tree.clone()
	var out []*commitState
	parent := fork.mark
	for j, bs := range s.side.commits {
		// Side commits fall between the fork and the merge.
		date := fork.date.Add(time.Duration(j+1) * h.main[at-1].date.Sub(fork.date) / time.Duration(len(s.side.commits)+1))
		*mark++
		c := &commitState{step: bs, date: date, mark: *mark, author: pickAuthor(rng, bs.author), parents: []int{parent}}
		if err := c.apply(t, h); err != nil {
			return nil, fmt.Errorf("branch %s commit %q: %w", s.side.name, bs.subject, err)
		}
		c.tree = t.clone()
		out = append(out, c)
		parent = c.mark
		for _, e := range bs.edits {
			if _, err := e.apply(next); err != nil {
				return nil, fmt.Errorf("merge %s: %w", s.side.name, err)
			}
		}
	}
	return out, nil
}

func (c *commitState) apply(t tree, h *history) error {
	edits := c.edits
	if c.later != nil {
		edits = append(slices.Clone(edits), c.later(h, c.date)...)
	}
	for _, e := range edits {
		sp, err := e.apply(t)
		if err != nil {
			return err
		}
		c.spans = append(c.spans, sp)
	}
	return nil
}

func pickAuthor(rng *rand.Rand, i int) person {
	if i < 0 {
		return authors[rng.IntN(len(authors))]
	}
	return authors[i]
}

// message returns the commit message.
func (c *commitState) message() string {
	if c.body == "" {
		return c.subject + "\n"
	}
	return c.subject + "\n\n" + strings.TrimSpace(c.body) + "\n"
}

// importCommits lists the commits in an order fast-import accepts: each
// side branch right after its fork point.
func (h *history) importCommits() []importCommit {
	type fork struct {
		ref     string
		commits []*commitState
	}
	forks := map[int]fork{}
	for at, side := range h.side {
		forks[at-h.main[at].forkBack] = fork{"refs/heads/" + h.main[at].side.name, side}
	}
	var out []importCommit
	var prev tree
	for i, c := range h.main {
		out = append(out, importCommitOf("refs/heads/main", c, prev))
		prev = c.tree
		if f, ok := forks[i]; ok {
			sidePrev := c.tree
			for _, s := range f.commits {
				out = append(out, importCommitOf(f.ref, s, sidePrev))
				sidePrev = s.tree
			}
		}
	}
	return out
}

func importCommitOf(ref string, c *commitState, prev tree) importCommit {
	ic := importCommit{ref: ref, mark: c.mark, author: c.author, date: c.date, message: c.message(), files: map[string]string{}}
	if len(c.parents) > 0 {
		ic.from = c.parents[0]
	}
	if len(c.parents) > 1 {
		ic.merge = c.parents[1]
	}
	for _, p := range prev.changed(c.tree) {
		if content, ok := c.tree[p]; ok {
			ic.files[p] = content
			ic.paths = append(ic.paths, p)
		} else {
			ic.deleted = append(ic.deleted, p)
		}
	}
	return ic
}

// importInto creates the repository in dir and returns mark → hash.
func (h *history) importInto(ctx context.Context, dir string) (map[int]string, error) {
	if _, err := git(ctx, dir, nil, "init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	marksFile := filepath.Join(dir, ".git", "testbed-marks")
	stream := fastImport(h.importCommits())
	if _, err := git(ctx, dir, stream, "fast-import", "--quiet", "--export-marks="+marksFile); err != nil {
		return nil, err
	}
	marks, err := readMarks(marksFile)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(marksFile); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	for at := range h.side {
		if _, err := git(ctx, dir, nil, "update-ref", "-d", "refs/heads/"+h.main[at].side.name); err != nil {
			return nil, err
		}
	}
	if _, err := git(ctx, dir, nil, "reset", "-q", "--hard", "main"); err != nil {
		return nil, err
	}
	return marks, nil
}

// manifest records the ground truth with the hashes the import gave.
func (h *history) manifest(dir string, seed int64, marks map[int]string, s script) (*Manifest, error) {
	hash := func(mark int) string { return marks[mark] }
	m := &Manifest{
		Testbed: s.testbed,
		Repo:    dir,
		Module:  s.module,
		Branch:  "main",
		Seed:    seed,
		Root:    hash(h.main[0].mark),
		Head:    hash(h.main[len(h.main)-1].mark),
		Commits: len(h.main),
	}
	for i, c := range h.main {
		if c.truth == nil {
			continue
		}
		parent := h.main[i-1]
		ch := Change{
			ID:      c.truth.id,
			Kind:    c.truth.kind,
			Commit:  hash(c.mark),
			Parent:  hash(parent.mark),
			Index:   i,
			Subject: c.subject,
			Author:  c.author.String(),
			Files:   parent.tree.changed(c.tree),
			Effects: c.truth.effects,
			Note:    c.truth.note,
		}
		if c.truth.effect >= 0 {
			sp := c.spans[c.truth.effect]
			ch.Hunk = &Hunk{
				File:      sp.path,
				Function:  s.function(sp.path, c.tree[sp.path], sp.start, sp.size),
				Component: s.component(sp.path),
				Start:     sp.start,
				Lines:     sp.size,
			}
		}
		if c.truth.kind == BuildBreak && i+1 < len(h.main) {
			ch.Fix = hash(h.main[i+1].mark)
		}
		if ch.Commit == "" || ch.Parent == "" {
			return nil, fmt.Errorf("generate: no hash for change %s", ch.ID)
		}
		m.Changes = append(m.Changes, ch)
	}
	slices.SortFunc(m.Changes, func(a, b Change) int { return strings.Compare(a.ID, b.ID) })
	return m, nil
}
