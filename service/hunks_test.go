package service

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops/gitopstest"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

// benchScript is the crafted repositories' benchmark: a real command run
// in the checkout, so the hunks really are applied by git and read back.
// It reports 1000 tok/s with ±0.5% noise, 900 when slow.sh says so.
const benchScript = `v=1000
if sh ./slow.sh; then v=900; fi
r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
awk -v v=$v -v r=$r 'BEGIN { printf "BenchmarkVerifyStep-2 1 1 ns/op %.3f tok/s\n", v*(1+0.01*(r/65535-0.5)) }'
`

// filler returns a file of n numbered lines, so edits far apart make
// separate hunks.
func filler(name string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s line %d\n", name, i)
	}
	return b.String()
}

// edit replaces line i of content.
func edit(content string, i int, line string) string {
	lines := strings.Split(content, "\n")
	lines[i] = line
	return strings.Join(lines, "\n")
}

// crafted is a repository whose last commit is the change searched.
type crafted struct {
	parent, culprit map[string]string // files; "" deletes
	slow            string            // slow.sh body: exit 0 when slow
	build           string            // build step
	want            []string          // files (or file::marker) of the minimal set
	direction       record.Direction  // "" searches a regression
}

func runHunkSearch(t *testing.T, c crafted) *HunksReport {
	t.Helper()
	bot, culprit := craftedBot(t, c)
	rep, err := bot.Hunks(context.Background(), HunksRequest{Rev: culprit, Direction: c.direction})
	require.NoError(t, err)
	return rep
}

// craftedBot commits c's parent and culprit and opens a Bot on them; it
// returns the culprit's hash.
func craftedBot(t *testing.T, c crafted) (*Bot, string) {
	t.Helper()
	b := gitopstest.NewBuilder(t)
	base := map[string]string{"bench.sh": benchScript, "slow.sh": c.slow}
	for k, v := range c.parent {
		base[k] = v
	}
	b.Commit("parent", base)
	culprit := b.Commit("culprit", c.culprit)
	build := c.build
	if build == "" {
		build = "true"
	}
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`repo:
  url: %s
build:
  - name: build
    run: %q
benchmarks:
  - name: engine
    run: sh bench.sh
    format: gobench
metrics:
  - name: verify_tok_s
    benchmark: engine
    select: BenchmarkVerifyStep
    unit: tok/s
components:
  communicator: ["comm/**"]
  attention: ["attn/**"]
`, b.Dir, build)), filepath.Join(dir, "perfbot.yaml"))
	require.NoError(t, err)
	bot, err := Open(context.Background(), cfg, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { bot.Close() })
	return bot, culprit
}

