// Package noisyrepo builds black-box "noise repositories": small real git
// repositories whose history holds one known performance change, with a
// benchmark script whose every run is noisy, and a perfbot configuration to
// bisect them.
//
// Every commit of a noise repository writes the file speed, the commit's
// true speed in tok/s, and a file c<i>.txt, so that each commit has a real
// diff. One culprit commit, chosen from the seed and never the first or the
// last, multiplies the speed by Options.Factor, and every later commit keeps
// it. The script bench.sh (POSIX sh and awk) prints one Go benchmark line
//
//	BenchmarkDecode-2   	       1	   1012555 ns/op	    987.60 tok/s
//
// whose tok/s is speed × exp(N(0, CV²)), drawn afresh on every invocation
// from /dev/urandom. When the variable NOISY_COUNTER names a file, each
// invocation appends one line to it, so that a caller can count every
// benchmark run a tool made without trusting what the tool reports; the
// generated configuration sets it to a file outside the repository.
//
// The history is deterministic for given Options: the author, committer and
// dates are fixed, so the same Options give the same commit hashes.
package noisyrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Defaults of Options' zero fields.
const (
	DefaultCommits = 64
	DefaultBase    = 1000.0
	DefaultFactor  = 0.95
	DefaultCV      = 0.02
)

// CounterEnv is the environment variable naming the file that bench.sh
// appends one line to per invocation.
const CounterEnv = "NOISY_COUNTER"

// Benchmark, metric and unit names used by bench.sh and the configuration.
const (
	BenchmarkName = "BenchmarkDecode"
	MetricName    = "tok_s"
	Unit          = "tok/s"
)

// epoch is the author and committer date of the first commit; commit i is
// dated i minutes later.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Options describes a noise repository. Zero fields take the defaults.
type Options struct {
	// Commits is the number of commits on main (default DefaultCommits,
	// at least 3).
	Commits int
	// Base is the true speed in tok/s before the change (default
	// DefaultBase).
	Base float64
	// Factor multiplies the speed from the culprit commit on (default
	// DefaultFactor, a 5% regression).
	Factor float64
	// CV is the run-to-run noise: the sigma of the log-normal factor each
	// run applies (default DefaultCV).
	CV float64
	// Seed chooses the culprit commit.
	Seed uint64
	// NoChange makes a repository whose speed never changes; it has no
	// culprit and perfbot should answer not_reproduced.
	NoChange bool

	// Build, when not empty, is the shell command of the configuration's
	// single build step; empty means the configuration has no build step.
	Build string
	// The fields below tune the configuration's bisect section; zero
	// leaves perfbot's default in place.
	Confidence float64 // bisect.confidence
	MinEffect  float64 // bisect.min_effect, as a fraction (0.02 for 2%)
	MaxRuns    int     // bisect.max_runs
	Repeats    int     // bisect.repeats
}

// Repo is a created noise repository.
type Repo struct {
	// Root is the directory given to Create; it holds the repository, the
	// configuration, the counter file and perfbot's work files.
	Root string
	// Dir is the git repository.
	Dir string
	// ConfigPath is the perfbot configuration (Root/perfbot.yaml).
	ConfigPath string
	// CounterPath is the file bench.sh appends one line to per run.
	CounterPath string
	// Commits are the commit hashes, oldest first.
	Commits []string
	// Speeds are the true speeds of Commits, in tok/s.
	Speeds []float64
	// Culprit is the hash of the commit that changes the speed, and
	// CulpritIndex its index in Commits; "" and -1 for a NoChange
	// repository.
	Culprit      string
	CulpritIndex int
	// Options are the options the repository was made with, defaults
	// filled in.
	Options Options
}

// First returns the hash of the first commit (a good end).
func (r *Repo) First() string { return r.Commits[0] }

// Last returns the hash of the last commit (a bad end).
func (r *Repo) Last() string { return r.Commits[len(r.Commits)-1] }

func (o Options) withDefaults() (Options, error) {
	if o.Commits == 0 {
		o.Commits = DefaultCommits
	}
	if o.Base == 0 {
		o.Base = DefaultBase
	}
	if o.Factor == 0 {
		o.Factor = DefaultFactor
	}
	if o.CV == 0 {
		o.CV = DefaultCV
	}
	switch {
	case o.Commits < 3:
		return o, fmt.Errorf("noisyrepo: %d commits: need at least 3 (the culprit is never the first or the last)", o.Commits)
	case o.Base <= 0:
		return o, fmt.Errorf("noisyrepo: base speed %g: must be positive", o.Base)
	case o.Factor <= 0:
		return o, fmt.Errorf("noisyrepo: factor %g: must be positive", o.Factor)
	case o.CV < 0:
		return o, fmt.Errorf("noisyrepo: cv %g: must not be negative", o.CV)
	}
	return o, nil
}

