package runner_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
	"github.com/perfbot/perfbot/runner/runnertest"
	"github.com/perfbot/perfbot/secret"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// ncclLines are NCCL_DEBUG=INFO lines as the recorded H200 run printed
// them.
const ncclLines = `vm:527:527 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
vm:527:527 [0] NCCL INFO comm 0xfbd21c0 rank 0 nRanks 1 nNodes 1 localRanks 1 localRank 0 MNNVL 0
vm:527:527 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 8.
vm:527:527 [0] NCCL INFO 8 coll channels, 8 collnet channels, 0 nvls channels, 8 p2p channels, 8 p2p channels per peer
`

// ncclConfs makes a home with a ~/.nccl.conf and an $NCCL_CONF_FILE.
func ncclConfs(t *testing.T) (home, confFile string) {
	home = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, ".nccl.conf"), []byte("NCCL_P2P_LEVEL=SYS\n"), 0o644))
	confFile = filepath.Join(t.TempDir(), "site.conf")
	require.NoError(t, os.WriteFile(confFile, []byte("NCCL_PROTO=LL128\nNCCL_ALGO=Ring\n"), 0o644))
	t.Setenv("HOME", home)
	return home, confFile
}

func TestMeasureSamplesGPUState(t *testing.T) {
	const bench = `printf '%s' "$NCCL_OUT"; printf 'BenchmarkVerifyStep-2 1 812.5 tok/s\n'`
	for _, tc := range []struct {
		name    string
		samples string
		script  string
		// want per GPU: median SM clock, reasons' union, slowdowns
		wantSM        []float64
		wantReasons   []string
		wantSlowdowns []map[string]int
	}{
		{
			name: "busy", samples: "samples_busy.csv", script: runnertest.AwaitSampled + bench,
			wantSM:        []float64{1980, 1980},
			wantReasons:   []string{"0x0000000000000005", "0x0000000000000001"},
			wantSlowdowns: []map[string]int{{"SW power cap": 1}, nil},
		},
		{
			name: "throttled", samples: "samples_throttled.csv", script: runnertest.AwaitSampled + bench,
			wantSM:        []float64{1410, 1980},
			wantReasons:   []string{"0x0000000000000049", "0x0000000000000001"},
			wantSlowdowns: []map[string]int{{"HW slowdown": 4, "HW thermal slowdown": 1}, nil},
		},
		{
			name: "a script that replaces its shell", samples: "samples_busy.csv", script: runnertest.AwaitSampled + "exec sh -c " + proc.ShellQuote(bench),
			wantSM:        []float64{1980, 1980},
			wantReasons:   []string{"0x0000000000000005", "0x0000000000000001"},
			wantSlowdowns: []map[string]int{{"SW power cap": 1}, nil},
		},
		{
			// The sampling loop is no job of the script's shell: a bare
			// wait would otherwise wait for it until the step timed out.
			name: "a script that waits for its jobs", samples: "samples_busy.csv", script: runnertest.AwaitSampled + "sleep 0 & wait\n" + bench,
			wantSM:        []float64{1980, 1980},
			wantReasons:   []string{"0x0000000000000005", "0x0000000000000001"},
			wantSlowdowns: []map[string]int{{"SW power cap": 1}, nil},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gpu := runnertest.UseFakeGPU(t, tc.samples)
			home, confFile := ncclConfs(t)
			box, commit := localHost(t, "box", map[string]string{"README": "engine\n"})
			pool, err := runner.NewPool(box)
			require.NoError(t, err)
			r := &runner.Runner{Spec: runnertest.GPUSpec(tc.script, map[string]string{"NCCL_CONF_FILE": confFile, "NCCL_OUT": ncclLines})}
			runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: commit}}, 2)
			require.NoError(t, err)
			require.Len(t, runs, 2)
			for _, run := range runs {
				require.Equal(t, record.StatusOK, run.Status, run.Error)
				assert.Equal(t, 812.5, run.Values["verify_tok_s"])
				fp := run.Fingerprint

				require.Len(t, fp.GPUs, 2, "the GPUs as the step found them, not the host's snapshot")
				assert.Equal(t, 345.0, fp.GPUs[0].SMClockMHz)
				assert.Equal(t, "0x0000000000000001", fp.GPUs[0].ThrottleReasons)
				require.Len(t, fp.GPUState, 2)
				for i, st := range fp.GPUState {
					assert.Equal(t, "engine", st.Step)
					assert.Equal(t, i, st.Index)
					assert.Equal(t, "NVIDIA H200", st.Name)
					assert.Equal(t, 5, st.Samples, "the row cut short is dropped")
					assert.Equal(t, tc.wantSM[i], st.SMClockMHz.Median)
					assert.Less(t, 345.0, st.SMClockMHz.Min, "the idle first sample (no kernel ran) is not the step's clock")
					assert.Less(t, st.Busy, st.Samples)
					assert.Equal(t, record.Spread{Min: 3201, Median: 3201, Max: 3201}, st.MemClockMHz)
					assert.Equal(t, tc.wantReasons[i], st.ThrottleReasons)
					assert.Equal(t, tc.wantSlowdowns[i], st.Slowdowns)
				}
				assert.Equal(t, "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-15\t0\t\tN/A", fp.GPUTopology, "escapes and legend stripped")
				assert.Equal(t, "NCCL_P2P_LEVEL=SYS", fp.NCCLConf[filepath.Join(home, ".nccl.conf")])
				assert.Equal(t, "NCCL_PROTO=LL128\nNCCL_ALGO=Ring", fp.NCCLConf[confFile])
				require.NotNil(t, fp.NCCL)
				assert.Equal(t, "2.28.9+cuda13.0", fp.NCCL.Version)
				assert.Equal(t, map[string]string{"NCCL_MAX_NCHANNELS": "8"}, fp.NCCL.Env)
				assert.Equal(t, confFile, fp.Env["NCCL_CONF_FILE"], "the variables the process received stay in Env")
			}
			topo := 0
			for _, c := range gpu.Calls(t) {
				if strings.HasPrefix(c, "topo") {
					topo++
				}
			}
			assert.Equal(t, 1, topo, "the topology is read once per host")
		})
	}
}

