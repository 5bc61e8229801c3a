package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

const h200Topology = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \tNV18\t0-47\t0\t\tN/A\nGPU1\tNV18\t X \t0-47\t0\t\tN/A"

// h200State is an end that ran on two H200s; gpu0 is GPU 0's state.
func h200State(gpu0 record.GPUState, nccl *record.NCCLInfo, conf map[string]string) *record.Fingerprint {
	gpu1 := record.GPUState{Step: "engine", Index: 1, Name: "NVIDIA H200", Samples: 30,
		SMClockMHz: record.Spread{Min: 345, Median: 1980, Max: 1980}, MemClockMHz: record.Spread{Min: 3201, Median: 3201, Max: 3201},
		MaxTemperatureC: 46, MeanPowerW: 531.89, MaxPowerW: 651.2, MeanUtilizationPct: 96.4, ThrottleReasons: "0x0000000000000001"}
	return &record.Fingerprint{
		Host: "gpu1", GPUs: []record.GPU{
			{Index: 0, Name: "NVIDIA H200", Driver: "580.159.04", SMClockMHz: 345, MemClockMHz: 3201, TemperatureC: 36, PowerW: 128.11, ThrottleReasons: "0x0000000000000001"},
			{Index: 1, Name: "NVIDIA H200", Driver: "580.159.04", SMClockMHz: 345, MemClockMHz: 3201, TemperatureC: 35, PowerW: 121.4, ThrottleReasons: "0x0000000000000001"},
		},
		GPUState:    []record.GPUState{gpu0, gpu1},
		GPUTopology: h200Topology,
		NCCLConf:    conf,
		NCCL:        nccl,
	}
}

// throttled is a culprit whose bad end ran on a GPU held at 1410 MHz by
// HW slowdown, with NCCL choosing another protocol: the evidence must say
// so before anyone blames the commit.
func throttled() *record.Finding {
	f := culpritWithoutHunks()
	good0 := record.GPUState{Step: "engine", Index: 0, Name: "NVIDIA H200", Samples: 30,
		SMClockMHz: record.Spread{Min: 345, Median: 1980, Max: 1980}, MemClockMHz: record.Spread{Min: 3201, Median: 3201, Max: 3201},
		MaxTemperatureC: 49, MeanPowerW: 549.17, MaxPowerW: 689.45, MeanUtilizationPct: 97.1,
		ThrottleReasons: "0x0000000000000005", Slowdowns: map[string]int{"SW power cap": 1}}
	bad0 := record.GPUState{Step: "engine", Index: 0, Name: "NVIDIA H200", Samples: 30,
		SMClockMHz: record.Spread{Min: 345, Median: 1410, Max: 1410}, MemClockMHz: record.Spread{Min: 3201, Median: 3201, Max: 3201},
		MaxTemperatureC: 87, MeanPowerW: 384.78, MaxPowerW: 452.18, MeanUtilizationPct: 97.3,
		ThrottleReasons: "0x0000000000000049", Slowdowns: map[string]int{"HW slowdown": 24, "HW thermal slowdown": 6}}
	nccl := func(proto string) *record.NCCLInfo {
		return &record.NCCLInfo{Version: "2.28.9+cuda13.0", Ranks: 2, Nodes: 1, Network: "Socket",
			Env:        map[string]string{"NCCL_PROTO": proto},
			Channels:   map[string]int{"coll": 24, "nvls": 0},
			Algorithms: []record.NCCLAlgorithm{{Collective: "AllReduce", Algorithm: "RING", Protocol: strings.ToUpper(proto), MinBytes: 4096, MaxBytes: 1048576, Calls: 40}}}
	}
	f.GoodState = h200State(good0, nccl("LL"), map[string]string{"/etc/nccl.conf": "NCCL_PROTO=LL"})
	f.BadState = h200State(bad0, nccl("Simple"), map[string]string{"/etc/nccl.conf": "NCCL_PROTO=Simple\nNCCL_DEBUG=WARN"})
	f.StateDiffs = []record.StateDiff{
		{Kind: record.DiffSMClock, GPU: 0, Step: "engine", GoodMHz: 1980, BadMHz: 1410, GoodSlowdowns: []string{"SW power cap"}, BadSlowdowns: []string{"HW slowdown", "HW thermal slowdown"}},
		{Kind: record.DiffNCCLConf, Name: "/etc/nccl.conf", Good: "NCCL_PROTO=LL", Bad: "NCCL_PROTO=Simple\nNCCL_DEBUG=WARN"},
		{Kind: record.DiffNCCL, Name: "NCCL_PROTO set by environment", Good: "LL", Bad: "Simple"},
		{Kind: record.DiffNCCL, Name: "NCCL AllReduce algorithm/protocol", Good: "RING/LL", Bad: "RING/SIMPLE"},
		{Kind: record.DiffReported, Name: "torch", Good: "2.11.0+cu128", Bad: "2.10.0+cu126"},
	}
	f.ID = f.DerivedID()
	return f
}

// sameGPUState is a culprit whose ends met their GPUs in one state, on two
// benchmark steps, without NCCL lines.
func sameGPUState() *record.Finding {
	f := culpritWithoutHunks()
	st := record.GPUState{Step: "engine", Index: 0, Name: "NVIDIA H200", Samples: 12,
		SMClockMHz: record.Spread{Min: 1980, Median: 1980, Max: 1980}, MemClockMHz: record.Spread{Min: 3201, Median: 3201, Max: 3201},
		MaxTemperatureC: 51, MeanPowerW: 601.5, MaxPowerW: 640.02, MeanUtilizationPct: 100, ThrottleReasons: "0x0000000000000000"}
	st2 := st
	st2.Step, st2.MeanPowerW = "allreduce", 410
	f.GoodState = &record.Fingerprint{GPUState: []record.GPUState{st, st2}}
	f.BadState = &record.Fingerprint{GPUState: []record.GPUState{st, st2}}
	f.ID = f.DerivedID()
	return f
}

func TestRenderGPUStateGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		finding *record.Finding
	}{
		{"gpu_throttled", throttled()},
		{"gpu_same_state", sameGPUState()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, body, err := Render(tc.finding)
			require.NoError(t, err)
			golden(t, filepath.Join("render", tc.name+".md"), "# "+title+"\n\n"+body)
		})
	}
}

func TestGPUStateEvidence(t *testing.T) {
	_, body, err := Render(throttled())
	require.NoError(t, err)
	assert.Contains(t, body, "- GPU 0: the culprit ran throttled at 1410 MHz (HW slowdown, HW thermal slowdown); the parent at 1980 MHz (SW power cap).")
	assert.Contains(t, body, "The GPUs, NCCL or software of the two ends were in different states (GPU 0 SM clock, /etc/nccl.conf, NCCL\\_PROTO set by environment, NCCL AllReduce algorithm/protocol, torch version)")
	assert.Contains(t, body, "GPU topology of the parent and the culprit")

	// The good end faster but throttled: the words follow the clocks.
	f := throttled()
	f.StateDiffs = []record.StateDiff{{Kind: record.DiffSMClock, GPU: 1, GoodMHz: 1410, BadMHz: 1980, GoodSlowdowns: []string{"HW slowdown"}}}
	_, body, err = Render(f)
	require.NoError(t, err)
	assert.Contains(t, body, "- GPU 1: the culprit ran at 1980 MHz; the parent throttled at 1410 MHz (HW slowdown).")

	// Old findings have no state: no section.
	_, body, err = Render(culpritWithoutHunks())
	require.NoError(t, err)
	assert.NotContains(t, body, "GPU and NCCL state")
}
