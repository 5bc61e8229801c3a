package runner

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/secret"
	"github.com/perfbot/perfbot/stats"
)

// GPUSampleFields are the nvidia-smi --query-gpu fields sampled during
// every benchmark step on a GPU host, in the order of its
// --format=csv,noheader,nounits rows.
var GPUSampleFields = []string{
	"index", "name", "driver_version", "clocks.sm", "clocks.mem",
	"temperature.gpu", "power.draw", "utilization.gpu", "clocks_throttle_reasons.active",
}

// GPUSampleMillis is the sampling period: nvidia-smi's own -lms loop, which
// keeps NVML open, costs a fraction of one core.
const GPUSampleMillis = 1000

// gpuSampleLines bounds the sample lines read back after a step: a step of
// an hour on eight GPUs samples 28800 lines; every k-th sample of each GPU
// is kept so that the summary still covers the whole step and the
// read-back stays well under a host's output cap.
const gpuSampleLines = 4000

// PhaseReadback is EnvPhase of the command that reads back what perfbot
// recorded on the host during a benchmark step (GPU samples, topology,
// NCCL configuration files). It runs right after the step, on GPU hosts
// only.
const PhaseReadback = "readback"

// The GPU state of a step is sampled on the host itself, by the step's own
// shell, so that it works on every host that can run a command: the
// step's script is prefixed with a prologue that reads the NCCL
// configuration files (and nvidia-smi topo -m: once per host, at every
// step on a cluster) into the step's sampling directory and starts
// nvidia-smi's sampling loop there.
// The loop is started twice removed (not a job of the script's shell, so a
// script's bare `wait` does not wait for it) and stops when the shell is
// gone (its pid outlives an `exec`), or when the host kills the step's
// process group. The loop writes to its standard output, which nvidia-smi
// flushes after every sample: with -f FILE it holds the samples until it
// exits, and the SIGKILL that ends a step's group loses them all (seen on
// an H200, driver 580.159.04). A second command reads the files back. Nothing is
// appended to the script: a script that ends in exec, exit or a trap of
// its own is sampled all the same.

// gpuSampling is the sampling of one benchmark step.
type gpuSampling struct {
	dir      string // on the host, under the tree's scratch directory
	topology bool   // run nvidia-smi topo -m
}

func newGPUSampling(scratch, step string, topology bool) gpuSampling {
	return gpuSampling{dir: filepath.Join(scratch, "gpu-"+sanitize(step)), topology: topology}
}

// wrap returns script with the sampling prologue.
func (g gpuSampling) wrap(script string) string {
	query := "--query-gpu=" + strings.Join(GPUSampleFields, ",") + " --format=csv,noheader,nounits"
	var b strings.Builder
	b.WriteString("perfbot_gpu=" + proc.ShellQuote(g.dir) + "\n")
	b.WriteString(`if rm -rf "$perfbot_gpu" && mkdir -p "$perfbot_gpu"; then` + "\n")
	b.WriteString(`  for perfbot_f in /etc/nccl.conf "${HOME:+$HOME/.nccl.conf}" "${NCCL_CONF_FILE:-}"; do` + "\n")
	b.WriteString(`    if [ -n "$perfbot_f" ] && [ -f "$perfbot_f" ]; then printf '==> %s <==\n' "$perfbot_f"; head -c 65536 "$perfbot_f"; echo; fi` + "\n")
	b.WriteString(`  done > "$perfbot_gpu/nccl.conf" 2> /dev/null` + "\n")
	b.WriteString("  if command -v nvidia-smi > /dev/null 2>&1; then\n")
	if g.topology {
		b.WriteString(`    nvidia-smi topo -m > "$perfbot_gpu/topology" 2>&1 < /dev/null` + "\n")
	}
	b.WriteString(`    ( ( nvidia-smi ` + query + ` -lms ` + strconv.Itoa(GPUSampleMillis) + ` > "$perfbot_gpu/samples" 2> "$perfbot_gpu/errors" &` + "\n")
	b.WriteString(`        perfbot_smi=$!; while kill -0 $$ 2> /dev/null; do sleep 1; done; kill $perfbot_smi 2> /dev/null` + "\n")
	b.WriteString(`      ) < /dev/null > /dev/null 2>&1 & )` + "\n")
	b.WriteString("  fi\nfi\nunset perfbot_gpu perfbot_f\n")
	return b.String() + script
}

