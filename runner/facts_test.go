package runner

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/secret"
)

func TestParseGPUQuerySample(t *testing.T) {
	// Recorded on an H200 with --format=csv: units in the header and the
	// values, renamed columns, no index column.
	f, err := os.Open("testdata/nvidia_smi_query_gpu.csv")
	require.NoError(t, err)
	defer f.Close()
	gpus, err := ParseGPUQuery(f)
	require.NoError(t, err)
	assert.Equal(t, []record.GPU{{
		Index:           0,
		Name:            "NVIDIA H200",
		Driver:          "580.159.04",
		SMClockMHz:      1980,
		MemClockMHz:     3201,
		TemperatureC:    39,
		PowerW:          128.51,
		ThrottleReasons: "0x0000000000000001",
	}}, gpus)
}

func TestParseGPUQueryRealOutput(t *testing.T) {
	// perfbot's own query (GPUQueryFields, csv,nounits) on an H200.
	f, err := os.Open("testdata/nvidia_smi_perfbot_query.csv")
	require.NoError(t, err)
	defer f.Close()
	gpus, err := ParseGPUQuery(f)
	require.NoError(t, err)
	assert.Equal(t, []record.GPU{{
		Index:           0,
		Name:            "NVIDIA H200",
		Driver:          "580.159.04",
		SMClockMHz:      1980,
		MemClockMHz:     3201,
		TemperatureC:    36,
		PowerW:          128.11,
		ThrottleReasons: "0x0000000000000001",
	}}, gpus)
}

func TestParseGPUQuery(t *testing.T) {
	for _, tc := range []struct {
		name    string
		input   string
		want    []record.GPU
		wantErr string
	}{
		{
			name: "perfbot's own query, nounits",
			input: `index, name, driver_version, clocks.current.sm [MHz], clocks.current.memory [MHz], temperature.gpu, power.draw [W], clocks_event_reasons.active
0, NVIDIA H100 80GB HBM3, 570.124.06, 1980, 2619, 41, 118.20, 0x0000000000000000
1, NVIDIA H100 80GB HBM3, 570.124.06, 1755, 2619, 83, 699.10, 0x0000000000000020
`,
			want: []record.GPU{
				{Index: 0, Name: "NVIDIA H100 80GB HBM3", Driver: "570.124.06", SMClockMHz: 1980, MemClockMHz: 2619, TemperatureC: 41, PowerW: 118.2, ThrottleReasons: "0x0000000000000000"},
				{Index: 1, Name: "NVIDIA H100 80GB HBM3", Driver: "570.124.06", SMClockMHz: 1755, MemClockMHz: 2619, TemperatureC: 83, PowerW: 699.1, ThrottleReasons: "0x0000000000000020"},
			},
		},
		{
			name:  "unsupported values stay zero",
			input: "index, name, power.draw [W], clocks_throttle_reasons.active\n3, Tesla T4, [N/A], [Not Supported]\n",
			want:  []record.GPU{{Index: 3, Name: "Tesla T4", ThrottleReasons: "[Not Supported]"}},
		},
		{
			name:    "a clock that is not a finite number",
			input:   "index, clocks.sm\n0, NaN\n",
			wantErr: `"NaN" is not a finite number`,
		},
		{
			name:    "noheader output",
			input:   "0, NVIDIA H200, 580.159.04, 1980\n",
			wantErr: `names no known column`,
		},
		{
			name:    "bad number",
			input:   "index, name, clocks.sm [MHz]\n0, NVIDIA H200, fast\n",
			wantErr: `line 2, clocks.sm [MHz]: "fast" is not a number`,
		},
		{
			name:    "short row",
			input:   "index, name, clocks.sm [MHz]\n0, NVIDIA H200\n",
			wantErr: "line 2 has 2 fields, the header 3",
		},
		{
			name:    "no GPUs",
			input:   "index, name\n",
			wantErr: "no GPUs listed",
		},
		{
			name:    "empty",
			input:   "",
			wantErr: "empty output",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGPUQuery(strings.NewReader(tc.input))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestKeptEnv(t *testing.T) {
	seen := map[string]string{
		"NCCL_PROTO":            "LL",
		"CUDA_VISIBLE_DEVICES":  "0,1",
		"GOMAXPROCS":            "8",
		"OMP_NUM_THREADS":       "4",
		"SGLANG_ENABLE_X":       "1",
		"MODEL":                 "llama",
		"HF_TOKEN":              "hf_abc",
		"AWS_SECRET_ACCESS_KEY": "xyz",
		"NCCL_IB_PASSWORD":      "pw",
		"GOPROXY":               "https://ci:hunter22@proxy.example.com",
		"PATH":                  "/usr/bin",
		"HOME":                  "/root",
		"TERM":                  "xterm",
	}
	got := keptEnv(seen, []string{"SGLANG_*", "HF_TOKEN", "PATH"}, map[string]string{"MODEL": "x"}, map[string]string{"AWS_SECRET_ACCESS_KEY": "y"})
	assert.Equal(t, map[string]string{
		"NCCL_PROTO":            "LL",
		"CUDA_VISIBLE_DEVICES":  "0,1",
		"GOMAXPROCS":            "8",
		"OMP_NUM_THREADS":       "4",
		"SGLANG_ENABLE_X":       "1",
		"MODEL":                 "llama",
		"HF_TOKEN":              secret.Mask,
		"AWS_SECRET_ACCESS_KEY": secret.Mask,
		"NCCL_IB_PASSWORD":      secret.Mask,
		"GOPROXY":               "https://ci:" + secret.Mask + "@proxy.example.com",
	}, got)
}
