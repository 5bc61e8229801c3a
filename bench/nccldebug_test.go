package bench

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

// ncclTuning is what 8 ranks on one node print with
// NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING, written from NCCL's format strings
// (src/init.cc, src/enqueue.cc): the recorded H200 sample has one rank,
// for which NCCL tunes nothing.
const ncclTuning = `node1:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
node1:100:100 [0] NCCL INFO NCCL_ALGO set by environment to Ring
node1:100:100 [0] NCCL INFO NCCL_PROTO set by environment to LL
node1:101:101 [1] NCCL INFO NCCL_PROTO set by environment to LL
node1:100:100 [0] NCCL INFO Using network IB
node1:100:100 [0] NCCL INFO comm 0x55d0c0 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0
node1:100:100 [0] NCCL INFO 24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer
node1:100:100 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..23}
node1:100:100 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}
node1:100:100 [0] NCCL INFO AllGather: 65536 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..3}
step 1: 812.5 tok/s
`

func TestNCCLDebug(t *testing.T) {
	h200, err := os.ReadFile("testdata/nccl_debug_info_h200_1gpu.txt")
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		input string
		want  record.NCCLInfo
	}{
		{name: "one H200 rank (recorded)", input: string(h200), want: record.NCCLInfo{
			Version: "2.28.9+cuda13.0",
			Env:     map[string]string{"NCCL_MAX_NCHANNELS": "8", "NCCL_MIN_NCHANNELS": "4", "NCCL_BUFFSIZE": "8388608"},
			Ranks:   1, Nodes: 1, Network: "Socket",
			Channels: map[string]int{"coll": 8, "collnet": 8, "nvls": 0, "p2p": 8, "p2p per peer": 8},
		}},
		{name: "eight ranks with tuning lines", input: ncclTuning, want: record.NCCLInfo{
			Version: "2.21.5+cuda12.4",
			Env:     map[string]string{"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL"},
			Ranks:   8, Nodes: 1, Network: "IB",
			Channels: map[string]int{"coll": 24, "collnet": 24, "nvls": 16, "p2p": 32, "p2p per peer": 32},
			Algorithms: []record.NCCLAlgorithm{
				{Collective: "AllReduce", Algorithm: "RING", Protocol: "LL", MinBytes: 4096, MaxBytes: 1048576, Calls: 2},
				{Collective: "AllGather", Algorithm: "RING", Protocol: "LL", MinBytes: 65536, MaxBytes: 65536, Calls: 1},
			},
		}},
		{name: "a warning does not stop the facts", input: "h:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\nh:1:1 [0] NCCL WARN Cuda failure 'out of memory'\n",
			want: record.NCCLInfo{Version: "2.18.1+cuda12.1"}},
		{name: "timestamped lines", input: "[2026-11-29 16:00:21] vm:527:527 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to SYS.\n",
			want: record.NCCLInfo{Env: map[string]string{"NCCL_P2P_LEVEL": "SYS"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NCCLDebug(strings.NewReader(tc.input), "bench output")
			require.NoError(t, err)
			assert.Equal(t, tc.want, *got)
		})
	}
}

func TestNCCLDebugSamples(t *testing.T) {
	parts := sampleParts(t, "nccl_debug_info_h200_1gpu.txt")
	require.Len(t, parts, 1)
	samples := parseText(t, "nccl-debug", parts[0], nil)
	require.Len(t, samples, 8)
	requireSelected(t, samples, []selected{
		{"ranks", "value", 1}, {"channels/coll", "value", 8}, {"channels/p2p per peer", "value", 8}, {"init", "s", 0.37},
	})
	samples = parseText(t, "nccl-debug", ncclTuning, nil)
	requireSelected(t, samples, []selected{
		{"ranks", "value", 8}, {"channels/nvls", "value", 16},
		{"AllReduce/algo=RING/proto=LL/calls", "value", 2}, {"AllGather/algo=RING/proto=LL/calls", "value", 1},
	})
}

func TestNCCLDebugErrors(t *testing.T) {
	runErrorCases(t, []errorCase{
		{name: "no NCCL lines", format: "nccl-debug", input: "Traceback (most recent call last):\nRuntimeError: NCCL not built\n",
			is: ErrNoResults, mention: []string{"no NCCL INFO lines found", "RuntimeError: NCCL not built"}},
		{name: "empty", format: "nccl-debug", input: "", is: ErrNoResults, mention: []string{"output is empty"}},
		{name: "a version alone gives no numbers", format: "nccl-debug", input: "h:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n",
			is: ErrNoResults, mention: []string{"no NCCL counts, choices or init timings found"}},
		{name: "NCCL warned", format: "nccl-debug", input: ncclTuning + "node1:100:100 [0] NCCL WARN NET/IB : Got completion with error 12\n",
			is: ErrBenchmarkFailed, mention: []string{":12: NCCL warned", "Got completion with error 12"}},
		{name: "a version that is not one", format: "nccl-debug", input: "h:1:1 [0] NCCL INFO NCCL version\n",
			is: ErrSyntax, mention: []string{":1: NCCL line: does not read as NCCL prints it", "NCCL INFO NCCL version"}},
		{name: "a variable without value", format: "nccl-debug", input: "h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to .\n",
			is: ErrSyntax, mention: []string{"NCCL_ALGO has no value"}},
		{name: "a channel count that is not one", format: "nccl-debug", input: ncclTuning + "h:1:1 [0] NCCL INFO 8 coll channels, x nvls channels\n",
			is: ErrSyntax, mention: []string{`:12: NCCL line: "x nvls channels" is not a channel count`}},
		{name: "a size out of range", format: "nccl-debug", input: "h:1:1 [0] NCCL INFO AllReduce: 99999999999999999999 Bytes -> Algo RING proto LL\n",
			is: ErrSyntax, mention: []string{`size "99999999999999999999" out of range`}},
		{name: "an init time that is not a number", format: "nccl-debug", input: "h:1:1 [0] NCCL INFO Init timings - ncclCommInitRank: rank 0 nranks 1 total nan (kernels 0)\n",
			is: ErrSyntax, mention: []string{"Init timings"}},
	})
}