// Sections of the read-back output.
const (
	readbackSamples  = "samples"
	readbackErrors   = "errors"
	readbackTopology = "topology"
	readbackConf     = "nccl.conf"
)

const readbackMark = "--- perfbot "

// ReadbackOutput is what the read-back of a step's sampling (PhaseReadback)
// prints when the sampling recorded samples, rows of GPUSampleFields as
// nvidia-smi's --format=csv,noheader,nounits prints them, and nothing else:
// what a host that runs nothing answers such a command with.
func ReadbackOutput(samples string) []byte {
	return []byte(readbackMark + readbackSamples + "\n" + samples)
}

// readbackScript prints the sampling directory's files, each after a
// marker line, the samples thinned to gpuSampleLines.
func (g gpuSampling) readbackScript() string {
	var b strings.Builder
	b.WriteString("d=" + proc.ShellQuote(g.dir) + "\n")
	b.WriteString("echo '" + readbackMark + readbackSamples + "'\n")
	b.WriteString(`if [ -f "$d/samples" ]; then n=$(wc -l < "$d/samples"); k=$(( n / ` + strconv.Itoa(gpuSampleLines) + ` + 1 ));` +
		` awk -F, -v k="$k" '{ c[$1]++; if ((c[$1] - 1) % k == 0) print }' "$d/samples"; fi` + "\n")
	for _, part := range []string{readbackErrors, readbackTopology, readbackConf} {
		b.WriteString("echo '" + readbackMark + part + "'\n")
		b.WriteString(`if [ -f "$d/` + part + `" ]; then head -c 65536 "$d/` + part + `"; fi` + "\n")
	}
	return b.String()
}

// gpuReadback is what the read-back returned.
type gpuReadback struct {
	samples, errors, topology string
	conf                      map[string]string
}

func parseReadback(out []byte) gpuReadback {
	parts := map[string]*strings.Builder{}
	var cur *strings.Builder
	for line := range strings.SplitAfterSeq(string(out), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), readbackMark); ok {
			cur = &strings.Builder{}
			parts[name] = cur
			continue
		}
		if cur != nil {
			cur.WriteString(line)
		}
	}
	text := func(name string) string {
		if b := parts[name]; b != nil {
			return b.String()
		}
		return ""
	}
	return gpuReadback{
		samples:  text(readbackSamples),
		errors:   strings.TrimSpace(text(readbackErrors)),
		topology: cleanTopology(text(readbackTopology)),
		conf:     parseConfFiles(text(readbackConf)),
	}
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// cleanTopology keeps the matrix of nvidia-smi topo -m: without the ANSI
// underline around its header, the legend that follows it (the same on
// every host) and the blank lines around it.
func cleanTopology(s string) string {
	s = ansiEscape.ReplaceAllString(s, "")
	if i := strings.Index(s, "\nLegend:"); i >= 0 {
		s = s[:i]
	}
	return strings.Trim(s, "\n")
}

var confHeader = regexp.MustCompile(`^==> (.+) <==$`)

// parseConfFiles reads the "==> PATH <==" sections the prologue wrote.
func parseConfFiles(s string) map[string]string {
	var files map[string]string
	var path string
	var body strings.Builder
	flush := func() {
		if path != "" {
			if files == nil {
				files = map[string]string{}
			}
			files[path] = strings.TrimRight(body.String(), "\n")
		}
		body.Reset()
	}
	for line := range strings.SplitAfterSeq(s, "\n") {
		if m := confHeader.FindStringSubmatch(strings.TrimRight(line, "\n")); m != nil {
			flush()
			path = m[1]
			continue
		}
		body.WriteString(line)
	}
	flush()
	return files
}

// gpuSample is one row of the sampling loop.
type gpuSample struct {
	gpu  record.GPU
	mask uint64
	ok   bool // mask read
}