// CulpritIndex returns the culprit commit index Create picks for seed in a
// history of n commits: uniform over 1..n-2.
func CulpritIndex(seed uint64, n int) int {
	r := rand.New(rand.NewPCG(seed, 0x6e6f697379726570))
	return 1 + r.IntN(n-2)
}

// Create makes a noise repository under dir (created when missing; it
// should be empty): the git repository dir/repo, the configuration
// dir/perfbot.yaml and the counter file dir/bench-runs.log.
func Create(dir string, opts Options) (*Repo, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("noisyrepo: %w", err)
	}
	r := &Repo{
		Root:         root,
		Dir:          filepath.Join(root, "repo"),
		ConfigPath:   filepath.Join(root, "perfbot.yaml"),
		CounterPath:  filepath.Join(root, "bench-runs.log"),
		CulpritIndex: -1,
		Options:      opts,
	}
	if !opts.NoChange {
		r.CulpritIndex = CulpritIndex(opts.Seed, opts.Commits)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("noisyrepo: %w", err)
	}
	if err := r.git(nil, "init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "bench.sh"), []byte(benchScript(opts.CV)), 0o755); err != nil {
		return nil, fmt.Errorf("noisyrepo: %w", err)
	}
	speed := opts.Base
	for i := range opts.Commits {
		subject := fmt.Sprintf("commit %d", i)
		switch {
		case i == 0:
			subject = "commit 0: bench.sh and the base speed"
		case i == r.CulpritIndex:
			speed = opts.Base * opts.Factor
			subject = fmt.Sprintf("commit %d: decode path change", i)
		}
		if err := os.WriteFile(filepath.Join(r.Dir, "speed"), []byte(strconv.FormatFloat(speed, 'f', -1, 64)+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("noisyrepo: %w", err)
		}
		body := fmt.Sprintf("change %d of %d\nseed %d\n", i, opts.Commits, opts.Seed)
		if err := os.WriteFile(filepath.Join(r.Dir, fmt.Sprintf("c%d.txt", i)), []byte(body), 0o644); err != nil {
			return nil, fmt.Errorf("noisyrepo: %w", err)
		}
		date := epoch.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
		if err := r.git(nil, "add", "-A"); err != nil {
			return nil, err
		}
		if err := r.git(env, "commit", "-q", "--no-verify", "-m", subject); err != nil {
			return nil, err
		}
		r.Speeds = append(r.Speeds, speed)
	}
	var out bytes.Buffer
	cmd := r.gitCmd(nil, &out, "rev-list", "--reverse", "main")
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("noisyrepo: git rev-list: %w", err)
	}
	r.Commits = strings.Fields(out.String())
	if len(r.Commits) != opts.Commits {
		return nil, fmt.Errorf("noisyrepo: git rev-list lists %d commits, want %d", len(r.Commits), opts.Commits)
	}
	if r.CulpritIndex >= 0 {
		r.Culprit = r.Commits[r.CulpritIndex]
	}
	if err := os.WriteFile(r.ConfigPath, []byte(r.config()), 0o644); err != nil {
		return nil, fmt.Errorf("noisyrepo: %w", err)
	}
	if err := os.WriteFile(r.CounterPath, nil, 0o644); err != nil {
		return nil, fmt.Errorf("noisyrepo: %w", err)
	}
	return r, nil
}

