// Command figures writes docs/figures.md: the output of perfbot's
// benchmark programs, verbatim, one section each, under a header that
// says when, at which commit and on which machine they ran. It is the one
// place for measured figures; nothing else in the repository quotes them.
// Measurements that need another machine or the network (a real module's
// history, a GPU) cannot run here: their scripts' output is kept as it
// was printed, in results files beside the scripts, and the page copies
// those files in, each under its name. Run it through make:
//
//	make figures                      each program at its own trial count
//	make figures FIGURES_TRIALS=100   fewer trials per row, sooner
//	make figures FIGURES_SLOW=1       also bench-cli and bench-loadgen (they build and run bin/perfbot)
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// program is one benchmark program and what its section says about it.
type program struct {
	name  string // the directory under cmd/
	about string
	// trials says whether the program takes -trials.
	trials bool
	// slow programs run only with -slow: they need bin/perfbot or a
	// machine to themselves.
	slow bool
	// args are the program's arguments besides -trials.
	args func(perfbot string) []string
}

var programs = []program{
	{
		name:   "bench-bisect",
		about:  "The bisection, simulated: perfbot's search beside plain bisection and a Pinpoint-like explorer, on lognormal noise, with drift, outliers, several hosts and the whole job as `perfbot bisect` runs it.",
		trials: true,
	},
	{
		name:   "bench-ddmin",
		about:  "The hunk search (`minimize.Isolate`), simulated: configurations tested besides the two ends, for one culprit hunk among H, an interacting pair, and hunks that need another to build.",
		trials: true,
	},
	{
		name:   "bench-detect",
		about:  "Nightly change detection on seeded series, beside a Perfherder-style t-test and an Otava-style e-divisive: false alarms on quiet series, and nights until a drop is alerted.",
		trials: true,
	},
	{
		name:  "bench-cli",
		about: "The real command: `perfbot bisect` on generated git repositories of 64 commits at 2% noise with one 5% regression, and some without a change; every benchmark run counted by the benchmark itself.",
		slow:  true,
		args:  func(perfbot string) []string { return []string{"-perfbot", perfbot, "-repos", "20", "-nochange", "5"} },
	},
	{
		name:  "bench-loadgen",
		about: "The load generator's own cost against a trivial local server: CPU per request, and the highest Poisson rate it sustains.",
		slow:  true,
	},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "figures:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("figures", flag.ContinueOnError)
	out := fs.String("o", "docs/figures.md", "the page to write")
	trials := fs.String("trials", "", "trials per row for the programs that take -trials (empty: each program's default)")
	slow := fs.Bool("slow", false, "also run bench-cli and bench-loadgen")
	perfbot := fs.String("perfbot", "bin/perfbot", "the perfbot binary bench-cli measures")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *trials != "" {
		if n, err := strconv.Atoi(*trials); err != nil || n < 1 {
			return fmt.Errorf("-trials %q: want a positive whole number", *trials)
		}
	}

	var body bytes.Buffer
	for _, p := range programs {
		if p.slow && !*slow {
			continue
		}
		cmdline := []string{"go", "run", "./cmd/" + p.name}
		if p.trials && *trials != "" {
			cmdline = append(cmdline, "-trials", *trials)
		}
		if p.args != nil {
			cmdline = append(cmdline, p.args(*perfbot)...)
		}
		fmt.Fprintf(os.Stderr, "figures: %s\n", strings.Join(cmdline, " "))
		start := time.Now()
		c := exec.CommandContext(ctx, cmdline[0], cmdline[1:]...)
		var stdout bytes.Buffer
		c.Stdout, c.Stderr = &stdout, os.Stderr
		if err := c.Run(); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(cmdline, " "), err)
		}
		took := time.Since(start).Round(time.Second)
		fmt.Fprintf(&body, "## %s\n\n%s\n\n`%s` (%s):\n\n", p.name, p.about, strings.Join(cmdline, " "), took)
		writeVerbatim(&body, stdout.String())
	}

	headed := false
	for _, set := range recorded {
		files, err := filepath.Glob(set.glob)
		if err != nil {
			return fmt.Errorf("results files %q: %w", set.glob, err)
		}
		if len(files) == 0 {
			continue
		}
		if !headed {
			body.WriteString("## Recorded elsewhere\n\n")
			headed = true
		}
		fmt.Fprintf(&body, "### %s\n\n%s\n\n", set.title, set.about)
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			fmt.Fprintf(&body, "#### %s\n\n", filepath.ToSlash(f))
			writeVerbatim(&body, string(text))
		}
	}

	var page bytes.Buffer
	page.WriteString("# Figures\n\n")
	page.WriteString("Written by `make figures` (scripts/figures) from the benchmark programs' own output: do not edit it by hand.\n")
	page.WriteString("Every other page links here instead of quoting a figure.\n\n")
	fmt.Fprintf(&page, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&page, "- commit: %s\n", commit(ctx, *out))
	fmt.Fprintf(&page, "- machine: %s\n", machine(ctx))
	fmt.Fprintf(&page, "- Go: %s\n", output(ctx, "go", "env", "GOVERSION"))
	if *trials != "" {
		fmt.Fprintf(&page, "- trials: %s per row (`FIGURES_TRIALS=%s`) for the programs that take `-trials`\n", *trials, *trials)
	} else {
		page.WriteString("- trials: each program's default\n")
	}
	if !*slow {
		page.WriteString("- bench-cli and bench-loadgen: not run (`FIGURES_SLOW=1` runs them)\n")
	}
	page.WriteString("\n")
	page.Write(body.Bytes())

	tmp := *out + ".tmp"
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, page.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, *out)
}