// parseGPUSamples reads the rows of the sampling loop. A row that does
// not read (the last one cut by the kill that stopped the loop, a
// [N/A] index) is dropped and counted; a field that is [N/A] is NaN.
func parseGPUSamples(s string) (samples []gpuSample, dropped int) {
	cr := csv.NewReader(strings.NewReader(s))
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return samples, dropped
		}
		if err != nil || len(rec) != len(GPUSampleFields) {
			dropped++
			continue
		}
		idx, err := strconv.Atoi(strings.TrimSpace(rec[0]))
		if err != nil {
			dropped++
			continue
		}
		num := func(i int) float64 {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[i]), 64)
			if err != nil || math.IsInf(v, 0) {
				return math.NaN()
			}
			return v
		}
		reasons := strings.TrimSpace(rec[8])
		mask, ok := throttleMask(reasons)
		samples = append(samples, gpuSample{gpu: record.GPU{
			Index: idx, Name: strings.TrimSpace(rec[1]), Driver: strings.TrimSpace(rec[2]),
			SMClockMHz: num(3), MemClockMHz: num(4), TemperatureC: num(5), PowerW: num(6), UtilizationPct: num(7),
			ThrottleReasons: reasons,
		}, mask: mask, ok: ok})
	}
}

func throttleMask(s string) (uint64, bool) {
	hex, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return 0, false
	}
	m, err := strconv.ParseUint(hex, 16, 64)
	return m, err == nil
}

// slowdownReasons are the clock event reasons that lower the clocks below
// what the GPU and its settings allow (NVML's clocksEventReasons); idle,
// the applications clocks setting, sync boost and the display clock are
// not slowdowns.
var slowdownReasons = []struct {
	bit  uint64
	name string
}{
	{0x4, "SW power cap"},
	{0x8, "HW slowdown"},
	{0x20, "SW thermal slowdown"},
	{0x40, "HW thermal slowdown"},
	{0x80, "HW power brake slowdown"},
}

// summarizeGPUSamples returns each GPU's first sample (the GPUs as the step
// found them, NaN fields zero) and the summary of its samples, by index.
func summarizeGPUSamples(step string, samples []gpuSample) ([]record.GPU, []record.GPUState) {
	byIndex := map[int][]gpuSample{}
	for _, s := range samples {
		byIndex[s.gpu.Index] = append(byIndex[s.gpu.Index], s)
	}
	var first []record.GPU
	var states []record.GPUState
	for _, idx := range slices.Sorted(maps.Keys(byIndex)) {
		ss := byIndex[idx]
		g := ss[0].gpu
		for _, f := range []*float64{&g.SMClockMHz, &g.MemClockMHz, &g.TemperatureC, &g.PowerW, &g.UtilizationPct} {
			if math.IsNaN(*f) {
				*f = 0
			}
		}
		first = append(first, g)
		states = append(states, summarizeGPU(step, ss))
	}
	return first, states
}

// summarizeGPU summarizes one GPU's samples of a step. The clocks and the
// power are those of the samples during which a kernel ran (utilization
// above zero), when there are any: a benchmark process spends its first
// seconds importing and loading while the GPU idles at its lowest clock
// (345 MHz on an H200, against 1980 MHz under load), and those samples
// would make a short step look throttled. Busy says how many samples the
// clocks cover.
func summarizeGPU(step string, ss []gpuSample) record.GPUState {
	st := record.GPUState{Step: step, Index: ss[0].gpu.Index, Name: ss[0].gpu.Name, Samples: len(ss)}
	busy := slices.ContainsFunc(ss, func(s gpuSample) bool { return s.gpu.UtilizationPct > 0 })
	var sm, mem, temp, power, util []float64
	var union uint64
	for _, s := range ss {
		temp = appendFinite(temp, s.gpu.TemperatureC)
		util = appendFinite(util, s.gpu.UtilizationPct)
		if !busy || s.gpu.UtilizationPct > 0 {
			st.Busy++
			sm = appendFinite(sm, s.gpu.SMClockMHz)
			mem = appendFinite(mem, s.gpu.MemClockMHz)
			power = appendFinite(power, s.gpu.PowerW)
		}
		if !s.ok {
			continue
		}
		union |= s.mask
		for _, r := range slowdownReasons {
			if s.mask&r.bit != 0 {
				if st.Slowdowns == nil {
					st.Slowdowns = map[string]int{}
				}
				st.Slowdowns[r.name]++
			}
		}
	}
	st.SMClockMHz, st.MemClockMHz = spread(sm), spread(mem)
	if len(temp) > 0 {
		st.MaxTemperatureC = slices.Max(temp)
	}
	if len(power) > 0 {
		st.MeanPowerW, st.MaxPowerW = round2(stats.Mean(power)), slices.Max(power)
	}
	if len(util) > 0 {
		st.MeanUtilizationPct = round2(stats.Mean(util))
	}
	if slices.ContainsFunc(ss, func(s gpuSample) bool { return s.ok }) {
		st.ThrottleReasons = fmt.Sprintf("0x%016x", union)
	}
	return st
}

