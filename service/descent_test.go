package service

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/record"
)

// engineMain is a Go engine whose speed is its dependency's: it prints
// kern.Speed tok/s with 0.4% noise.
const engineMain = `package main

import (
	"fmt"
	"math/rand"

	"example.com/kern"
)

func main() {
	v := float64(kern.Speed) * (1 + 0.004*(rand.Float64()-0.5))
	fmt.Printf("BenchmarkVerifyStep-2 10 1000 ns/op %.3f tok/s\n", v)
}
`

func kernFiles(speed int) map[string]string {
	return map[string]string{
		"go.mod":  "module example.com/kern\n\ngo 1.21\n",
		"kern.go": fmt.Sprintf("package kern\n\n// Speed is how fast the kernel runs.\nconst Speed = %d\n", speed),
	}
}

// kernRepo is the dependency's repository: v1.0.0 … v1.4.0, where the
// second of three commits between v1.2.0 and v1.3.0 makes it 10% slower.
type kernRepo struct {
	dir      string
	slow     string         // the commit that makes it slow
	versions map[string]int // version → speed
	files    map[string]map[string]string
}

func newKernRepo(t *testing.T) kernRepo {
	t.Helper()
	b := gitopstest.NewBuilder(t)
	k := kernRepo{dir: b.Dir, versions: map[string]int{}, files: map[string]map[string]string{}}
	tag := func(v string, speed int) {
		b.Tag(v)
		k.versions[v], k.files[v] = speed, kernFiles(speed)
	}
	b.Commit("kern 1.0", kernFiles(100))
	tag("v1.0.0", 100)
	b.Commit("kern 1.1", map[string]string{"README": "1.1\n"})
	tag("v1.1.0", 100)
	b.Commit("kern 1.2", map[string]string{"README": "1.2\n"})
	tag("v1.2.0", 100)
	b.Commit("kern: tidy", map[string]string{"NOTES": "tidy\n"})
	k.slow = b.Commit("kern: split the attention tile", kernFiles(90))
	b.Commit("kern: docs", map[string]string{"README": "1.3\n"})
	tag("v1.3.0", 90)
	b.Commit("kern 1.4", map[string]string{"README": "1.4\n"})
	tag("v1.4.0", 90)
	return k
}

// goEnv points the go command at a module proxy directory of the test and
// keeps it off the network and the user's caches.
func goEnv(t *testing.T, proxy string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	t.Setenv("GOPROXY", "file://"+proxy)
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GONOSUMDB", "*")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOWORK", "off")
}

// engineRepo is the watched repository: a Go engine requiring kern v1.0.0,
// then a commit that bumps it to v1.4.0.
func engineRepo(t *testing.T) (dir, parent, bump string) {
	t.Helper()
	b := gitopstest.NewBuilder(t)
	mod := func(v string) string {
		return "module example.com/engine\n\ngo 1.21\n\nrequire example.com/kern " + v + "\n"
	}
	b.Write(map[string]string{"go.mod": mod("v1.0.0"), "main.go": engineMain, ".gitignore": "/engine\n"})
	download(t, b.Dir)
	parent = b.Commit("engine", nil)
	b.Write(map[string]string{"go.mod": mod("v1.4.0")})
	download(t, b.Dir)
	bump = b.Commit("go.mod: update dependencies", nil)
	return b.Dir, parent, bump
}

func download(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "example.com/kern")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

func descentConfig(t *testing.T, repo, extra string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`repo:
  url: %s
  branch: main
build:
  - name: build
    run: go build -o engine .
benchmarks:
  - name: engine
    run: ./engine
    format: gobench
metrics:
  - name: verify_tok_s
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/s
%s`, repo, extra)), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	return cfg
}