// recorded are the results files of measurements that cannot run where
// the page is written, copied in as their scripts printed them.
var recorded = []struct{ glob, title, about string }{
	{
		glob:  "scripts/realbisect/results/*.txt",
		title: "Real modules' histories",
		about: "perfbot beside `git bisect run` on real modules' histories (`scripts/realbisect/compare.sh`); each file's first lines say when, with which perfbot and on which host it ran.",
	},
	{
		glob:  "scripts/gptfast/results/*/*.txt",
		title: "gpt-fast on a GPU",
		about: "`scripts/gptfast/device.sh`'s steps on a lent GPU machine, one folder per session (named by month and day); `scripts/gptfast/results/README.md` says which calls made them and where a call's limit cut one short. Each setup.txt names the GPU.",
	},
}

// writeVerbatim writes a program's output as it is: paragraphs that are
// Markdown tables stay tables, every other paragraph goes in a text block.
func writeVerbatim(w io.Writer, text string) {
	for _, para := range strings.Split(strings.TrimRight(text, "\n"), "\n\n") {
		para = strings.Trim(para, "\n")
		if para == "" {
			continue
		}
		if isTable(para) {
			fmt.Fprintf(w, "%s\n\n", para)
		} else {
			fmt.Fprintf(w, "```text\n%s\n```\n\n", para)
		}
	}
}

func isTable(para string) bool {
	for _, line := range strings.Split(para, "\n") {
		if !strings.HasPrefix(line, "|") {
			return false
		}
	}
	return true
}

// commit is HEAD's short hash, and whether the tree differs from it
// (the page itself left out).
func commit(ctx context.Context, page string) string {
	head := output(ctx, "git", "rev-parse", "--short", "HEAD")
	if output(ctx, "git", "status", "--porcelain", "--", ".", ":(exclude)"+page) != "" {
		head += " with uncommitted changes"
	}
	return head
}

// machine is the architecture, the CPU model and the CPUs this process
// may use.
func machine(ctx context.Context) string {
	arch := output(ctx, "uname", "-m")
	if arch == "" {
		arch = runtime.GOARCH
	}
	cpus := output(ctx, "nproc")
	if cpus == "" {
		cpus = strconv.Itoa(runtime.NumCPU())
	}
	return fmt.Sprintf("%s, %s, %s CPUs", arch, cpuModel(), cpus)
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown CPU"
}

// output runs a command and returns its trimmed stdout; empty when it
// fails.
func output(ctx context.Context, name string, args ...string) string {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
