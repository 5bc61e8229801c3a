package runner

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/secret"
)

// GPUQueryFields are the nvidia-smi --query-gpu fields recorded with every
// run: identity, the clocks and temperature that move with throttling,
// and the throttle reasons that say why.
var GPUQueryFields = []string{
	"index", "name", "driver_version", "clocks.sm", "clocks.mem",
	"temperature.gpu", "power.draw", "clocks_throttle_reasons.active",
}

// FactTimeout bounds each probe of the machine (uname, go version,
// nvidia-smi): a hung driver must not hang the measurement.
const FactTimeout = 30 * time.Second

// Facts describes this machine. It is computed on the first call and
// cached; an error (nvidia-smi present but failing, which means a broken
// driver) is not cached.
func (l *Local) Facts(ctx context.Context) (record.Fingerprint, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.facts == nil {
		fp, err := localFacts(ctx)
		if err != nil {
			return record.Fingerprint{}, l.infra("collect host facts", err)
		}
		l.facts = &fp
	}
	fp := *l.facts
	fp.GPUs = slices.Clone(fp.GPUs)
	return fp, nil
}

func localFacts(ctx context.Context) (record.Fingerprint, error) {
	fp := record.Fingerprint{
		OS:       runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:     runtime.NumCPU(),
		CPUModel: cpuModel(),
	}
	fp.Host, _ = os.Hostname()
	if distro := osRelease(); distro != "" {
		fp.OS += " (" + distro + ")"
	}
	fp.Kernel, _ = probe(ctx, "uname", "-r")
	if v, err := probe(ctx, "go", "version"); err == nil {
		fp.GoVersion = strings.TrimPrefix(v, "go version ")
	}
	fp.Python, _ = probe(ctx, "python3", "--version")

	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		return fp, nil // not a GPU host
	}
	out, err := probe(ctx, "nvidia-smi", "--query-gpu="+strings.Join(GPUQueryFields, ","), "--format=csv,nounits")
	if err != nil {
		return fp, err
	}
	fp.GPUs, err = ParseGPUQuery(strings.NewReader(out))
	if err != nil {
		return fp, fmt.Errorf("nvidia-smi: %w", err)
	}
	return fp, nil
}

// probe runs a program found on PATH and returns its trimmed output.
func probe(ctx context.Context, name string, args ...string) (string, error) {
	if _, err := exec.LookPath(name); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, FactTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		first, _, _ := strings.Cut(text, "\n")
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, proc.Clip(first, 200))
	}
	return text, nil
}

// cpuModel reads the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// osRelease reads the distribution's PRETTY_NAME.
func osRelease() string {
	data, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// gpuColumns maps nvidia-smi CSV header names, without their " [unit]"
// suffix, to the GPU field they fill. The header spells some fields
// differently from the query (clocks.sm is "clocks.current.sm"), and
// newer drivers renamed throttle reasons to event reasons.
var gpuColumns = map[string]func(g *record.GPU, v string) error{
	"index": func(g *record.GPU, v string) (err error) { g.Index, err = strconv.Atoi(v); return err },
	"name":  func(g *record.GPU, v string) error { g.Name = v; return nil },

	"driver_version":                 func(g *record.GPU, v string) error { g.Driver = v; return nil },
	"clocks.current.sm":              func(g *record.GPU, v string) error { return number(&g.SMClockMHz, v) },
	"clocks.sm":                      func(g *record.GPU, v string) error { return number(&g.SMClockMHz, v) },
	"clocks.current.memory":          func(g *record.GPU, v string) error { return number(&g.MemClockMHz, v) },
	"clocks.mem":                     func(g *record.GPU, v string) error { return number(&g.MemClockMHz, v) },
	"temperature.gpu":                func(g *record.GPU, v string) error { return number(&g.TemperatureC, v) },
	"power.draw":                     func(g *record.GPU, v string) error { return number(&g.PowerW, v) },
	"power.draw.instant":             func(g *record.GPU, v string) error { return number(&g.PowerW, v) },
	"clocks_throttle_reasons.active": func(g *record.GPU, v string) error { g.ThrottleReasons = v; return nil },
	"clocks_event_reasons.active":    func(g *record.GPU, v string) error { g.ThrottleReasons = v; return nil },
}

var (
	unitSuffix   = regexp.MustCompile(`\s*\[[^\]]*\]$`)
	notAvailable = map[string]bool{"N/A": true, "[N/A]": true, "[Not Supported]": true, "Not Supported": true}
)

// number parses a value with or without its unit ("1980 MHz", "128.51").
// nvidia-smi writes [N/A] for what a GPU does not report; that stays 0.
func number(dst *float64, v string) error {
	if notAvailable[v] {
		return nil
	}
	num, _, _ := strings.Cut(v, " ")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%q is not a finite number", v)
	}
	*dst = f
	return nil
}

// ParseGPUQuery reads the output of nvidia-smi --query-gpu=...
// --format=csv (with or without nounits). The header line names the
// columns, so any field order or subset is accepted; columns perfbot does
// not record are skipped. Lines starting with '#' are ignored. Without an
// index column, GPUs are numbered in row order.
func ParseGPUQuery(r io.Reader) ([]record.GPU, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("gpu query: empty output")
	}
	if err != nil {
		return nil, fmt.Errorf("gpu query: header: %w", err)
	}
	set := make([]func(*record.GPU, string) error, len(header))
	known := 0
	for i, h := range header {
		if set[i] = gpuColumns[unitSuffix.ReplaceAllString(strings.TrimSpace(h), "")]; set[i] != nil {
			known++
		}
	}
	if known == 0 {
		return nil, fmt.Errorf("gpu query: first line %q names no known column (query with --format=csv, not noheader)", strings.Join(header, ", "))
	}
	var gpus []record.GPU
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("gpu query: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			return nil, fmt.Errorf("gpu query: line %d has %d fields, the header %d: %q", line, len(rec), len(header), strings.Join(rec, ", "))
		}
		g := record.GPU{Index: len(gpus)}
		for i, v := range rec {
			if set[i] == nil {
				continue
			}
			if err := set[i](&g, strings.TrimSpace(v)); err != nil {
				return nil, fmt.Errorf("gpu query: line %d, %s: %w", line, header[i], err)
			}
		}
		gpus = append(gpus, g)
	}
	if len(gpus) == 0 {
		return nil, fmt.Errorf("gpu query: no GPUs listed")
	}
	return gpus, nil
}

// fingerprintEnv are the variables recorded with every run besides those
// configured: the ones that change inference performance without
// changing the code. PATH is never recorded (it differs by user and
// checkout and would flag every comparison).
var fingerprintEnv = []string{"NCCL_*", "CUDA_*", "GO*", "OMP_*"}

// keptEnv returns the variables of seen that a fingerprint records: the
// defaults, those matching keep (names or path.Match globs) and those
// named in the step's own configuration (explicit), with secrets redacted.
func keptEnv(seen map[string]string, keep []string, explicit ...map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range seen {
		if k == "PATH" || !recorded(k, keep, explicit) {
			continue
		}
		out[k] = secret.Redact(k, v)
	}
	return out
}

func recorded(name string, keep []string, explicit []map[string]string) bool {
	for _, m := range explicit {
		if _, ok := m[name]; ok {
			return true
		}
	}
	for _, list := range [][]string{fingerprintEnv, keep} {
		for _, pattern := range list {
			if ok, _ := path.Match(pattern, name); ok {
				return true
			}
		}
	}
	return false
}
