package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/configs"
	"github.com/perfbot/perfbot/gitops/gitopstest"
)

// readmeBlock returns the fenced block that follows the line
// "<!-- quickstart: NAME -->" in README.md, without its fences.
func readmeBlock(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	marker := "<!-- quickstart: " + name + " -->\n"
	_, after, ok := strings.Cut(string(data), marker)
	require.True(t, ok, "README.md has no line %q", strings.TrimSpace(marker))
	fence, body, ok := strings.Cut(after, "\n")
	require.True(t, ok && strings.HasPrefix(fence, "```"), "README.md: %s is not followed by a fenced block", strings.TrimSpace(marker))
	body, _, ok = strings.Cut(body, "\n```\n")
	require.True(t, ok, "README.md: the block after %s does not end", strings.TrimSpace(marker))
	return body + "\n"
}

// readmeCommands returns the command lines of a shell block: each line
// without its trailing "# ..." comment, blank lines left out.
func readmeCommands(block string) []string {
	var cmds []string
	for _, line := range strings.Split(block, "\n") {
		if i := strings.Index(line, " # "); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// quickStartRepo is the generated repository the quick start runs on: a
// Go decoder whose benchmark reports tok/s of a machine doing one counted
// operation a nanosecond (so the host's load does not change it), with 1%
// noise drawn per run. Six commits; the fourth makes attend do 12 passes
// instead of 10 (attend is 640 of the 704 operations a token costs, so
// the whole decode does 18% more work and runs 15% slower); the working
// copy holds two uncommitted hunks, of which the one in sample adds work.
type quickStartRepo struct {
	dir     string
	commits []string
	culprit string
}

const quickStartDecode = `// Package engine is a toy decoder. Each token costs a fixed number of
// operations, counted as they are done.
package engine

// Decode generates n tokens and returns the operations it spent.
func Decode(n int) (ops int) {
	state := make([]uint64, 64)
	for t := 0; t < n; t++ {
		ops += attend(state, uint64(t))
		ops += sample(state)
	}
	return ops
}

// attend mixes the token into the state: ten passes.
func attend(state []uint64, x uint64) (ops int) {
	for pass := 0; pass < 10; pass++ {
		for i := range state {
			state[i] = state[i]*6364136223846793005 + x + uint64(pass)
			ops++
		}
	}
	return ops
}

// sample picks the next token: one pass.
func sample(state []uint64) (ops int) {
	var best uint64
	for _, v := range state {
		best = max(best, v)
		ops++
	}
	return ops
}
`

const quickStartBench = `package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkDecode reports the tokens per second of a machine that does one
// operation a nanosecond, with 1% noise drawn afresh for every run.
func BenchmarkDecode(b *testing.B) {
	const tokens = 64
	ops := 0
	for i := 0; i < b.N; i++ {
		ops += Decode(tokens)
	}
	noise := math.Exp(0.01 * rand.NormFloat64())
	b.ReportMetric(float64(b.N*tokens)/(float64(ops)*1e-9)*noise, "tok/s")
}
`

func newQuickStartRepo(t *testing.T) *quickStartRepo {
	t.Helper()
	b := gitopstest.NewBuilder(t)
	r := &quickStartRepo{dir: b.Dir}
	decode := quickStartDecode
	edit := func(old, new string) string {
		require.Contains(t, decode, old)
		decode = strings.Replace(decode, old, new, 1)
		return decode
	}
	r.commits = []string{
		b.Commit("engine: a decoder of 64 tokens", map[string]string{
			"go.mod": "module example.com/engine\n\ngo 1.26\n", "decode.go": decode, "decode_test.go": quickStartBench,
		}),
		b.Commit("README: what the engine is", map[string]string{"README.md": "# engine\n"}),
		b.Commit("engine: say what sample picks", map[string]string{
			"decode.go": edit("// sample picks the next token: one pass.", "// sample picks the most likely next token: one pass."),
		}),
		b.Commit("engine: attend makes two more passes", map[string]string{
			"decode.go": edit("pass < 10", "pass < 12"),
		}),
		b.Commit("README: how to benchmark", map[string]string{"README.md": "# engine\n\ngo test -bench .\n"}),
		b.Commit("engine: a default token count", map[string]string{
			"decode.go": decode + "\n// Tokens is the number of tokens a request decodes by default.\nconst Tokens = 64\n",
		}),
	}
	r.culprit = r.commits[3]
	decode += "\n// Tokens is the number of tokens a request decodes by default.\nconst Tokens = 64\n"
	edit("// Decode generates n tokens", "// Decode generates n tokens, one at a time,")
	edit("\t\tbest = max(best, v)\n", "\t\tbest = max(best, v)\n\t\tbest = max(best, v^best)\n\t\tops++\n")
	b.Write(map[string]string{"decode.go": decode})
	return r
}

// TestREADMEQuickStart runs README.md's quick start as written: its
// perfbot.yaml goes into a generated Go repository, and each command of
// its block runs in sh, in order, with $REPO set to that repository and
// perfbot on PATH (this test binary), and must exit 0 and print what the
// README's comment beside it says.
func TestREADMEQuickStart(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the quick start builds a Go benchmark: %v", err)
	}
	r := newQuickStartRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "perfbot.yaml"), []byte(readmeBlock(t, "perfbot.yaml")), 0o644))
	short := func(i int) string { return regexp.QuoteMeta(r.commits[i][:10]) }
	culprit := regexp.QuoteMeta(r.culprit[:10])

	// What each command prints, as its comment in the README says. A
	// command the README adds or changes needs its line here.
	want := map[string][]string{
		"cd $REPO": nil,
		"perfbot measure HEAD~1 HEAD --repeats 5": {
			`(?m)^COMMIT\s+STATUS\s+METRIC\s+N\s+MEDIAN\s`,
			`(?m)^` + short(4) + `\s+ok\s+decode_tok_s\s+5\s+[0-9,]+ tok/s\s+\[`,
			`(?m)^` + short(5) + `\s+ok\s+decode_tok_s\s+5\s+[0-9,]+ tok/s\s+\[`,
		},
		"perfbot history --metric decode_tok_s": {
			`^(?:\S+ \S+\s+(?:` + short(4) + `|` + short(5) + `)\s+decode_tok_s\s+[0-9,]+ tok/s .*\n){10}$`,
		},
		"perfbot bisect --good HEAD~5 --bad HEAD --hunks": {
			`(?m)^culprit ` + culprit + ` -1[3-8]\.\d% \[`,
			`(?m)^\s+confirmed: \d+ interleaved runs`,
			`(?m)^hunks of ` + culprit + ` .*: 1 of 1 hunks explain`,
			`(?m)^\s+\[-\] decode\.go::attend `,
		},
		"perfbot hunks --worktree": {
			`(?m)^hunks of worktree .*: 1 of 2 hunks explain the change on decode_tok_s`,
			`(?m)^\s+\[-\] decode\.go::sample `,
		},
		"perfbot findings": {
			`(?m)^\S+\s+culprit\s+decode_tok_s\s+` + culprit + `\s+-1[3-8]\.\d`,
		},
	}
	bin := perfbotOnPath(t)
	var cds []string
	for _, line := range readmeCommands(readmeBlock(t, "commands")) {
		patterns, ok := want[line]
		require.True(t, ok, "README.md's quick start has a command this test does not know: %q", line)
		delete(want, line)
		script := strings.Join(append(cds, line), " && ")
		if strings.HasPrefix(line, "cd ") {
			cds = append(cds, line)
		}
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "REPO="+r.dir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%s\nstdout:\n%s\nstderr:\n%s", line, stdout.String(), stderr.String())
		for _, p := range patterns {
			require.Regexp(t, p, stdout.String(), "%s: stdout", line)
		}
		require.NotContains(t, stdout.String(), "perfbot.yaml", "%s: perfbot's own files are no hunks", line)
		require.NotContains(t, stdout.String(), ".perfbot/", "%s: perfbot's own files are no hunks", line)
	}
	require.Empty(t, want, "commands this test expects that README.md's quick start no longer has")
}

