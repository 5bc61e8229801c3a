package service

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// GPUClockTolerance is how far apart, as a fraction, the median SM (or
// memory) clocks of two commits' runs may be before their GPU states count
// as different: a GPU that boosts varies by a few percent, one that
// throttles drops by a quarter (1980 to 1410 MHz on an H200).
const GPUClockTolerance = 0.10

// okRuns returns the ok runs among runs, in their order.
func okRuns(runs []record.Run) []record.Run {
	return slices.DeleteFunc(slices.Clone(runs), func(r record.Run) bool { return r.Status != record.StatusOK })
}

// gpuKey names one GPU of one benchmark step.
type gpuKey struct {
	step  string
	index int
}

// combineGPUState folds the GPU states of several runs into one per step
// and GPU: samples and slowdowns add up, the median clock is the median
// of the runs' medians, means are weighted by samples and extremes stay
// extremes.
func combineGPUState(runs []record.Run) []record.GPUState {
	groups := map[gpuKey][]record.GPUState{}
	var order []gpuKey
	for _, r := range runs {
		for _, st := range r.Fingerprint.GPUState {
			k := gpuKey{st.Step, st.Index}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], st)
		}
	}
	slices.SortStableFunc(order, func(a, b gpuKey) int {
		return cmp.Or(cmp.Compare(a.step, b.step), cmp.Compare(a.index, b.index))
	})
	var out []record.GPUState
	for _, k := range order {
		out = append(out, combineGPU(groups[k]))
	}
	return out
}

func combineGPU(sts []record.GPUState) record.GPUState {
	c := record.GPUState{Step: sts[0].Step, Index: sts[0].Index, Name: sts[0].Name}
	var smMedians, memMedians []float64
	var power, util, weight float64
	var union uint64
	haveMask := false
	c.SMClockMHz.Min, c.MemClockMHz.Min = math.Inf(1), math.Inf(1)
	for _, st := range sts {
		c.Samples += st.Samples
		smMedians = append(smMedians, st.SMClockMHz.Median)
		memMedians = append(memMedians, st.MemClockMHz.Median)
		c.SMClockMHz.Min, c.SMClockMHz.Max = min(c.SMClockMHz.Min, st.SMClockMHz.Min), max(c.SMClockMHz.Max, st.SMClockMHz.Max)
		c.MemClockMHz.Min, c.MemClockMHz.Max = min(c.MemClockMHz.Min, st.MemClockMHz.Min), max(c.MemClockMHz.Max, st.MemClockMHz.Max)
		c.MaxTemperatureC = max(c.MaxTemperatureC, st.MaxTemperatureC)
		c.MaxPowerW = max(c.MaxPowerW, st.MaxPowerW)
		w := float64(max(st.Samples, 1))
		power += st.MeanPowerW * w
		util += st.MeanUtilizationPct * w
		weight += w
		if m, err := strconv.ParseUint(strings.TrimPrefix(st.ThrottleReasons, "0x"), 16, 64); err == nil {
			union, haveMask = union|m, true
		}
		for r, n := range st.Slowdowns {
			if c.Slowdowns == nil {
				c.Slowdowns = map[string]int{}
			}
			c.Slowdowns[r] += n
		}
	}
	c.SMClockMHz.Median, c.MemClockMHz.Median = stats.Median(smMedians), stats.Median(memMedians)
	c.MeanPowerW = math.Round(power/weight*100) / 100
	c.MeanUtilizationPct = math.Round(util/weight*100) / 100
	if haveMask {
		c.ThrottleReasons = fmt.Sprintf("0x%016x", union)
	}
	return c
}

// machineState is what a finding shows of the runs of one end (newest
// first): the last ok run's fingerprint without its environment (which
// EnvGood and EnvDiffs show), the GPU states combined over every ok run.
// Nil when the end has no run with any GPU or NCCL state.
func machineState(runs []record.Run) *record.Fingerprint {
	runs = okRuns(runs)
	if len(runs) == 0 {
		return nil
	}
	fp := runs[0].Fingerprint
	fp.Env = nil
	fp.GPUState = combineGPUState(runs)
	if len(fp.GPUs) == 0 && len(fp.GPUState) == 0 && fp.GPUTopology == "" && len(fp.NCCLConf) == 0 && fp.NCCL == nil && len(fp.Reported) == 0 {
		return nil
	}
	return &fp
}