func TestHunkSearchOverCraftedRepositories(t *testing.T) {
	many := func(files, hunksPerFile int, slowFile string, slowHunk int) crafted {
		c := crafted{parent: map[string]string{}, culprit: map[string]string{}, slow: fmt.Sprintf("grep -q SLOW %s", slowFile)}
		for f := range files {
			name := fmt.Sprintf("comm/f%d.txt", f)
			content := filler(name, hunksPerFile*10)
			c.parent[name] = content
			for h := range hunksPerFile {
				line := fmt.Sprintf("%s edited %d", name, h)
				if name == slowFile && h == slowHunk {
					line += " SLOW"
				}
				content = edit(content, h*10+5, line)
			}
			c.culprit[name] = content
		}
		c.want = []string{slowFile}
		return c
	}
	tests := []struct {
		name      string
		c         crafted
		wantHunks int
		wantComp  string
		wantTotal int
	}{
		{name: "one hunk", c: many(1, 1, "comm/f0.txt", 0), wantHunks: 1, wantComp: "communicator", wantTotal: 1},
		{name: "one culprit among 8", c: many(4, 2, "comm/f2.txt", 1), wantHunks: 1, wantComp: "communicator", wantTotal: 8},
		{name: "one culprit among 32", c: many(8, 4, "comm/f5.txt", 3), wantHunks: 1, wantComp: "communicator", wantTotal: 32},
		{name: "two hunks that only regress together", c: func() crafted {
			c := many(4, 2, "x", 0)
			c.culprit["comm/f1.txt"] = edit(c.culprit["comm/f1.txt"], 5, "PART1")
			c.culprit["comm/f3.txt"] = edit(c.culprit["comm/f3.txt"], 15, "PART2")
			c.slow = "grep -q PART1 comm/f1.txt && grep -q PART2 comm/f3.txt"
			return c
		}(), wantHunks: 2, wantComp: "communicator", wantTotal: 8},
		{name: "a hunk that needs another to build", c: func() crafted {
			c := many(3, 2, "x", 0)
			c.parent["attn/kernels.py"] = filler("# kernels", 20)
			c.parent["attn/backend.py"] = filler("# backend", 20)
			c.culprit["attn/kernels.py"] = edit(c.parent["attn/kernels.py"], 10, "def tiled_extend_slow(): pass")
			c.culprit["attn/backend.py"] = edit(c.parent["attn/backend.py"], 10, "tiled_extend_slow()")
			c.slow = "grep -q tiled_extend_slow attn/backend.py"
			c.build = "! grep -q tiled_extend_slow attn/backend.py || grep -q 'def tiled_extend_slow' attn/kernels.py"
			return c
		}(), wantHunks: 2, wantComp: "attention", wantTotal: 8},
		{name: "a new file", c: func() crafted {
			c := many(2, 2, "x", 0)
			c.culprit["attn/slow.cfg"] = "mode=slow\n"
			c.slow = "test -f attn/slow.cfg"
			return c
		}(), wantHunks: 1, wantComp: "attention", wantTotal: 5},
		{name: "a deleted file", c: func() crafted {
			c := many(2, 2, "x", 0)
			c.parent["attn/fast.cfg"] = "mode=fast\n"
			c.culprit["attn/fast.cfg"] = ""
			c.slow = "test ! -f attn/fast.cfg"
			return c
		}(), wantHunks: 1, wantComp: "attention", wantTotal: 5},
		{name: "a rename", c: func() crafted {
			c := many(2, 2, "x", 0)
			c.parent["comm/fast.cfg"] = filler("fast", 10)
			c.culprit["comm/fast.cfg"] = ""
			c.culprit["comm/fast-renamed.cfg"] = filler("fast", 10)
			c.slow = "test ! -f comm/fast.cfg"
			return c
		}(), wantHunks: 1, wantComp: "communicator", wantTotal: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := runHunkSearch(t, tt.c)
			require.Equal(t, tt.wantTotal, rep.TotalHunks)
			var found []string
			for _, h := range rep.Hunks {
				found = append(found, h.File)
				require.Equal(t, tt.wantComp, h.Component)
				require.NotEmpty(t, h.Diff)
			}
			sort.Strings(found)
			require.Len(t, rep.Hunks, tt.wantHunks, "minimal set: %v (tests %d)", found, len(rep.Tests))
			if tt.wantHunks == 1 && tt.c.want[0] != "x" {
				require.Equal(t, tt.c.want, found)
				require.Contains(t, rep.Hunks[0].Diff, "SLOW")
			}
			require.Less(t, rep.Applied.Hi, 0.0, "applying the set alone slows down")
			require.Greater(t, rep.Reverted.Lo, 0.0, "reverting it alone recovers")
			require.Empty(t, rep.Warnings)
			t.Logf("%s: %d configurations, %d runs, %d builds", tt.name, rep.Configurations, rep.Runs, rep.Builds)
		})
	}
}

// An improvement's hunks are found like a regression's: the hunk that
// makes the culprit faster, among eight, with its effect the other way.
func TestHunkSearchOfAnImprovement(t *testing.T) {
	c := crafted{parent: map[string]string{}, culprit: map[string]string{}, slow: "! grep -q FAST comm/f2.txt", direction: record.Improvement}
	for f := range 4 {
		name := fmt.Sprintf("comm/f%d.txt", f)
		content := filler(name, 20)
		c.parent[name] = content
		for h := range 2 {
			line := fmt.Sprintf("%s edited %d", name, h)
			if f == 2 && h == 1 {
				line += " FAST"
			}
			content = edit(content, h*10+5, line)
		}
		c.culprit[name] = content
	}
	rep := runHunkSearch(t, c)
	require.Equal(t, record.Improvement, rep.Direction)
	require.Len(t, rep.Hunks, 1, "tests %+v", rep.Tests)
	require.Equal(t, "comm/f2.txt", rep.Hunks[0].File)
	require.Contains(t, rep.Hunks[0].Diff, "FAST")
	require.Greater(t, rep.Applied.Lo, 0.0, "applying the hunk alone speeds up")
	require.Less(t, rep.Reverted.Hi, 0.0, "reverting it alone slows down")
}

