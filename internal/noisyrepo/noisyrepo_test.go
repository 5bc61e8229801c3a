package noisyrepo

import (
	"context"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/config"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

func TestCreate(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	r, err := Create(t.TempDir(), Options{Commits: 12, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Commits) != 12 || len(r.Speeds) != 12 {
		t.Fatalf("%d commits, %d speeds; want 12", len(r.Commits), len(r.Speeds))
	}
	if n := gitOut(t, r.Dir, "rev-list", "--count", "main"); n != "12" {
		t.Fatalf("git rev-list --count main = %s, want 12", n)
	}
	if r.CulpritIndex < 1 || r.CulpritIndex > 10 {
		t.Fatalf("culprit index %d outside 1..10", r.CulpritIndex)
	}
	if r.Culprit != r.Commits[r.CulpritIndex] {
		t.Fatalf("culprit %s is not commit %d", r.Culprit, r.CulpritIndex)
	}
	for i, s := range r.Speeds {
		want := DefaultBase
		if i >= r.CulpritIndex {
			want = DefaultBase * DefaultFactor
		}
		if s != want {
			t.Errorf("speed of commit %d = %g, want %g", i, s, want)
		}
		if got := gitOut(t, r.Dir, "show", r.Commits[i]+":speed"); got != strconv.FormatFloat(want, 'f', -1, 64) {
			t.Errorf("commit %d: speed file %q, want %g", i, got, want)
		}
		// Every commit has a real diff: its own c<i>.txt.
		files := gitOut(t, r.Dir, "show", "--name-only", "--format=", r.Commits[i])
		if !strings.Contains(files, "c"+strconv.Itoa(i)+".txt") {
			t.Errorf("commit %d changes %q, want c%d.txt among them", i, files, i)
		}
	}
	if got := gitOut(t, r.Dir, "show", r.Culprit+":speed"); got != "950" {
		t.Errorf("culprit speed file = %q, want 950", got)
	}
	if got := gitOut(t, r.Dir, "show", r.Commits[r.CulpritIndex-1]+":speed"); got != "1000" {
		t.Errorf("parent speed file = %q, want 1000", got)
	}

	// The history is deterministic.
	r2, err := Create(t.TempDir(), Options{Commits: 12, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(r2.Commits, " ") != strings.Join(r.Commits, " ") {
		t.Errorf("same options, different hashes:\n%v\n%v", r.Commits, r2.Commits)
	}

	// The configuration loads with perfbot's own strict loader.
	c, err := config.Load(r.ConfigPath)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if m := c.Primary(); m.Name != MetricName || m.Unit != Unit {
		t.Errorf("primary metric %+v", m)
	}
	if c.Repo.URL != r.Dir {
		t.Errorf("repo.url = %q, want %q", c.Repo.URL, r.Dir)
	}

	// bench.sh varies from run to run (several runs within the same
	// second) and averages near the true speed.
	const runs = 30
	var sum, sumsq float64
	seen := map[float64]bool{}
	for range runs {
		v, err := r.Bench(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[v] = true
		l := math.Log(v / 950)
		sum += l
		sumsq += l * l
	}
	if len(seen) < runs-1 {
		t.Errorf("%d distinct values in %d runs", len(seen), runs)
	}
	mean := sum / runs
	sd := math.Sqrt(sumsq/runs - mean*mean)
	// The mean log ratio has a standard error of 0.02/sqrt(30) ≈ 0.0037.
	if math.Abs(mean) > 0.015 {
		t.Errorf("mean log(v/950) = %.4f, want near 0", mean)
	}
	if sd < 0.008 || sd > 0.04 {
		t.Errorf("sd of log(v/950) = %.4f, want near 0.02", sd)
	}
	n, err := r.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if n != runs {
		t.Errorf("counter holds %d runs, want %d", n, runs)
	}
	if err := r.ResetRuns(); err != nil {
		t.Fatal(err)
	}
	if n, _ := r.Runs(); n != 0 {
		t.Errorf("after ResetRuns: %d runs", n)
	}
}

func TestNoChange(t *testing.T) {
	needGit(t)
	r, err := Create(t.TempDir(), Options{Commits: 5, NoChange: true, MaxRuns: 50, MinEffect: 0.03})
	if err != nil {
		t.Fatal(err)
	}
	if r.Culprit != "" || r.CulpritIndex != -1 {
		t.Errorf("culprit %q at %d in a NoChange repository", r.Culprit, r.CulpritIndex)
	}
	for i, s := range r.Speeds {
		if s != DefaultBase {
			t.Errorf("speed of commit %d = %g", i, s)
		}
	}
	c, err := config.Load(r.ConfigPath)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if c.Bisect.MaxRuns != 50 || math.Abs(c.Bisect.MinEffect-0.03) > 1e-12 {
		t.Errorf("bisect %+v, want max_runs 50, min_effect 3%%", c.Bisect)
	}
}

func TestCulpritIndex(t *testing.T) {
	seen := map[int]bool{}
	for seed := range uint64(200) {
		i := CulpritIndex(seed, 6)
		if i < 1 || i > 4 {
			t.Fatalf("seed %d: index %d outside 1..4", seed, i)
		}
		seen[i] = true
	}
	if len(seen) != 4 {
		t.Errorf("200 seeds pick %d of the 4 possible indexes", len(seen))
	}
}

func TestParseTokS(t *testing.T) {
	v, err := ParseTokS([]byte("goos: linux\nBenchmarkDecode-2   \t       1\t   1012555 ns/op\t    987.60 tok/s\nPASS\n"))
	if err != nil || v != 987.6 {
		t.Fatalf("ParseTokS = %v, %v", v, err)
	}
	if _, err := ParseTokS([]byte("PASS\n")); err == nil {
		t.Fatal("no error without a benchmark line")
	}
}

func TestCreateErrors(t *testing.T) {
	if _, err := Create(filepath.Join(t.TempDir(), "x"), Options{Commits: 2}); err == nil {
		t.Error("2 commits accepted")
	}
	if _, err := Create(filepath.Join(t.TempDir(), "x"), Options{CV: -1}); err == nil {
		t.Error("negative cv accepted")
	}
}
