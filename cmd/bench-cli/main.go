// Command bench-cli measures the whole cost of `perfbot bisect` as a user
// sees it: it builds noise repositories (internal/noisyrepo) with one known
// regression each, runs the perfbot binary on every one of them, one after
// the other, and counts every benchmark run the binary made through a
// counter file that the repositories' bench.sh appends to, independently of
// what perfbot reports about itself.
//
//	go run ./cmd/bench-cli -perfbot bin/perfbot -repos 20 -commits 64 -cv 0.02 -factor 0.95 -seed 1
//
// It prints one row per repository (the true culprit, what perfbot named,
// the verdict, the counted and the reported runs, the wall time) and a
// summary: mean, median and p90 runs, accuracy and mean wall time. With
// -nochange K it adds K repositories without any change and reports how
// many of them perfbot answered not_reproduced.
//
// perfbot's JSON report is read loosely (any JSON object; the verdict, the
// culprit commits and the run count are looked for by key), because its
// shape may change. The exit status is 0 when every bisection ran, 1 on bad
// usage and 2 when a repository could not be made or perfbot failed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/perfbot/perfbot/internal/noisyrepo"
	"github.com/perfbot/perfbot/record"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// params are the command's flags.
type params struct {
	perfbot    string
	repos      int
	noChange   int
	commits    int
	cv         float64
	factor     float64
	seed       uint64
	dir        string
	keep       bool
	timeout    time.Duration
	verbose    bool
	build      string
	maxRuns    int
	minEffect  float64
	confidence float64
	repeats    int
	extra      string
}

// outcome is one repository's bisection.
type outcome struct {
	name     string
	repo     *noisyrepo.Repo
	verdict  string
	named    []string // culprit hashes perfbot named
	counted  int      // bench.sh invocations seen in the counter file
	reported int      // perfbot's own run count; -1 when absent
	wall     time.Duration
	err      error
}

// correct reports whether perfbot answered right: exactly the true culprit
// for a repository with a change, not_reproduced for one without.
func (o *outcome) correct() bool {
	if o.err != nil {
		return false
	}
	if o.repo.Culprit == "" {
		return o.verdict == "not_reproduced"
	}
	return len(o.named) == 1 && sameCommit(o.named[0], o.repo.Culprit)
}