func appendFinite(xs []float64, v float64) []float64 {
	if math.IsNaN(v) {
		return xs
	}
	return append(xs, v)
}

func spread(xs []float64) record.Spread {
	if len(xs) == 0 {
		return record.Spread{}
	}
	return record.Spread{Min: slices.Min(xs), Median: stats.Median(xs), Max: slices.Max(xs)}
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// sampleGPU reads back the sampling of step s into p: the GPUs as the
// step found them replace the host's snapshot, their summaries join
// p.Fingerprint.GPUState, and the topology and configuration files are
// recorded. A host that cannot run the read-back is an infrastructure
// failure; a read-back that finds no samples leaves the fingerprint as
// it was, with the host's snapshot.
func (m *measurement) sampleGPU(ctx context.Context, p *pending, step string, g gpuSampling) error {
	host := m.lease.Host()
	res, err := host.Exec(ctx, m.lease.Slot(), Command{
		Dir:     m.ws.Dir,
		Script:  g.readbackScript(),
		Env:     map[string]string{EnvCommit: m.target.Commit, EnvTarget: m.targetKey, EnvPhase: PhaseReadback, EnvStep: step},
		Timeout: FactTimeout,
	})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		m.log.Warn("reading back the GPU samples failed", "step", step, "exit", res.ExitCode, "output", proc.LastLine(res.Output))
		return nil
	}
	rb := parseReadback(res.Output)
	if rb.topology != "" {
		m.r.topology.Store(host.Name(), rb.topology)
		if p.Fingerprint.GPUTopology == "" {
			p.Fingerprint.GPUTopology = rb.topology
		}
	}
	if t, ok := m.r.topology.Load(host.Name()); ok && p.Fingerprint.GPUTopology == "" {
		p.Fingerprint.GPUTopology = t.(string)
	}
	for path, body := range rb.conf {
		if p.Fingerprint.NCCLConf == nil {
			p.Fingerprint.NCCLConf = map[string]string{}
		}
		p.Fingerprint.NCCLConf[path] = secret.Scrub(body, m.r.Secrets)
	}
	samples, dropped := parseGPUSamples(rb.samples)
	if dropped > 1 {
		// The loop's last row may be cut by the kill that stops it; more
		// means nvidia-smi printed something else.
		m.log.Warn("GPU sample lines that do not read", "step", step, "lines", dropped, "errors", proc.FirstLine(rb.errors))
	}
	if len(samples) == 0 {
		m.log.Info("no GPU samples during the step", "step", step, "errors", proc.FirstLine(rb.errors))
		return nil
	}
	first, states := summarizeGPUSamples(step, samples)
	if len(p.Fingerprint.GPUState) == 0 { // the run's first step sampled
		p.Fingerprint.GPUs = first
	}
	p.Fingerprint.GPUState = append(p.Fingerprint.GPUState, states...)
	return nil
}

// needTopology reports whether the topology of host h is still to be
// read: once per host, and at every step on a cluster, whose steps run on
// nodes that may differ.
func (r *Runner) needTopology(h Host) bool {
	if _, cluster := h.(NodeDescriber); cluster {
		return true
	}
	_, ok := r.topology.Load(h.Name())
	return !ok
}

// addNCCL records what the NCCL_DEBUG=INFO lines of a benchmark step's
// output say, when it printed any: the first step that did speaks for the
// run.
func (m *measurement) addNCCL(p *pending, step string, output []byte) {
	if p.Fingerprint.NCCL != nil || !bytes.Contains(output, []byte("NCCL INFO")) {
		return
	}
	info, err := bench.NCCLDebug(bytes.NewReader(output), step+" output")
	if err != nil {
		m.log.Info("NCCL lines not read", "step", step, "error", err)
		return
	}
	for k, v := range info.Env {
		info.Env[k] = secret.Redact(k, v)
	}
	p.Fingerprint.NCCL = info
}
