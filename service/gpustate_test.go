package service

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
)

// The stand-in host's GPU: an H200 sampled five times a run, idle at the
// start, then busy at full clocks or held at 1410 MHz by HW slowdown
// (four or five samples).
const (
	busyRows = "0, NVIDIA H200, 580.159.04, 345, 3201, 36, 128.11, 0, 0x0000000000000001\n" +
		"0, NVIDIA H200, 580.159.04, 1980, 3201, 44, 612.37, 100, 0x0000000000000000\n" +
		"0, NVIDIA H200, 580.159.04, 1980, 3201, 47, 655.90, 100, 0x0000000000000000\n" +
		"0, NVIDIA H200, 580.159.04, 1980, 3201, 48, 660.02, 100, 0x0000000000000000\n"
	throttledRows = "0, NVIDIA H200, 580.159.04, 345, 3201, 38, 130.02, 0, 0x0000000000000001\n" +
		"0, NVIDIA H200, 580.159.04, 1410, 3201, 86, 452.18, 100, 0x0000000000000008\n" +
		"0, NVIDIA H200, 580.159.04, 1410, 3201, 87, 449.77, 100, 0x0000000000000008\n" +
		"0, NVIDIA H200, 580.159.04, 1395, 3201, 87, 440.03, 100, 0x0000000000000008\n" +
		"0, NVIDIA H200, 580.159.04, 1410, 3201, 86, 451.90, 100, 0x0000000000000008\n"
)

// gpuHistory is a history of n commits, 8% slower from commit 15 on, on a
// GPU host whose GPU ran throttled for the commits throttled names.
func gpuHistory(t *testing.T, n int, throttled func(i int) bool) *history {
	h := newHistory(t, n, func(i int) float64 {
		if i >= 15 {
			return 92
		}
		return 100
	}, nil)
	h.host.Machine.GPUs = []record.GPU{{Index: 0, Name: "NVIDIA H200", Driver: "580.159.04"}}
	for i, c := range h.commits {
		fc := h.host.Commits[c]
		fc.GPUSamples = busyRows
		if throttled(i) {
			fc.GPUSamples = throttledRows
		}
		h.host.Commits[c] = fc
	}
	return h
}

func TestBisectWarnsOfAProbeInAnotherGPUState(t *testing.T) {
	const n = 30
	h := gpuHistory(t, n, func(i int) bool { return i > 0 && i < n-1 })
	b := h.open(t)
	ctx := context.Background()
	rep, err := b.Bisect(ctx, BisectRequest{Good: h.commits[0], Bad: "main"})
	require.NoError(t, err)
	require.Equal(t, record.OutcomeCulprit, rep.Verdict)

	probes := 0
	for _, p := range rep.Probes {
		if p.Commit == rep.Good.Commit || p.Commit == rep.Bad.Commit {
			continue
		}
		probes++
		want := "probe " + record.ShortHash(p.Commit) + " met GPU 0 at 1410 MHz (HW slowdown) against 1980 MHz at the ends (-28.8%): its values may be the machine's, not the code's"
		assert.Contains(t, record.WarningStrings(rep.Warnings), want)
	}
	require.Positive(t, probes)
	gpuWarnings := 0
	for _, w := range record.WarningStrings(rep.Warnings) {
		if strings.Contains(w, "met GPU") {
			gpuWarnings++
		}
	}
	assert.Equal(t, probes, gpuWarnings, "one warning a probe, none for the ends")
}