// A culprit that bumps a Go module is descended into: the module proxy's
// versions between the two pins (GOPROXY=file://, written by the test)
// are bisected to the version that makes the engine 10% slower, and, with
// the module's repository configured, the commits between the version
// before and it to the commit that does, named with its pseudo-version and
// its hunk. The finding carries both descents.
func TestDescendGoModule(t *testing.T) {
	kern := newKernRepo(t)
	goEnv(t, gitopstest.GoProxy(t, "example.com/kern", kern.files))
	repo, parent, bump := engineRepo(t)
	tests := []struct {
		name        string
		extra       string
		wantCommits bool
	}{
		{name: "versions from the proxy"},
		{name: "then commits from the configured repository", wantCommits: true,
			extra: fmt.Sprintf("dependencies:\n  - {name: example.com/kern, repo: %s}\n", kern.dir)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			b, err := Open(ctx, descentConfig(t, repo, tt.extra), Options{})
			require.NoError(t, err)
			t.Cleanup(func() { b.Close() })
			bis, err := b.Bisect(ctx, BisectRequest{Good: parent, Bad: bump, Hunks: true})
			require.NoError(t, err)
			require.Equal(t, record.OutcomeCulprit, bis.Verdict)
			ds := bis.Descents[bump]
			if !tt.wantCommits {
				require.Len(t, ds, 1, "%+v", ds)
			} else {
				require.Len(t, ds, 2, "%+v", ds)
			}
			v := ds[0]
			assert.Equal(t, record.DescentVersions, v.Over)
			assert.Equal(t, 5, v.Searched, "v1.0.0 … v1.4.0")
			assert.Equal(t, record.OutcomeCulprit, v.Outcome, v.Text())
			assert.Equal(t, "v1.3.0", v.Culprit, v.Text())
			assert.Equal(t, "v1.2.0", v.Before)
			assert.True(t, v.Confirmed, v.Text())
			assert.InDelta(t, -10, v.Effect.Pct, 1.5)
			if tt.wantCommits {
				c := ds[1]
				assert.Equal(t, record.DescentCommits, c.Over)
				assert.Equal(t, 4, c.Searched, "v1.2.0, its two commits, v1.3.0")
				require.Equal(t, record.OutcomeCulprit, c.Outcome, c.Text())
				assert.Equal(t, kern.slow, c.Culprit)
				require.NotNil(t, c.Commit)
				assert.Equal(t, "kern: split the attention tile", c.Commit.Subject)
				assert.Regexp(t, `^v1\.2\.1-0\.\d{14}-`+kern.slow[:12]+`$`, c.PseudoVersion)
				require.Len(t, c.Hunks, 1, "%+v", c.Hunks)
				assert.Equal(t, "_perfbot_deps/example.com_kern/kern.go", c.Hunks[0].File)
			}

			fs, err := b.StoreFindings(ctx, bis)
			require.NoError(t, err)
			require.Len(t, fs, 1)
			assert.Equal(t, ds, fs[0].Culprits[0].Descents)
		})
	}
}

// submoduleBench is 100 tok/s, 90 while the submodule's kern.txt says
// "slow", with 0.4% noise.
const submoduleBench = `v=100
grep -q slow third_party/kern/kern.txt && v=90
awk -v v=$v -v s="$(od -An -N4 -tu4 /dev/urandom)" 'BEGIN { srand(s); printf "BenchmarkVerifyStep-2 10 1000 ns/op %.3f tok/s\n", v * (1 + 0.004 * (rand() - 0.5)) }'
`

// A culprit that moves a submodule is descended into: the submodule's
// commits between the two (its repository read from .gitmodules) are
// bisected with each one's tree swapped in at the submodule's path, to the
// commit that makes the engine 10% slower, and then its hunks.
func TestDescendSubmodule(t *testing.T) {
	ctx := context.Background()
	kb := gitopstest.NewBuilder(t)
	old := kb.Commit("kern 1", map[string]string{"kern.txt": "fast\n", "tile.txt": engineLines(nil)})
	for i := range 3 {
		kb.Commit(fmt.Sprintf("kern: tune %d", i), map[string]string{"notes.txt": fmt.Sprintf("%d\n", i)})
	}
	slow := kb.Commit("kern: split the attention tile", map[string]string{"kern.txt": "slow\n", "tile.txt": engineLines(map[int]string{30: "line 30 split\n"})})
	for i := range 3 {
		kb.Commit(fmt.Sprintf("kern: docs %d", i), map[string]string{"README": fmt.Sprintf("%d\n", i)})
	}
	newHead := kb.Head()

	b := gitopstest.NewBuilder(t)
	b.Write(map[string]string{"bench.sh": submoduleBench, ".gitmodules": "[submodule \"kern\"]\n\tpath = third_party/kern\n\turl = " + kb.Dir + "\n"})
	b.Git("add", "-A")
	b.Git("update-index", "--add", "--cacheinfo", "160000,"+old+",third_party/kern")
	b.Git("commit", "-q", "-m", "engine")
	parent := b.Head()
	b.Git("update-index", "--cacheinfo", "160000,"+newHead+",third_party/kern")
	b.Git("commit", "-q", "-m", "third_party: bump kern")
	bump := b.Head()

	cfg, err := config.Parse([]byte(fmt.Sprintf(`repo:
  url: %s
  branch: main
build:
  - name: submodules
    run: "git -c protocol.file.allow=always submodule update --init --quiet"
benchmarks:
  - name: engine
    run: sh bench.sh
    format: gobench
metrics:
  - name: verify_tok_s
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/s
`, b.Dir)), filepath.Join(t.TempDir(), "perfbot.yaml"))
	require.NoError(t, err)
	bot, err := Open(ctx, cfg, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { bot.Close() })

	bis, err := bot.Bisect(ctx, BisectRequest{Good: parent, Bad: bump, Hunks: true})
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, bis.Verdict)
	ds := bis.Descents[bump]
	require.Len(t, ds, 1, "%+v", bis.Warnings)
	d := ds[0]
	assert.Equal(t, record.DescentCommits, d.Over)
	assert.Equal(t, 8, d.Searched)
	require.Equal(t, record.OutcomeCulprit, d.Outcome, d.Text())
	assert.Equal(t, slow, d.Culprit, d.Text())
	require.NotNil(t, d.Commit)
	assert.Equal(t, "kern: split the attention tile", d.Commit.Subject)
	assert.Empty(t, d.PseudoVersion)
	assert.True(t, d.Confirmed)
	require.NotEmpty(t, d.Hunks)
	assert.Equal(t, "third_party/kern/kern.txt", d.Hunks[0].File, "the hunk that matters, not the tile's")
	assert.Len(t, d.Hunks, 1)

	// The process dies before the job is marked done: the same command
	// resumes, takes the descent's confirmations from the job's state
	// and measures nothing again.
	var swapped []string
	for _, s := range d.Steps {
		swapped = append(swapped, s.Commit)
	}
	before := map[string]int{}
	for _, h := range swapped {
		before[h] = countRuns(t, bot, h)
	}
	j, ok, err := bot.Store.Job(bis.JobID)
	require.NoError(t, err)
	require.True(t, ok)
	j.Status, j.Result = record.JobRunning, nil
	require.NoError(t, bot.Store.PutJob(j))
	again, err := bot.Bisect(ctx, BisectRequest{Good: parent, Bad: bump, Hunks: true})
	require.NoError(t, err)
	require.Len(t, again.Descents[bump], 1)
	assert.Equal(t, d.Culprit, again.Descents[bump][0].Culprit)
	for _, h := range swapped {
		assert.Equal(t, before[h], countRuns(t, bot, h), "%s measured again", record.ShortHash(h))
	}
}