// stateEvidence returns the GPU and NCCL state of the two ends, from their
// runs, and how they differ.
func stateEvidence(good, bad []record.Run) (gs, bs *record.Fingerprint, diffs []record.StateDiff) {
	gs, bs = machineState(good), machineState(bad)
	if gs == nil || bs == nil {
		return gs, bs, nil
	}
	return gs, bs, stateDiffs(*gs, *bs)
}

// clocksDiffer reports whether two median clocks are further apart than
// GPUClockTolerance; a clock not reported (0) differs from nothing.
func clocksDiffer(a, b float64) bool {
	return a > 0 && b > 0 && math.Abs(b/a-1) > GPUClockTolerance
}

func slowdownNames(st record.GPUState) []string {
	return slices.Sorted(maps.Keys(st.Slowdowns))
}

// stateDiffs lists how the state of bad differs from good's.
func stateDiffs(good, bad record.Fingerprint) []record.StateDiff {
	var diffs []record.StateDiff
	goodGPU := map[gpuKey]record.GPUState{}
	for _, st := range good.GPUState {
		goodGPU[gpuKey{st.Step, st.Index}] = st
	}
	for _, b := range bad.GPUState {
		g, ok := goodGPU[gpuKey{b.Step, b.Index}]
		if !ok {
			continue
		}
		gSlow, bSlow := slowdownNames(g), slowdownNames(b)
		switch {
		case clocksDiffer(g.SMClockMHz.Median, b.SMClockMHz.Median):
			diffs = append(diffs, record.StateDiff{Kind: record.DiffSMClock, GPU: b.Index, Step: b.Step,
				GoodMHz: g.SMClockMHz.Median, BadMHz: b.SMClockMHz.Median, GoodSlowdowns: gSlow, BadSlowdowns: bSlow})
		case !slices.Equal(gSlow, bSlow):
			diffs = append(diffs, record.StateDiff{Kind: record.DiffSlowdowns, GPU: b.Index, Step: b.Step,
				GoodMHz: g.SMClockMHz.Median, BadMHz: b.SMClockMHz.Median, GoodSlowdowns: gSlow, BadSlowdowns: bSlow})
		}
		if clocksDiffer(g.MemClockMHz.Median, b.MemClockMHz.Median) {
			diffs = append(diffs, record.StateDiff{Kind: record.DiffMemClock, GPU: b.Index, Step: b.Step,
				GoodMHz: g.MemClockMHz.Median, BadMHz: b.MemClockMHz.Median})
		}
	}
	goodFacts := map[int]record.GPU{}
	for _, g := range good.GPUs {
		goodFacts[g.Index] = g
	}
	for _, bg := range bad.GPUs {
		if g, ok := goodFacts[bg.Index]; ok && (g.Name != bg.Name || g.Driver != bg.Driver) {
			diffs = append(diffs, record.StateDiff{Kind: record.DiffGPU, GPU: bg.Index,
				Good: g.Name + ", driver " + g.Driver, Bad: bg.Name + ", driver " + bg.Driver})
		}
	}
	if good.GPUTopology != bad.GPUTopology && good.GPUTopology != "" && bad.GPUTopology != "" {
		diffs = append(diffs, record.StateDiff{Kind: record.DiffTopology, Good: good.GPUTopology, Bad: bad.GPUTopology})
	}
	for _, path := range unionKeys(good.NCCLConf, bad.NCCLConf) {
		g, gok := good.NCCLConf[path]
		b, bok := bad.NCCLConf[path]
		if g != b || gok != bok {
			diffs = append(diffs, record.StateDiff{Kind: record.DiffNCCLConf, Name: path, Good: g, Bad: b})
		}
	}
	diffs = append(diffs, ncclDiffs(good.NCCL, bad.NCCL)...)
	return append(diffs, reportedDiffs(good.Reported, bad.Reported)...)
}

// reportedDiffs lists the software the benchmark reported differently at
// the two ends; a key only one end reported is no evidence (an older
// benchmark script), and is left out.
func reportedDiffs(good, bad map[string]string) []record.StateDiff {
	var diffs []record.StateDiff
	for _, k := range unionKeys(good, bad) {
		g, gok := good[k]
		b, bok := bad[k]
		if gok && bok && g != b {
			diffs = append(diffs, record.StateDiff{Kind: record.DiffReported, Name: k, Good: g, Bad: b})
		}
	}
	return diffs
}