// TestREADMEInstall checks README.md's install block: its go install
// line names this module's command (the one line a test cannot run
// offline), and every other line runs with perfbot on PATH and prints
// perfbot's version.
func TestREADMEInstall(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	module := regexp.MustCompile(`(?m)^module (\S+)$`).FindSubmatch(mod)
	require.NotNil(t, module)
	cmds := readmeCommands(readmeBlock(t, "install"))
	require.Equal(t, "go install "+string(module[1])+"/cmd/perfbot@latest", cmds[0])
	bin := perfbotOnPath(t)
	for _, line := range cmds[1:] {
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", line, out)
		require.Regexp(t, `^perfbot \S+`, string(out), line)
	}
}

// perfbotOnPath returns a directory holding an executable "perfbot" that
// runs this test binary as perfbot (TestMain).
func perfbotOnPath(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nPERFBOT_TEST_MAIN=1 exec '%s' \"$@\"\n", exe)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot"), []byte(script), 0o755))
	return dir
}

// TestREADMESGLangNamesItsConfigsMetrics checks the SGLang section of
// README.md against the configuration it copies: every metric a command
// there names is one of that configuration's.
func TestREADMESGLangNamesItsConfigsMetrics(t *testing.T) {
	cmds := readmeCommands(readmeBlock(t, "sglang"))
	require.NotEmpty(t, cmds)
	cp := regexp.MustCompile(`^cp configs/(\S+\.yaml) perfbot\.yaml$`).FindStringSubmatch(cmds[0])
	require.NotNil(t, cp, "the SGLang block starts by copying an example: %q", cmds[0])
	data, err := configs.FS.ReadFile(cp[1])
	require.NoError(t, err)
	cfg, err := config.Parse(data, cp[1])
	require.NoError(t, err)
	known := map[string]bool{}
	for _, m := range cfg.Metrics {
		known[m.Name] = true
	}
	named := 0
	for _, line := range cmds {
		for _, m := range regexp.MustCompile(`--metric (\S+)`).FindAllStringSubmatch(line, -1) {
			require.True(t, known[m[1]], "README.md's SGLang section names metric %s, which %s does not have", m[1], cp[1])
			named++
		}
	}
	require.Positive(t, named)

	// The prose beside the block lists the configuration's metrics.
	listed := regexp.MustCompile(`(?s)Its metrics are\s(.*?)\.\n`).FindStringSubmatch(readmeSection(t, "## SGLang and vLLM"))
	require.NotNil(t, listed, "README.md's SGLang section says which metrics its configuration has")
	var names []string
	for _, m := range regexp.MustCompile("`([a-z0-9_]+)`").FindAllStringSubmatch(listed[1], -1) {
		names = append(names, m[1])
	}
	var want []string
	for _, m := range cfg.Metrics {
		want = append(want, m.Name)
	}
	require.ElementsMatch(t, want, names, "README.md's SGLang section lists %s's metrics", cp[1])
}

// readmeSection returns the text of README.md from the heading line to
// the next heading of the same or a higher level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	return docSection(t, "README.md", heading)
}

// TestREADMEListsEveryCommand: the README's command list names every
// command perfbot has.
func TestREADMEListsEveryCommand(t *testing.T) {
	section := readmeSection(t, "## Commands")
	root := perfbotTree()
	for _, path := range commandPaths(t)[1:] {
		cmd, _, err := root.Find(path)
		require.NoError(t, err)
		if cmd.HasSubCommands() {
			continue // a group: its commands are listed
		}
		require.Regexp(t, `(?m)^perfbot `+regexp.QuoteMeta(strings.Join(path, " "))+`\b`, section, "README.md's command list lacks perfbot %s", strings.Join(path, " "))
	}
}