// A regression's hunk search on an improvement says it is none, and names
// the direction it looked for.
func TestHunkSearchOfTheWrongDirection(t *testing.T) {
	bot, culprit := craftedBot(t, crafted{parent: map[string]string{"f.txt": "a\n"}, culprit: map[string]string{"f.txt": "a FAST\n"}, slow: "! grep -q FAST f.txt"})
	bot.Config.Bisect.MinEffect = 0.02
	_, err := bot.Hunks(context.Background(), HunksRequest{Rev: culprit})
	require.ErrorIs(t, err, minimize.ErrNotWorse)
	require.ErrorContains(t, err, "no regression of verify_tok_s")
	_, err = bot.Hunks(context.Background(), HunksRequest{Rev: culprit, Direction: "sideways"})
	require.ErrorContains(t, err, `direction "sideways"`)
}

// A change of one hunk whose effect a confirmed bisection measured needs
// no search: its hunk is named with that effect and nothing runs. Without
// the effect (perfbot hunks on its own), the ends are measured.
func TestHunkSearchOfOneHunk(t *testing.T) {
	bot, culprit := craftedBot(t, crafted{parent: map[string]string{"comm/f.txt": "a\n"}, culprit: map[string]string{"comm/f.txt": "a SLOW\n"}, slow: "grep -q SLOW comm/f.txt"})
	known := &minimize.Effect{Effect: record.Effect{Pct: -10, Interval: record.Interval{Lo: -12, Hi: -8}}, N: 9}
	rep, err := bot.Hunks(context.Background(), HunksRequest{Rev: culprit, Known: known})
	require.NoError(t, err)
	require.Zero(t, rep.Runs, "nothing measured")
	require.Len(t, rep.Hunks, 1)
	require.Equal(t, "comm/f.txt", rep.Hunks[0].File)
	require.Equal(t, "communicator", rep.Hunks[0].Component)
	require.Equal(t, *known, rep.Applied)
	// Undoing −10% is +11.1%; the interval turns around.
	require.InDelta(t, 11.11, rep.Reverted.Pct, 0.01)
	require.InDelta(t, 100*(1/0.92-1), rep.Reverted.Lo, 1e-9)
	require.InDelta(t, 100*(1/0.88-1), rep.Reverted.Hi, 1e-9)

	rep, err = bot.Hunks(context.Background(), HunksRequest{Rev: culprit})
	require.NoError(t, err)
	require.Positive(t, rep.Runs, "measured without a known effect")
	require.Len(t, rep.Hunks, 1)
	require.Less(t, rep.Applied.Hi, 0.0)
}

// A culprit whose files are all named like documentation, with an effect
// a confirmed bisection measured, is searched all the same: the benchmark
// reads its file. File names never explain a measured effect away.
func TestHunkSearchOfDocsWithAMeasuredEffect(t *testing.T) {
	known := &minimize.Effect{Effect: record.Effect{Pct: -10, Interval: record.Interval{Lo: -12, Hi: -8}}, N: 9}
	for _, tc := range []struct {
		name    string
		parent  map[string]string
		culprit map[string]string
		want    string
	}{
		{name: "one hunk", parent: map[string]string{"docs/speed.md": "fast\n"}, culprit: map[string]string{"docs/speed.md": "SLOW\n"}, want: "docs/speed.md"},
		{name: "two files, one read by the benchmark",
			parent:  map[string]string{"docs/speed.md": "fast\n", "README.md": filler("README.md", 20)},
			culprit: map[string]string{"docs/speed.md": "SLOW\n", "README.md": edit(filler("README.md", 20), 5, "edited")},
			want:    "docs/speed.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bot, culprit := craftedBot(t, crafted{parent: tc.parent, culprit: tc.culprit, slow: "grep -q SLOW docs/speed.md"})
			rep, err := bot.Hunks(context.Background(), HunksRequest{Rev: culprit, Known: known})
			require.NoError(t, err)
			require.Empty(t, rep.NoRuntimeChange)
			require.Len(t, rep.Hunks, 1, "tests %+v", rep.Tests)
			require.Equal(t, tc.want, rep.Hunks[0].File)
			require.Less(t, rep.Applied.Hi, 0.0, "applying the hunk alone slows down")
		})
	}
}