// sameCommit compares hashes that may be abbreviated.
func sameCommit(a, b string) bool {
	if len(a) < 7 || len(b) < 7 {
		return a == b
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var p params
	fs := flag.NewFlagSet("bench-cli", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&p.perfbot, "perfbot", "bin/perfbot", "the perfbot binary to measure")
	fs.IntVar(&p.repos, "repos", 20, "repositories with one regression each")
	fs.IntVar(&p.noChange, "nochange", 0, "additional repositories without any change (want not_reproduced)")
	fs.IntVar(&p.commits, "commits", noisyrepo.DefaultCommits, "commits per repository")
	fs.Float64Var(&p.cv, "cv", noisyrepo.DefaultCV, "run-to-run noise (sigma of the log-normal factor)")
	fs.Float64Var(&p.factor, "factor", noisyrepo.DefaultFactor, "speed factor of the culprit commit")
	fs.Uint64Var(&p.seed, "seed", 1, "seed choosing the culprits")
	fs.StringVar(&p.dir, "dir", "", "directory for the repositories (default: a new temporary directory)")
	fs.BoolVar(&p.keep, "keep", false, "keep the repositories, logs and stores afterwards")
	fs.DurationVar(&p.timeout, "timeout", 10*time.Minute, "limit of one bisection")
	fs.BoolVar(&p.verbose, "v", false, "stream perfbot's progress (stderr)")
	fs.StringVar(&p.build, "build", "", "build step of the generated configuration (default: none)")
	fs.IntVar(&p.maxRuns, "max-runs", 0, "bisect.max_runs of the configuration (0: perfbot's default)")
	fs.Float64Var(&p.minEffect, "min-effect", 0, "bisect.min_effect as a fraction (0: perfbot's default)")
	fs.Float64Var(&p.confidence, "confidence", 0, "bisect.confidence (0: perfbot's default)")
	fs.IntVar(&p.repeats, "repeats", 0, "bisect.repeats (0: perfbot's default)")
	fs.StringVar(&p.extra, "args", "", "extra arguments for perfbot bisect, space separated")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench-cli -perfbot BIN [-repos N] [-nochange K] [-commits C] [-cv X] [-factor F] [-seed S]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench-cli: unexpected arguments %q\n", fs.Args())
		return 1
	}
	if err := p.check(); err != nil {
		fmt.Fprintf(stderr, "bench-cli: %v\n", err)
		return 1
	}
	bin, err := exec.LookPath(p.perfbot)
	if err != nil {
		fmt.Fprintf(stderr, "bench-cli: perfbot binary %q: %v (build one with: go build -o bin/perfbot ./cmd/perfbot)\n", p.perfbot, err)
		return 1
	}
	if bin, err = filepath.Abs(bin); err != nil {
		fmt.Fprintf(stderr, "bench-cli: %v\n", err)
		return 1
	}
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintf(stderr, "bench-cli: git is needed to make the repositories: %v\n", err)
		return 2
	}

	root := p.dir
	if root == "" {
		if root, err = os.MkdirTemp("", "bench-cli-"); err != nil {
			fmt.Fprintf(stderr, "bench-cli: %v\n", err)
			return 2
		}
		if !p.keep {
			defer os.RemoveAll(root)
		}
	} else if err := os.MkdirAll(root, 0o755); err != nil {
		fmt.Fprintf(stderr, "bench-cli: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "bench-cli: %s, %d+%d repositories of %d commits, factor %g, cv %g, seed %d, in %s\n",
		bin, p.repos, p.noChange, p.commits, p.factor, p.cv, p.seed, root)

	var outs []*outcome
	start := time.Now()
	for i := range p.repos + p.noChange {
		if ctx.Err() != nil {
			break
		}
		o := p.one(ctx, bin, root, i, stderr)
		outs = append(outs, o)
		status := "ok"
		switch {
		case o.err != nil:
			status = "ERROR: " + o.err.Error()
		case !o.correct():
			status = "wrong"
		}
		fmt.Fprintf(stderr, "bench-cli: [%d/%d] %s: %s, %d runs counted, %.1fs: %s\n",
			i+1, p.repos+p.noChange, o.name, o.verdict, o.counted, o.wall.Seconds(), status)
	}
	total := time.Since(start)

	printTable(stdout, outs)
	printSummary(stdout, outs, total)
	if p.keep {
		fmt.Fprintf(stdout, "\nrepositories, configurations and perfbot logs kept in %s\n", root)
	}

	var failed []string
	for _, o := range outs {
		if o.err != nil {
			failed = append(failed, o.name)
		}
	}
	if err := ctx.Err(); err != nil {
		fmt.Fprintf(stderr, "bench-cli: interrupted after %d repositories\n", len(outs))
		return 2
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "bench-cli: %d of %d bisections failed (%s); rerun with -keep -v to see perfbot's output\n",
			len(failed), len(outs), strings.Join(failed, ", "))
		return 2
	}
	return 0
}

func (p *params) check() error {
	switch {
	case p.repos < 0 || p.noChange < 0:
		return fmt.Errorf("-repos %d, -nochange %d: must not be negative", p.repos, p.noChange)
	case p.repos+p.noChange == 0:
		return fmt.Errorf("nothing to do: -repos and -nochange are both 0")
	case p.commits < 3:
		return fmt.Errorf("-commits %d: need at least 3", p.commits)
	case p.cv <= 0:
		return fmt.Errorf("-cv %g: must be positive", p.cv)
	case p.factor <= 0 || p.factor == 1:
		return fmt.Errorf("-factor %g: must be positive and not 1 (use -nochange for repositories without a change)", p.factor)
	case p.timeout <= 0:
		return fmt.Errorf("-timeout %v: must be positive", p.timeout)
	}
	return nil
}

