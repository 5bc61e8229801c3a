package configs_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/configs"
)

// TestEveryConfigLoads loads each example through the strict loader.
func TestEveryConfigLoads(t *testing.T) {
	names, err := fs.Glob(configs.FS, "*.yaml")
	require.NoError(t, err)
	require.Contains(t, names, "testbed.yaml")
	require.GreaterOrEqual(t, len(names), 4, "testbed, sglang, vllm and nccl-tests examples")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			data, err := configs.FS.ReadFile(name)
			require.NoError(t, err)
			c, err := config.Parse(data, name)
			require.NoError(t, err)
			assert.NotEmpty(t, c.Primary().Name)
		})
	}
	assert.Equal(t, mustRead(t, "testbed.yaml"), configs.Testbed())
}

// sampleOutputs are real outputs of the tools the examples run, kept by the
// bench package for its own tests.
var sampleOutputs = map[string]string{
	"sglang-serving": "sglang_bench_serving_summary.txt",
	"vllm-serve":     "vllm_bench_serve.txt",
	"nccl-tests":     "nccl_tests_all_reduce_perf.txt",
}

// TestExampleMetricsSelectFromRealOutput checks that every metric of the
// examples finds its value in a real output of its benchmark's tool, so an
// example's select and unit are not guesses.
func TestExampleMetricsSelectFromRealOutput(t *testing.T) {
	checked := 0
	for _, name := range []string{"sglang.yaml", "sglang-ssh.yaml", "vllm.yaml", "nccl-tests.yaml", "slurm.yaml"} {
		c, err := config.Parse(mustRead(t, name), name)
		require.NoError(t, err)
		for _, b := range c.Benchmarks {
			sample, ok := sampleOutputs[b.Format]
			if !ok {
				continue
			}
			f, err := os.Open(filepath.Join("..", "bench", "testdata", sample))
			require.NoError(t, err)
			samples, err := bench.Parse(b.Format, f, b.Options)
			require.NoError(t, f.Close())
			require.NoError(t, err, "%s: %s", name, b.Name)
			for _, m := range c.Metrics {
				if m.Benchmark != b.Name {
					continue
				}
				v, err := bench.Select(samples, m.Select, m.Unit)
				if assert.NoError(t, err, "%s: metric %s", name, m.Name) {
					assert.Positive(t, v, "%s: metric %s", name, m.Name)
				}
				checked++
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 9)
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := configs.FS.ReadFile(name)
	require.NoError(t, err)
	return data
}

// TestGPTFastMetricsSelectFromItsOutput checks the gpt-fast examples
// against the output of scripts/gptfast/bench.py and of perfbot loadgen:
// every metric finds a positive value, and the software lines are read
// as the run's configuration.
func TestGPTFastMetricsSelectFromItsOutput(t *testing.T) {
	for _, tc := range []struct{ config, output string }{
		{"gptfast.yaml", "testdata/gptfast_bench.txt"},
		{"gptfast-server.yaml", "../bench/testdata/perfbot_loadgen.txt"},
	} {
		t.Run(tc.config, func(t *testing.T) {
			c, err := config.Parse(mustRead(t, tc.config), tc.config)
			require.NoError(t, err)
			out, err := os.ReadFile(tc.output)
			require.NoError(t, err)
			require.Len(t, c.Benchmarks, 1)
			b := c.Benchmarks[0]
			samples, err := bench.Parse(b.Format, strings.NewReader(string(out)), b.Options)
			require.NoError(t, err)
			for _, m := range c.Metrics {
				v, err := bench.Select(samples, m.Select, m.Unit)
				if assert.NoError(t, err, "metric %s", m.Name) {
					assert.Positive(t, v, "metric %s", m.Name)
				}
			}
			if b.Format == bench.FormatGoBench {
				// Only facts that stay put between runs: torch's warnings
				// and bench.py's timing (on stderr, which perfbot reads
				// too) are no configuration lines.
				cfg := bench.GoBenchConfig(out)
				assert.Equal(t, map[string]string{
					"torch": "2.11.0+cu128",
					"cuda":  "12.8",
					"nccl":  "2.27.3",
					"gpu":   "NVIDIA H200",
					"model": "dim=2048 layers=12 heads=16 vocab=32000 params=735M dtype=bfloat16 cache=8192 draft_layers=3 k=5",
				}, cfg)
			}
		})
	}
}

// TestRealBisectCasesFillTheTemplate fills scripts/realbisect's
// perfbot.yaml for each of its cases as perfbot-bisect.sh does, loads it
// through the strict loader and checks that its metric selects the case's
// benchmark from a line of Go benchmark output in the case's unit.
func TestRealBisectCasesFillTheTemplate(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	cases, err := filepath.Glob(filepath.Join("..", "scripts", "realbisect", "cases", "*.sh"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(cases), 2, "compress and bitset")
	for _, file := range cases {
		name := strings.TrimSuffix(filepath.Base(file), ".sh")
		t.Run(name, func(t *testing.T) {
			script := `. scripts/realbisect/case.sh && rb_config /tmp/history /tmp/counter && echo "#unit $RB_UNIT" && echo "#select $RB_SELECT"`
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = ".."
			cmd.Env = append(os.Environ(), "RB_CASE="+name)
			out, err := cmd.Output()
			require.NoError(t, err)
			var unit, sel string
			for _, l := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(l, "#unit "); ok {
					unit = v
				}
				if v, ok := strings.CutPrefix(l, "#select "); ok {
					sel = v
				}
			}
			c, err := config.Parse(out, name+".yaml")
			require.NoError(t, err)
			require.NotContains(t, string(out), "@", "every placeholder filled")
			assert.Equal(t, "/tmp/history", c.Repo.URL)
			line := sel + "-2   \t     100\t   2999982 " + unit + "\n"
			if unit != "ns/op" {
				line = sel + "-2   \t     100\t   123456 ns/op\t 512.5 " + unit + "\n"
			}
			samples, err := bench.Parse(c.Benchmarks[0].Format, strings.NewReader(line), c.Benchmarks[0].Options)
			require.NoError(t, err)
			v, err := bench.Select(samples, c.Primary().Select, c.Primary().Unit)
			require.NoError(t, err)
			assert.Positive(t, v)
		})
	}
}