// pythonInstall is the build step of a Python engine, as pip would do
// it with --no-index --find-links: it installs the kern that
// requirements.txt pins from the wheels directory (failing when the
// directory has no wheel of it), and what it installs is the speed the
// directory gives the version.
const pythonInstall = `set -e
v=$(sed -n 's/^kern_ops==//p' requirements.txt)
test -f "$WHEELS/kern_ops-$v-py3-none-any.whl"
cp "$WHEELS/$v.speed" .installed-speed
`

// pythonBench is the installed kern's speed with 0.4% noise.
const pythonBench = `awk -v v="$(cat .installed-speed)" -v s="$(od -An -N4 -tu4 /dev/urandom)" 'BEGIN { srand(s); printf "BenchmarkVerifyStep-2 10 1000 ns/op %.3f tok/s\n", v * (1 + 0.004 * (rand() - 0.5)) }'
`

// wheelsDir writes a directory of empty wheels of kern-ops, 0.9.0 … 1.4.0
// with a post release, each with the speed it gives the engine: 1.3.0
// makes it 10% slower. A wheel of another package sits among them.
func wheelsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	speeds := map[string]string{"0.9.0": "100", "1.0.0": "100", "1.1.0": "100", "1.2.0": "100", "1.2.0.post1": "100", "1.3.0": "90", "1.4.0": "90"}
	for v, speed := range speeds {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "kern_ops-"+v+"-py3-none-any.whl"), nil, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, v+".speed"), []byte(speed+"\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "numpy-1.26.4-cp312-cp312-linux_x86_64.whl"), nil, 0o644))
	return dir
}

// pythonRepo is a Python engine pinning kern_ops==1.0.0 beside numpy,
// then a commit that bumps it to 1.4.0.
func pythonRepo(t *testing.T) (dir, parent, bump string) {
	t.Helper()
	b := gitopstest.NewBuilder(t)
	parent = b.Commit("engine", map[string]string{"install.sh": pythonInstall, "bench.sh": pythonBench,
		".gitignore": ".installed-speed\n", "requirements.txt": "numpy==1.26.4\nkern_ops==1.0.0\n"})
	bump = b.Commit("requirements: bump kern", map[string]string{"requirements.txt": "numpy==1.26.4\nkern_ops==1.4.0\n"})
	return b.Dir, parent, bump
}

func pythonConfig(t *testing.T, repo, wheels, deps string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`repo:
  url: %s
  branch: main
build:
  - name: install
    run: WHEELS=%s sh install.sh
benchmarks:
  - name: engine
    run: sh bench.sh
    format: gobench
metrics:
  - name: verify_tok_s
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/s
%s`, repo, wheels, deps)), filepath.Join(t.TempDir(), "perfbot.yaml"))
	require.NoError(t, err)
	return cfg
}