// gitCmd is git in the repository with a fixed identity and no signing, so
// that the user's configuration does not change the history.
func (r *Repo) gitCmd(env []string, stdout *bytes.Buffer, args ...string) *exec.Cmd {
	full := append([]string{
		"-c", "user.name=Noisy Repo",
		"-c", "user.email=noisy@example.com",
		"-c", "commit.gpgsign=false",
		"-c", "core.autocrlf=false",
		"-c", "init.defaultBranch=main",
	}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	cmd.Env = append(cmd.Env, env...)
	if stdout != nil {
		cmd.Stdout = stdout
	}
	return cmd
}

func (r *Repo) git(env []string, args ...string) error {
	cmd := r.gitCmd(env, nil, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("noisyrepo: git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// config is the perfbot configuration of the repository. Its paths are
// relative to Root, except the counter file, which is absolute.
func (r *Repo) config() string {
	o := r.Options
	var b strings.Builder
	fmt.Fprintf(&b, "# A noisyrepo noise repository: %d commits, ", o.Commits)
	if o.NoChange {
		b.WriteString("no change.\n")
	} else {
		fmt.Fprintf(&b, "speed x%g from commit %d (%s).\n", o.Factor, r.CulpritIndex, r.Culprit)
	}
	fmt.Fprintf(&b, "# Runs vary log-normally with sigma %g; %s counts every run.\n", o.CV, filepath.Base(r.CounterPath))
	b.WriteString("repo:\n  url: ./repo\n  branch: main\n")
	b.WriteString("workdir: ./work\nstore: ./perfbot.db\nissues_dir: ./issues\n")
	if o.Build != "" {
		fmt.Fprintf(&b, "build:\n  - name: build\n    run: %s\n    timeout: 1m\n", yamlQuote(o.Build))
	}
	b.WriteString("benchmarks:\n  - name: decode\n    run: sh ./bench.sh\n    format: gobench\n    timeout: 1m\n")
	fmt.Fprintf(&b, "    env:\n      %s: %s\n", CounterEnv, yamlQuote(r.CounterPath))
	fmt.Fprintf(&b, "metrics:\n  - name: %s\n    benchmark: decode\n    select: %s\n    unit: %s\n    better: higher\n    primary: true\n",
		MetricName, strings.TrimPrefix(BenchmarkName, "Benchmark"), Unit)
	var bis []string
	if o.Confidence > 0 {
		bis = append(bis, "  confidence: "+strconv.FormatFloat(o.Confidence, 'g', -1, 64))
	}
	if o.MinEffect > 0 {
		bis = append(bis, "  min_effect: "+strconv.FormatFloat(o.MinEffect*100, 'g', -1, 64)+"%")
	}
	if o.MaxRuns > 0 {
		bis = append(bis, "  max_runs: "+strconv.Itoa(o.MaxRuns))
	}
	if o.Repeats > 0 {
		bis = append(bis, "  repeats: "+strconv.Itoa(o.Repeats))
	}
	if len(bis) > 0 {
		b.WriteString("bisect:\n" + strings.Join(bis, "\n") + "\n")
	}
	return b.String()
}

// yamlQuote writes s as a YAML double-quoted scalar.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// benchScript is bench.sh with the noise level cv baked in.
func benchScript(cv float64) string {
	return `#!/bin/sh
# bench.sh: one noisy Go benchmark line for the speed in ./speed (tok/s).
# Each run draws speed * exp(N(0, sigma^2)) afresh from /dev/urandom; when
# ` + CounterEnv + ` names a file, the run appends one line to it.
set -eu
here=$(dirname "$0")
speed=$(cat "$here/speed")
seed=$(od -An -N4 -tu4 /dev/urandom 2>/dev/null | tr -d ' \n') || seed=
if [ -z "$seed" ]; then
	seed="$$$(date +%N 2>/dev/null || echo 0)"
fi
# Seeds are kept below 2^31: mawk saturates larger ones.
line=$(awk -v speed="$speed" -v sigma=` + strconv.FormatFloat(cv, 'g', -1, 64) + ` -v seed="$seed" 'BEGIN {
	srand(seed % 2147483647)
	u1 = 1 - rand(); u2 = rand()
	z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2)
	v = speed * exp(sigma * z)
	printf "` + BenchmarkName + `-2   \t       1\t%10.0f ns/op\t%10.3f tok/s\n", 1e9 / v, v
}')
if [ -n "${` + CounterEnv + `:-}" ]; then
	printf '%s %s %s\n' "$$" "$speed" "$line" >> "$` + CounterEnv + `"
fi
printf 'goos: linux\ngoarch: amd64\npkg: noisyrepo\n%s\nPASS\n' "$line"
`
}

// Runs returns the number of bench.sh invocations recorded in the counter
// file so far.
func (r *Repo) Runs() (int, error) {
	f, err := os.Open(r.CounterPath)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			n++
		}
	}
	return n, sc.Err()
}

// ResetRuns empties the counter file.
func (r *Repo) ResetRuns() error {
	return os.WriteFile(r.CounterPath, nil, 0o644)
}

// Bench runs bench.sh once in the repository's checkout (the last commit,
// unless the caller checked out another), counted like any other run, and
// returns its tok/s.
func (r *Repo) Bench(ctx context.Context) (float64, error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", "./bench.sh")
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), CounterEnv+"="+r.CounterPath)
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("noisyrepo: bench.sh: %w", err)
	}
	return ParseTokS(out)
}

// ParseTokS returns the tok/s value of the BenchmarkDecode line in out.
func ParseTokS(out []byte) (float64, error) {
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[0], BenchmarkName) {
			continue
		}
		for i := 3; i+1 < len(f); i++ {
			if f[i+1] == Unit {
				return strconv.ParseFloat(f[i], 64)
			}
		}
	}
	return 0, fmt.Errorf("noisyrepo: no %s line with %s in %q", BenchmarkName, Unit, out)
}