func TestFindingShowsTheEndsGPUStates(t *testing.T) {
	h := gpuHistory(t, 30, func(i int) bool { return i >= 15 })
	b := h.open(t)
	ctx := context.Background()
	rep, err := b.Bisect(ctx, BisectRequest{Good: h.commits[0], Bad: "main"})
	require.NoError(t, err)
	require.Len(t, rep.Culprits, 1)
	require.Equal(t, h.commits[15], rep.Culprits[0].Commit)
	for _, w := range record.WarningStrings(rep.Warnings) {
		assert.NotContains(t, w, "met GPU", "every probe matches one end")
	}

	fs, err := b.StoreFindings(ctx, rep)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	f := fs[0]
	require.NotNil(t, f.GoodState)
	require.NotNil(t, f.BadState)
	require.Len(t, f.GoodState.GPUState, 1)
	assert.Equal(t, 1980.0, f.GoodState.GPUState[0].SMClockMHz.Median)
	assert.Equal(t, 1410.0, f.BadState.GPUState[0].SMClockMHz.Median)
	assert.Equal(t, []record.StateDiff{{Kind: record.DiffSMClock, Step: "engine", GoodMHz: 1980, BadMHz: 1410, BadSlowdowns: []string{"HW slowdown"}}}, f.StateDiffs)
	assert.Nil(t, f.GoodState.Env, "the environment is EnvGood's")

	_, body, err := report.Render(f)
	require.NoError(t, err)
	assert.Contains(t, body, "- GPU 0: the culprit ran throttled at 1410 MHz (HW slowdown); the parent at 1980 MHz.")
}