// A culprit that bumps a Python pin is descended into when the package has
// a wheels directory: the versions it holds between the two pins are
// bisected, each a commit on the culprit with the pin rewritten, which the
// build step installs, to the version that makes the engine 10% slower.
// The pin, the wheels and the configuration spell the package three ways
// that PEP 503 deems one. The finding carries the descent.
func TestDescendPythonWheels(t *testing.T) {
	ctx := context.Background()
	wheels := wheelsDir(t)
	repo, parent, bump := pythonRepo(t)
	b, err := Open(ctx, pythonConfig(t, repo, wheels, fmt.Sprintf("dependencies:\n  - {name: Kern.Ops, wheels: %s}\n", wheels)), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	bis, err := b.Bisect(ctx, BisectRequest{Good: parent, Bad: bump, Hunks: true})
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, bis.Verdict)
	ds := bis.Descents[bump]
	require.Len(t, ds, 1, "%+v", bis.Warnings)
	v := ds[0]
	assert.Equal(t, record.DependencyChange{Kind: record.DependencyPython, Name: "kern-ops", File: "requirements.txt", Old: "1.0.0", New: "1.4.0"}, v.Dependency)
	assert.Equal(t, record.DescentVersions, v.Over)
	assert.Equal(t, 6, v.Searched, "1.0.0, 1.1.0, 1.2.0, 1.2.0.post1, 1.3.0, 1.4.0")
	require.Equal(t, record.OutcomeCulprit, v.Outcome, v.Text())
	assert.Equal(t, "1.3.0", v.Culprit, v.Text())
	assert.Equal(t, "1.2.0.post1", v.Before)
	assert.True(t, v.Confirmed, v.Text())
	assert.InDelta(t, -10, v.Effect.Pct, 1.5)
	for _, s := range v.Steps {
		pins, err := exec.Command("git", "--git-dir", b.Repo.Dir(), "show", s.Commit+":requirements.txt").Output()
		require.NoError(t, err)
		assert.Equal(t, "numpy==1.26.4\nkern_ops=="+s.Version+"\n", string(pins), "the probe of %s pins it", s.Version)
	}

	fs, err := b.StoreFindings(ctx, bis)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	assert.Equal(t, ds, fs[0].Culprits[0].Descents)
}

// A Python pin that cannot be descended into is named, with both
// versions, and the finding says plainly why; the culprit stands.
func TestNotDescendedPythonPin(t *testing.T) {
	ctx := context.Background()
	b := gitopstest.NewBuilder(t)
	bench := `v=100
grep -q 'torch==2.4' requirements.txt && v=90
awk -v v=$v -v s="$(od -An -N4 -tu4 /dev/urandom)" 'BEGIN { srand(s); printf "BenchmarkVerifyStep-2 10 1000 ns/op %.3f tok/s\n", v * (1 + 0.004 * (rand() - 0.5)) }'
`
	parent := b.Commit("engine", map[string]string{"bench.sh": bench, "requirements.txt": "numpy==1.26.4\ntorch==2.3.0\n"})
	bump := b.Commit("requirements: torch 2.4", map[string]string{"requirements.txt": "numpy==1.26.4\ntorch==2.4.1\n"})
	wheels := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(wheels, "torch-2.3.0-cp312-cp312-linux_x86_64.whl"), nil, 0o644))
	tests := []struct {
		name, deps, reason string
	}{
		{name: "no wheels directory configured",
			reason: "no wheels directory is configured for torch (dependencies: {name: torch, wheels: DIR})"},
		{name: "a git repository configured, not wheels", deps: "dependencies:\n  - {name: torch, repo: /nonexistent/torch}\n",
			reason: "no wheels directory is configured for torch (dependencies: {name: torch, wheels: DIR})"},
		{name: "the new version has no wheel", deps: fmt.Sprintf("dependencies:\n  - {name: torch, wheels: %s}\n", wheels),
			reason: "versions of torch: " + wheels + " holds no wheel of torch 2.4.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := revertRepo{dir: b.Dir}
			bot, err := Open(ctx, r.config(t, tt.deps), Options{})
			require.NoError(t, err)
			t.Cleanup(func() { bot.Close() })
			bis, err := bot.Bisect(ctx, BisectRequest{Good: parent, Bad: bump, Hunks: true})
			require.NoError(t, err)
			require.Equal(t, record.OutcomeCulprit, bis.Verdict)
			assert.Empty(t, bis.Descents)
			var got []string
			for _, w := range bis.Warnings {
				if w.Kind == record.WarnNotDescended {
					got = append(got, w.String())
				}
			}
			assert.Equal(t, []string{"not descended into torch 2.3.0 → 2.4.1 (requirements.txt) of " + record.ShortHash(bump) + ": " + tt.reason}, got)
			fs, err := bot.StoreFindings(ctx, bis)
			require.NoError(t, err)
			assert.Contains(t, record.WarningStrings(fs[0].Warnings), got[0])
		})
	}
}