// TestGPUStateGolden keeps an example of what a fingerprint holds of a run
// on a GPU host (the stand-in's busy H200 pair), as JSON.
func TestGPUStateGolden(t *testing.T) {
	runnertest.UseFakeGPU(t, "samples_busy.csv")
	home, confFile := ncclConfs(t)
	box, commit := localHost(t, "box", map[string]string{"README": "engine\n"})
	pool, err := runner.NewPool(box)
	require.NoError(t, err)
	r := &runner.Runner{Spec: runnertest.GPUSpec(runnertest.AwaitSampled+`printf '%s' "$NCCL_OUT"; printf 'BenchmarkVerifyStep-2 1 812.5 tok/s\n'`,
		map[string]string{"NCCL_CONF_FILE": confFile, "NCCL_OUT": ncclLines, "NCCL_ALGO": "Ring"})}
	runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: commit}}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	fp := runs[0].Fingerprint
	// What the host and the test's temporary paths make differ between
	// machines goes.
	fp.Host, fp.OS, fp.Kernel, fp.CPUModel, fp.CPUs, fp.GoVersion, fp.Python = "gpu-host", "linux/amd64", "", "", 0, "", ""
	// The load and the CPU list are this machine's now (TestLocalLoad).
	assert.NotEmpty(t, fp.LoadAvg)
	fp.LoadAvg, fp.CPUAffinity = "", ""
	fp.Env = map[string]string{"NCCL_ALGO": fp.Env["NCCL_ALGO"], "NCCL_CONF_FILE": "/etc/site/nccl.conf"}
	conf := map[string]string{}
	for path, body := range fp.NCCLConf {
		path = strings.Replace(path, home, "/home/bench", 1)
		conf[strings.Replace(path, confFile, "/etc/site/nccl.conf", 1)] = body
	}
	fp.NCCLConf = conf
	got, err := json.MarshalIndent(fp, "", "  ")
	require.NoError(t, err)
	golden := filepath.Join("testdata", "fingerprint_gpu.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
		return
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./runner -run TestGPUStateGolden -update to create it")
	assert.Equal(t, string(want), string(got)+"\n")
}

// gpuless is a Local host whose facts list no GPUs, whatever the machine
// has.
type gpuless struct{ *runner.Local }

func (g gpuless) Facts(ctx context.Context) (record.Fingerprint, error) {
	fp, err := g.Local.Facts(ctx)
	fp.GPUs = nil
	return fp, err
}

func TestMeasureWithoutGPUsSamplesNothing(t *testing.T) {
	runnertest.UseFakeGPU(t, "samples_busy.csv")
	box, commit := localHost(t, "box", map[string]string{"README": "engine\n"})
	pool, err := runner.NewPool(gpuless{box})
	require.NoError(t, err)
	r := &runner.Runner{Spec: runnertest.GPUSpec(`printf 'BenchmarkVerifyStep-2 1 812.5 tok/s\n'`, nil)}
	runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: commit}}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Empty(t, runs[0].Fingerprint.GPUs)
	assert.Empty(t, runs[0].Fingerprint.GPUState)
	assert.NoDirExists(t, filepath.Join(box.Workdir, "scratch", "0", "gpu-engine"), "no prologue on a host without GPUs")
}

func TestGPUStateScrubsSecrets(t *testing.T) {
	runnertest.UseFakeGPU(t, "samples_busy.csv")
	_, confFile := ncclConfs(t)
	require.NoError(t, os.WriteFile(confFile, []byte("NCCL_PROTO=LL\n# proxy https://ci:hunter22@proxy.example.com\n"), 0o644))
	box, commit := localHost(t, "box", map[string]string{"README": "engine\n"})
	pool, err := runner.NewPool(box)
	require.NoError(t, err)
	nccl := ncclLines + "vm:527:527 [0] NCCL INFO NCCL_IB_PASSWORD set by environment to s3cret.\n"
	r := &runner.Runner{Spec: runnertest.GPUSpec(runnertest.AwaitSampled+`printf '%s' "$NCCL_OUT"; printf 'BenchmarkVerifyStep-2 1 812.5 tok/s\n'`,
		map[string]string{"NCCL_CONF_FILE": confFile, "NCCL_OUT": nccl}), Secrets: []string{"hunter22"}}
	runs, err := runnertest.Measure(t, context.Background(), pool, r, runner.Source{Target: record.Target{Commit: commit}}, 1)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	fp := runs[0].Fingerprint
	assert.NotContains(t, fp.NCCLConf[confFile], "hunter22")
	assert.Contains(t, fp.NCCLConf[confFile], "NCCL_PROTO=LL")
	assert.Equal(t, secret.Mask, fp.NCCL.Env["NCCL_IB_PASSWORD"])
}
