package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// The GPU and NCCL state of the two ends: what each end's runs met (the
// GPUs' clocks, temperature, power and throttle reasons as sampled during
// the benchmark, the topology, NCCL's configuration files and what its
// NCCL_DEBUG lines said) and, first, every way in which the ends differ
// (Finding.StateDiffs), in words.

// HasState reports whether either end recorded any GPU or NCCL state.
func (v *view) HasState() bool { return v.GoodState != nil || v.BadState != nil }

// StateSentences are Finding.StateDiffs in words, Markdown-escaped.
func (v *view) StateSentences() []string {
	out := make([]string, 0, len(v.StateDiffs))
	for _, d := range v.StateDiffs {
		out = append(out, v.stateSentence(d))
	}
	return out
}

// manySteps reports whether the ends' GPU states cover more than one
// benchmark step, which the sentences and rows then name.
func (v *view) manySteps() bool {
	steps := map[string]bool{}
	for _, fp := range []*record.Fingerprint{v.GoodState, v.BadState} {
		if fp != nil {
			for _, st := range fp.GPUState {
				steps[st.Step] = true
			}
		}
	}
	return len(steps) > 1
}

func (v *view) gpuName(d record.StateDiff) string {
	s := "GPU " + strconv.Itoa(d.GPU)
	if d.Step != "" && v.manySteps() {
		s += " (" + codeSpan(d.Step) + ")"
	}
	return s
}

func (v *view) stateSentence(d record.StateDiff) string {
	good, bad := v.sideWord(v.GoodName()), v.sideWord(v.BadName())
	switch d.Kind {
	case record.DiffSMClock:
		badAt, goodAt := clockAt(d.BadMHz, d.BadSlowdowns, d.BadMHz < d.GoodMHz), clockAt(d.GoodMHz, d.GoodSlowdowns, d.GoodMHz < d.BadMHz)
		return fmt.Sprintf("%s: the %s ran %s; the %s %s.", v.gpuName(d), bad, badAt, good, goodAt)
	case record.DiffSlowdowns:
		return fmt.Sprintf("%s: the %s ran with %s at %s MHz; the %s with %s at %s MHz.",
			v.gpuName(d), bad, slowdownList(d.BadSlowdowns), formatMHz(d.BadMHz), good, slowdownList(d.GoodSlowdowns), formatMHz(d.GoodMHz))
	case record.DiffMemClock:
		return fmt.Sprintf("%s: the %s's memory clock was %s MHz; the %s's %s MHz.", v.gpuName(d), bad, formatMHz(d.BadMHz), good, formatMHz(d.GoodMHz))
	case record.DiffGPU:
		return fmt.Sprintf("%s: the %s ran on %s; the %s on %s.", v.gpuName(d), bad, escapeText(d.Bad), good, escapeText(d.Good))
	case record.DiffTopology:
		return "The GPU topology (`nvidia-smi topo -m`) differs between the " + good + " and the " + bad + " (both below)."
	case record.DiffNCCLConf:
		return fmt.Sprintf("NCCL configuration file %s: the %s read %s; the %s %s.", codeSpan(d.Name), bad, confText(d.Bad), good, confText(d.Good))
	case record.DiffNCCL:
		return fmt.Sprintf("%s: %s at the %s, %s at the %s.", escapeText(d.Name), tableCell(d.Bad), bad, tableCell(d.Good), good)
	case record.DiffReported:
		return fmt.Sprintf("%s, as the benchmark reported it: %s at the %s, %s at the %s.", codeSpan(d.Name), tableCell(d.Bad), bad, tableCell(d.Good), good)
	}
	return escapeText(string(d.Kind))
}

// clockAt is "at 1980 MHz", or "throttled at 1410 MHz (HW slowdown)" for
// the slower end when it had slowdowns.
func clockAt(mhz float64, slowdowns []string, slower bool) string {
	s := "at " + formatMHz(mhz) + " MHz"
	if len(slowdowns) == 0 {
		return s
	}
	if slower {
		s = "throttled " + s
	}
	return s + " (" + strings.Join(slowdowns, ", ") + ")"
}

func slowdownList(rs []string) string {
	if len(rs) == 0 {
		return "no slowdown"
	}
	return strings.Join(rs, ", ")
}

func confText(s string) string {
	if s == "" {
		return "none"
	}
	return codeSpan(strings.ReplaceAll(strings.TrimSpace(s), "\n", "; "))
}