func TestStateDiffs(t *testing.T) {
	gpu := func(mhz, mem float64, slow map[string]int) record.GPUState {
		return record.GPUState{Step: "engine", Index: 0, Samples: 10,
			SMClockMHz: record.Spread{Median: mhz}, MemClockMHz: record.Spread{Median: mem}, Slowdowns: slow}
	}
	base := record.Fingerprint{
		GPUs:        []record.GPU{{Index: 0, Name: "NVIDIA H200", Driver: "580.159.04"}},
		GPUState:    []record.GPUState{gpu(1980, 3201, nil)},
		GPUTopology: "GPU0 X",
		NCCLConf:    map[string]string{"/etc/nccl.conf": "NCCL_PROTO=LL"},
		Reported:    map[string]string{"torch": "2.11.0", "cuda": "12.8"},
		NCCL: &record.NCCLInfo{Version: "2.28.9", Env: map[string]string{"NCCL_ALGO": "Ring"}, Channels: map[string]int{"coll": 8},
			Algorithms: []record.NCCLAlgorithm{{Collective: "AllReduce", Algorithm: "RING", Protocol: "LL"}}},
	}
	for _, tc := range []struct {
		name   string
		change func(fp *record.Fingerprint)
		want   []record.StateDiff
	}{
		{name: "same state", change: func(*record.Fingerprint) {}},
		{name: "boost within the tolerance", change: func(fp *record.Fingerprint) { fp.GPUState = []record.GPUState{gpu(1890, 3201, nil)} }},
		{name: "throttled", change: func(fp *record.Fingerprint) {
			fp.GPUState = []record.GPUState{gpu(1410, 3201, map[string]int{"HW slowdown": 9, "HW thermal slowdown": 2})}
		}, want: []record.StateDiff{{Kind: record.DiffSMClock, Step: "engine", GoodMHz: 1980, BadMHz: 1410,
			BadSlowdowns: []string{"HW slowdown", "HW thermal slowdown"}}}},
		{name: "a slowdown at the same clocks", change: func(fp *record.Fingerprint) {
			fp.GPUState = []record.GPUState{gpu(1965, 3201, map[string]int{"SW power cap": 3})}
		}, want: []record.StateDiff{{Kind: record.DiffSlowdowns, Step: "engine", GoodMHz: 1980, BadMHz: 1965, BadSlowdowns: []string{"SW power cap"}}}},
		{name: "memory clock", change: func(fp *record.Fingerprint) { fp.GPUState = []record.GPUState{gpu(1980, 2619, nil)} },
			want: []record.StateDiff{{Kind: record.DiffMemClock, Step: "engine", GoodMHz: 3201, BadMHz: 2619}}},
		{name: "another driver", change: func(fp *record.Fingerprint) {
			fp.GPUs = []record.GPU{{Index: 0, Name: "NVIDIA H200", Driver: "570.124.06"}}
		},
			want: []record.StateDiff{{Kind: record.DiffGPU, Good: "NVIDIA H200, driver 580.159.04", Bad: "NVIDIA H200, driver 570.124.06"}}},
		{name: "topology", change: func(fp *record.Fingerprint) { fp.GPUTopology = "GPU0 X SYS" },
			want: []record.StateDiff{{Kind: record.DiffTopology, Good: "GPU0 X", Bad: "GPU0 X SYS"}}},
		{name: "configuration files", change: func(fp *record.Fingerprint) {
			fp.NCCLConf = map[string]string{"/etc/nccl.conf": "NCCL_PROTO=Simple", "/root/.nccl.conf": ""}
		}, want: []record.StateDiff{
			{Kind: record.DiffNCCLConf, Name: "/etc/nccl.conf", Good: "NCCL_PROTO=LL", Bad: "NCCL_PROTO=Simple"},
			{Kind: record.DiffNCCLConf, Name: "/root/.nccl.conf"},
		}},
		{name: "NCCL", change: func(fp *record.Fingerprint) {
			fp.NCCL = &record.NCCLInfo{Version: "2.27.3", Env: map[string]string{}, Channels: map[string]int{"coll": 16},
				Algorithms: []record.NCCLAlgorithm{{Collective: "AllReduce", Algorithm: "TREE", Protocol: "SIMPLE"}}}
		}, want: []record.StateDiff{
			{Kind: record.DiffNCCL, Name: "NCCL version", Good: "2.28.9", Bad: "2.27.3"},
			{Kind: record.DiffNCCL, Name: "NCCL_ALGO set by environment", Good: "Ring"},
			{Kind: record.DiffNCCL, Name: "NCCL coll channels", Good: "8", Bad: "16"},
			{Kind: record.DiffNCCL, Name: "NCCL AllReduce algorithm/protocol", Good: "RING/LL", Bad: "TREE/SIMPLE"},
		}},
		{name: "no NCCL lines at one end", change: func(fp *record.Fingerprint) { fp.NCCL = nil }},
		{name: "another torch", change: func(fp *record.Fingerprint) { fp.Reported = map[string]string{"torch": "2.10.0", "cuda": "12.8"} },
			want: []record.StateDiff{{Kind: record.DiffReported, Name: "torch", Good: "2.11.0", Bad: "2.10.0"}}},
		{name: "a key one end did not report", change: func(fp *record.Fingerprint) { fp.Reported = map[string]string{"torch": "2.11.0"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := base
			tc.change(&bad)
			assert.Equal(t, tc.want, stateDiffs(base, bad))
		})
	}
}

func TestCombineGPUState(t *testing.T) {
	run := func(median, lo float64, slow map[string]int) record.Run {
		return record.Run{Fingerprint: record.Fingerprint{GPUState: []record.GPUState{{
			Step: "engine", Index: 0, Name: "NVIDIA H200", Samples: 10,
			SMClockMHz: record.Spread{Min: lo, Median: median, Max: 1980}, MemClockMHz: record.Spread{Min: 3201, Median: 3201, Max: 3201},
			MaxTemperatureC: median / 40, MeanPowerW: median / 4, MaxPowerW: median / 3, MeanUtilizationPct: 90,
			ThrottleReasons: "0x0000000000000001", Slowdowns: slow,
		}}}}
	}
	got := combineGPUState([]record.Run{run(1980, 345, nil), run(1410, 1395, map[string]int{"HW slowdown": 8}), run(1970, 1900, map[string]int{"HW slowdown": 1})})
	require.Len(t, got, 1)
	assert.Equal(t, record.GPUState{
		Step: "engine", Index: 0, Name: "NVIDIA H200", Samples: 30,
		SMClockMHz: record.Spread{Min: 345, Median: 1970, Max: 1980}, MemClockMHz: record.Spread{Min: 3201, Median: 3201, Max: 3201},
		MaxTemperatureC: 49.5, MeanPowerW: 446.67, MaxPowerW: 660, MeanUtilizationPct: 90,
		ThrottleReasons: "0x0000000000000001", Slowdowns: map[string]int{"HW slowdown": 9},
	}, got[0])
	assert.Nil(t, combineGPUState([]record.Run{{}}), "runs of a host without GPUs")
}