// ncclDiffs lists what NCCL reported differently; nothing when either end
// printed no NCCL lines.
func ncclDiffs(good, bad *record.NCCLInfo) []record.StateDiff {
	if good == nil || bad == nil {
		return nil
	}
	var diffs []record.StateDiff
	add := func(name, g, b string) {
		if g != b {
			diffs = append(diffs, record.StateDiff{Kind: record.DiffNCCL, Name: name, Good: g, Bad: b})
		}
	}
	add("NCCL version", good.Version, bad.Version)
	add("NCCL network", good.Network, bad.Network)
	add("NCCL ranks", itoa(good.Ranks), itoa(bad.Ranks))
	for _, k := range unionKeys(good.Env, bad.Env) {
		add(k+" set by environment", good.Env[k], bad.Env[k])
	}
	for _, k := range unionKeys(good.Channels, bad.Channels) {
		g, gok := good.Channels[k]
		b, bok := bad.Channels[k]
		if g != b || gok != bok {
			add("NCCL "+k+" channels", countText(g, gok), countText(b, bok))
		}
	}
	gAlgo, bAlgo := algorithms(good), algorithms(bad)
	for _, coll := range unionKeys(gAlgo, bAlgo) {
		add("NCCL "+coll+" algorithm/protocol", gAlgo[coll], bAlgo[coll])
	}
	return diffs
}

// algorithms gives each collective's choices as "RING/LL, TREE/SIMPLE".
func algorithms(info *record.NCCLInfo) map[string]string {
	out := map[string]string{}
	for _, a := range info.Algorithms {
		choice := a.Algorithm + "/" + a.Protocol
		if prev := out[a.Collective]; prev != "" {
			choice = prev + ", " + choice
		}
		out[a.Collective] = choice
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func countText(n int, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.Itoa(n)
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// gpuStateWarnings warns of every probe whose runs met a GPU in another
// state than the ends' runs: a median SM clock further than
// GPUClockTolerance from both ends', or slowdown reasons neither end had.
// The ends, measured most, are the reference; a probe that matches
// either end is not flagged (the ends may differ from each other when the
// machine, not the code, changed: the finding shows that).
func (b *Bot) gpuStateWarnings(res *bisect.Result) ([]record.Warning, error) {
	state := func(commit string) ([]record.GPUState, error) {
		runs, err := b.runsOf(commit)
		return combineGPUState(okRuns(runs)), err
	}
	good, err := state(res.Good.Commit)
	if err != nil {
		return nil, err
	}
	bad, err := state(res.Bad.Commit)
	if err != nil {
		return nil, err
	}
	if len(good) == 0 && len(bad) == 0 {
		return nil, nil
	}
	ends := map[gpuKey][]record.GPUState{}
	for _, st := range append(slices.Clone(good), bad...) {
		k := gpuKey{st.Step, st.Index}
		ends[k] = append(ends[k], st)
	}
	var ws []record.Warning
	for _, p := range res.Probes {
		if p.Commit == res.Good.Commit || p.Commit == res.Bad.Commit || p.Status != bisect.StatusOK {
			continue
		}
		states, err := state(p.Commit)
		if err != nil {
			return nil, err
		}
		for _, st := range states {
			if w, ok := probeGPUWarning(p.Commit, st, ends[gpuKey{st.Step, st.Index}]); ok {
				ws = append(ws, w)
				break // one warning a probe: its first GPU that differs
			}
		}
	}
	return ws, nil
}

// probeGPUWarning compares one GPU of a probe with the same GPU at the
// ends.
func probeGPUWarning(commit string, st record.GPUState, ends []record.GPUState) (record.Warning, bool) {
	if len(ends) == 0 {
		return record.Warning{}, false
	}
	w := record.Warning{Kind: record.WarnGPUState, Commit: commit, GPU: st.Index, MHz: st.SMClockMHz.Median}
	endSlow := map[string]bool{}
	nearest := ends[0].SMClockMHz.Median
	differs := true
	for _, e := range ends {
		for r := range e.Slowdowns {
			endSlow[r] = true
		}
		if math.Abs(e.SMClockMHz.Median-st.SMClockMHz.Median) < math.Abs(nearest-st.SMClockMHz.Median) {
			nearest = e.SMClockMHz.Median
		}
		differs = differs && clocksDiffer(e.SMClockMHz.Median, st.SMClockMHz.Median)
	}
	for _, r := range slowdownNames(st) {
		if !endSlow[r] {
			w.Reasons = append(w.Reasons, r)
		}
	}
	if differs {
		w.EndMHz = nearest
		w.Pct = math.Round((st.SMClockMHz.Median/nearest-1)*1000) / 10
	}
	return w, differs || len(w.Reasons) > 0
}