// one makes the i-th repository and bisects it.
func (p *params) one(ctx context.Context, bin, root string, i int, stderr io.Writer) *outcome {
	o := &outcome{reported: -1}
	noChange := i >= p.repos
	o.name = fmt.Sprintf("r%02d", i)
	if noChange {
		o.name = fmt.Sprintf("n%02d", i-p.repos)
	}
	r, err := noisyrepo.Create(filepath.Join(root, o.name), noisyrepo.Options{
		Commits:    p.commits,
		Factor:     p.factor,
		CV:         p.cv,
		Seed:       p.seed*1_000_003 + uint64(i),
		NoChange:   noChange,
		Build:      p.build,
		MaxRuns:    p.maxRuns,
		MinEffect:  p.minEffect,
		Confidence: p.confidence,
		Repeats:    p.repeats,
	})
	if err != nil {
		o.repo = &noisyrepo.Repo{CulpritIndex: -1}
		o.err = err
		return o
	}
	o.repo = r

	args := []string{"bisect", "--config", r.ConfigPath, "--good", r.First(), "--bad", r.Last(), "--json"}
	args = append(args, strings.Fields(p.extra)...)
	cctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, args...)
	cmd.Dir = r.Root
	var out bytes.Buffer
	cmd.Stdout = &out
	logPath := filepath.Join(r.Root, "perfbot.log")
	logf, err := os.Create(logPath)
	if err != nil {
		o.err = err
		return o
	}
	defer logf.Close()
	var errTail tail
	if p.verbose {
		cmd.Stderr = io.MultiWriter(logf, &errTail, stderr)
	} else {
		cmd.Stderr = io.MultiWriter(logf, &errTail)
	}
	begin := time.Now()
	runErr := cmd.Run()
	o.wall = time.Since(begin)
	if o.counted, err = r.Runs(); err != nil && runErr == nil {
		runErr = fmt.Errorf("read the counter file: %w", err)
	}
	os.WriteFile(filepath.Join(r.Root, "report.json"), out.Bytes(), 0o644)
	if runErr != nil {
		if cctx.Err() == context.DeadlineExceeded {
			runErr = fmt.Errorf("perfbot bisect ran past -timeout %v", p.timeout)
		}
		o.err = fmt.Errorf("%s %s: %v%s", bin, strings.Join(args, " "), runErr, errTail.String())
		return o
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		o.err = fmt.Errorf("perfbot bisect --json printed no JSON object: %v (first bytes: %.200q)", err, out.String())
		return o
	}
	o.verdict, _ = findString(rep, "verdict")
	if o.verdict == "" {
		o.verdict = "?"
	}
	o.named = culprits(rep)
	if n, ok := findNumber(rep, "runs"); ok {
		o.reported = int(n)
	}
	return o
}

// tail keeps the last lines written to it, for error messages.
type tail struct{ buf []byte }

func (t *tail) Write(b []byte) (int, error) {
	t.buf = append(t.buf, b...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	s := strings.TrimSpace(string(t.buf))
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return "\n  perfbot stderr (last lines):\n    " + strings.Join(lines, "\n    ")
}

// findString returns the string under key at the top level of v, else the
// first one found breadth-first.
func findString(v any, key string) (string, bool) {
	var found string
	ok := walk(v, func(k string, x any) bool {
		if s, is := x.(string); is && k == key {
			found = s
			return true
		}
		return false
	})
	return found, ok
}

// findNumber is findString for a number.
func findNumber(v any, key string) (float64, bool) {
	var found float64
	ok := walk(v, func(k string, x any) bool {
		if n, is := x.(float64); is && k == key {
			found = n
			return true
		}
		return false
	})
	return found, ok
}

// walk visits v's object members breadth-first, shallowest first, until
// visit returns true.
func walk(v any, visit func(key string, x any) bool) bool {
	level := []any{v}
	for len(level) > 0 {
		var next []any
		for _, x := range level {
			switch t := x.(type) {
			case map[string]any:
				keys := make([]string, 0, len(t))
				for k := range t {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					if visit(k, t[k]) {
						return true
					}
					next = append(next, t[k])
				}
			case []any:
				next = append(next, t...)
			}
		}
		level = next
	}
	return false
}

// culprits returns the commit hashes perfbot named as culprits: the
// "commit" of each element of the shallowest "culprits" array (elements may
// also be plain hashes), else a "culprit" object or hash.
func culprits(rep map[string]any) []string {
	var out []string
	walk(rep, func(k string, x any) bool {
		switch k {
		case "culprits":
			arr, ok := x.([]any)
			if !ok {
				return false
			}
			for _, e := range arr {
				if h := commitOf(e); h != "" {
					out = append(out, h)
				}
			}
			return true
		case "culprit":
			if h := commitOf(x); h != "" {
				out = append(out, h)
				return true
			}
		}
		return false
	})
	return out
}

func commitOf(x any) string {
	switch t := x.(type) {
	case string:
		return t
	case map[string]any:
		for _, k := range []string{"commit", "hash", "sha", "rev"} {
			if s, ok := t[k].(string); ok && s != "" {
				return s
			}
		}
		if c, ok := t["commit"].(map[string]any); ok {
			return commitOf(c)
		}
	}
	return ""
}

// namedIndexes writes each named hash as its index in the repository's
// history ("#17"), or abbreviated when it is not in it.
func namedIndexes(o *outcome) string {
	if len(o.named) == 0 {
		return "-"
	}
	var parts []string
	for _, h := range o.named {
		idx := -1
		for i, c := range o.repo.Commits {
			if sameCommit(h, c) {
				idx = i
				break
			}
		}
		if idx >= 0 {
			parts = append(parts, fmt.Sprintf("#%d %s", idx, record.ShortHash(h)))
		} else {
			parts = append(parts, "? "+record.ShortHash(h))
		}
	}
	return strings.Join(parts, ", ")
}

func printTable(w io.Writer, outs []*outcome) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "REPO\tCULPRIT\tNAMED\tVERDICT\tCOUNTED RUNS\tREPORTED RUNS\tWALL S\tOK\t")
	for _, o := range outs {
		truth := "none"
		if o.repo.CulpritIndex >= 0 {
			truth = fmt.Sprintf("#%d %s", o.repo.CulpritIndex, record.ShortHash(o.repo.Culprit))
		}
		reported := "-"
		if o.reported >= 0 {
			reported = fmt.Sprint(o.reported)
		}
		ok := "yes"
		switch {
		case o.err != nil:
			ok = "ERROR"
		case !o.correct():
			ok = "no"
		}
		verdict := o.verdict
		if o.err != nil {
			verdict = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%.1f\t%s\t\n", o.name, truth, namedIndexes(o), verdict, o.counted, reported, o.wall.Seconds(), ok)
	}
	tw.Flush()
}