func formatMHz(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// gpuRow is one end's summary of one GPU for the state table.
type gpuRow struct {
	GPU, Step, End, SMClock, MemClock, Temperature, Power, Utilization, Slowdowns string
	Samples                                                                       int
}

// GPURows are the GPU states of both ends, GPU by GPU, good end first.
func (v *view) GPURows() []gpuRow {
	var rows []gpuRow
	type key struct {
		step  string
		index int
	}
	byKey := map[key][2]*record.GPUState{}
	var order []key
	for side, fp := range []*record.Fingerprint{v.GoodState, v.BadState} {
		if fp == nil {
			continue
		}
		for i := range fp.GPUState {
			st := &fp.GPUState[i]
			k := key{st.Step, st.Index}
			pair, ok := byKey[k]
			if !ok {
				order = append(order, k)
			}
			pair[side] = st
			byKey[k] = pair
		}
	}
	steps := v.manySteps()
	for _, k := range order {
		for side, st := range byKey[k] {
			if st == nil {
				continue
			}
			step := ""
			if steps {
				step = st.Step
			}
			rows = append(rows, gpuRow{
				GPU: strconv.Itoa(st.Index), Step: step, End: [2]string{v.GoodName(), v.BadName()}[side], Samples: st.Samples,
				SMClock:     spreadText(st.SMClockMHz),
				MemClock:    spreadText(st.MemClockMHz),
				Temperature: formatMHz(st.MaxTemperatureC),
				Power:       formatMHz(st.MeanPowerW) + " / " + formatMHz(st.MaxPowerW),
				Utilization: formatMHz(st.MeanUtilizationPct) + "%",
				Slowdowns:   slowdownCounts(st),
			})
		}
	}
	return rows
}

func spreadText(s record.Spread) string {
	if s.Min == s.Max {
		return formatMHz(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", formatMHz(s.Median), formatMHz(s.Min), formatMHz(s.Max))
}

// slowdownCounts is "HW slowdown 4/5, HW thermal slowdown 1/5" or "—".
func slowdownCounts(st *record.GPUState) string {
	if len(st.Slowdowns) == 0 {
		return "—"
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(st.Slowdowns)) {
		parts = append(parts, fmt.Sprintf("%s %d/%d", r, st.Slowdowns[r], st.Samples))
	}
	return strings.Join(parts, ", ")
}

// ncclRow is one thing NCCL reported, at each end.
type ncclRow struct{ Name, Good, Bad string }

// NCCLRows are what the ends' NCCL_DEBUG lines said and the configuration
// files they read.
func (v *view) NCCLRows() []ncclRow {
	g, b := ncclOf(v.GoodState), ncclOf(v.BadState)
	if g == nil && b == nil {
		return nil
	}
	var rows []ncclRow
	add := func(name string, text func(*record.NCCLInfo) string) {
		gt, bt := "", ""
		if g != nil {
			gt = text(g)
		}
		if b != nil {
			bt = text(b)
		}
		if gt != "" || bt != "" {
			rows = append(rows, ncclRow{name, gt, bt})
		}
	}
	add("version", func(n *record.NCCLInfo) string { return n.Version })
	add("ranks / nodes", func(n *record.NCCLInfo) string {
		if n.Ranks == 0 {
			return ""
		}
		return fmt.Sprintf("%d / %d", n.Ranks, n.Nodes)
	})
	add("network", func(n *record.NCCLInfo) string { return n.Network })
	add("set by environment", func(n *record.NCCLInfo) string {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(n.Env)) {
			kv = append(kv, k+"="+n.Env[k])
		}
		return strings.Join(kv, " ")
	})
	add("channels", func(n *record.NCCLInfo) string {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(n.Channels)) {
			kv = append(kv, fmt.Sprintf("%s %d", k, n.Channels[k]))
		}
		return strings.Join(kv, ", ")
	})
	add("algorithm / protocol", func(n *record.NCCLInfo) string {
		var parts []string
		for _, a := range n.Algorithms {
			parts = append(parts, fmt.Sprintf("%s %s/%s %s–%s B (%d calls)", a.Collective, a.Algorithm, a.Protocol,
				strconv.FormatInt(a.MinBytes, 10), strconv.FormatInt(a.MaxBytes, 10), a.Calls))
		}
		return strings.Join(parts, "; ")
	})
	return rows
}

func ncclOf(fp *record.Fingerprint) *record.NCCLInfo {
	if fp == nil {
		return nil
	}
	return fp.NCCL
}

// ConfRows are the NCCL configuration files either end read, by path,
// with each end's contents on one line.
func (v *view) ConfRows() []ncclRow {
	var g, b map[string]string
	if v.GoodState != nil {
		g = v.GoodState.NCCLConf
	}
	if v.BadState != nil {
		b = v.BadState.NCCLConf
	}
	paths := slices.Sorted(maps.Keys(g))
	for p := range b {
		if _, ok := g[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var rows []ncclRow
	for _, p := range paths {
		rows = append(rows, ncclRow{p, strings.ReplaceAll(strings.TrimSpace(g[p]), "\n", "; "), strings.ReplaceAll(strings.TrimSpace(b[p]), "\n", "; ")})
	}
	return rows
}

// Topologies are the ends' nvidia-smi topo -m: one when they are the same.
func (v *view) Topologies() []ncclRow {
	var g, b string
	if v.GoodState != nil {
		g = v.GoodState.GPUTopology
	}
	if v.BadState != nil {
		b = v.BadState.GPUTopology
	}
	switch {
	case g == b && g == "":
		return nil
	case g == b && v.OneCulprit():
		return []ncclRow{{Name: "the parent and the culprit", Good: g}}
	case g == b:
		return []ncclRow{{Name: "both ends", Good: g}}
	}
	var out []ncclRow
	if g != "" {
		out = append(out, ncclRow{Name: "the " + v.sideWord(v.GoodName()), Good: g})
	}
	if b != "" {
		out = append(out, ncclRow{Name: "the " + v.sideWord(v.BadName()), Good: b})
	}
	return out
}

// stateLabels names the differences for the warning.
func stateLabels(diffs []record.StateDiff) []string {
	var out []string
	for _, d := range diffs {
		var l string
		switch d.Kind {
		case record.DiffSMClock:
			l = fmt.Sprintf("GPU %d SM clock", d.GPU)
		case record.DiffSlowdowns:
			l = fmt.Sprintf("GPU %d throttling", d.GPU)
		case record.DiffMemClock:
			l = fmt.Sprintf("GPU %d memory clock", d.GPU)
		case record.DiffGPU:
			l = fmt.Sprintf("GPU %d model or driver", d.GPU)
		case record.DiffTopology:
			l = "GPU topology"
		case record.DiffNCCLConf:
			l = d.Name
		case record.DiffNCCL:
			l = d.Name
		case record.DiffReported:
			l = d.Name + " version"
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}