func printSummary(w io.Writer, outs []*outcome, total time.Duration) {
	var change, none []*outcome
	for _, o := range outs {
		if o.repo.CulpritIndex >= 0 {
			change = append(change, o)
		} else {
			none = append(none, o)
		}
	}
	fmt.Fprintln(w)
	if len(change) > 0 {
		summarize(w, "with a change", change)
	}
	if len(none) > 0 {
		summarize(w, "without a change", none)
	}
	var errs int
	for _, o := range outs {
		if o.err != nil {
			errs++
		}
	}
	if errs > 0 {
		fmt.Fprintf(w, "errors: %d of %d bisections failed\n", errs, len(outs))
	}
	fmt.Fprintf(w, "total wall time %.1fs\n", total.Seconds())
}

func summarize(w io.Writer, what string, outs []*outcome) {
	var counted, reported, wall []float64
	right, verdicts := 0, map[string]int{}
	mismatch := 0
	for _, o := range outs {
		if o.err != nil {
			continue
		}
		counted = append(counted, float64(o.counted))
		if o.reported >= 0 {
			reported = append(reported, float64(o.reported))
			if o.reported != o.counted {
				mismatch++
			}
		}
		wall = append(wall, o.wall.Seconds())
		verdicts[o.verdict]++
		if o.correct() {
			right++
		}
	}
	fmt.Fprintf(w, "%d repositories %s (%d bisected without error)\n", len(outs), what, len(counted))
	if len(counted) == 0 {
		return
	}
	fmt.Fprintf(w, "  counted runs:  mean %.1f  median %.1f  p90 %.0f  min %.0f  max %.0f\n",
		mean(counted), quantile(counted, 0.5), p90(counted), slices.Min(counted), slices.Max(counted))
	if len(reported) > 0 {
		fmt.Fprintf(w, "  reported runs: mean %.1f  median %.1f  p90 %.0f  (%d of %d differ from the count)\n",
			mean(reported), quantile(reported, 0.5), p90(reported), mismatch, len(reported))
	} else {
		fmt.Fprintf(w, "  reported runs: perfbot's JSON has no \"runs\" figure\n")
	}
	var vs []string
	for v, n := range verdicts {
		vs = append(vs, fmt.Sprintf("%s %d", v, n))
	}
	slices.Sort(vs)
	if what == "without a change" {
		fmt.Fprintf(w, "  not_reproduced: %d of %d (%.0f%%)   verdicts: %s\n", verdicts["not_reproduced"], len(outs), 100*float64(verdicts["not_reproduced"])/float64(len(outs)), strings.Join(vs, ", "))
	} else {
		fmt.Fprintf(w, "  accuracy (exactly the right culprit named): %d of %d (%.0f%%)   verdicts: %s\n", right, len(outs), 100*float64(right)/float64(len(outs)), strings.Join(vs, ", "))
	}
	fmt.Fprintf(w, "  wall time per bisection: mean %.1fs  median %.1fs  max %.1fs  (%.2fs per counted run)\n",
		mean(wall), quantile(wall, 0.5), slices.Max(wall), sum(wall)/math.Max(1, sum(counted)))
}

func sum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

func mean(x []float64) float64 { return sum(x) / float64(len(x)) }

// quantile interpolates linearly between order statistics.
func quantile(x []float64, q float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// p90 is the nearest-rank 90th percentile: a value some run actually had.
func p90(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	rank := int(math.Ceil(0.9 * float64(len(s))))
	return s[max(rank, 1)-1]
}
