package runner

import (
	"encoding/csv"
	"math"
	"os"
	"strings"
	"testing"
)

// FuzzParseGPUQuery checks ParseGPUQuery on any output: no panic; a refusal
// is one of its "gpu query:" errors; an accepted output lists at least one
// GPU whose numbers are all finite (a fingerprint must store as JSON), and
// without an index column the GPUs are numbered in row order. Seeds are the
// recorded nvidia-smi outputs in testdata/ and the tests' inputs.
func FuzzParseGPUQuery(f *testing.F) {
	for _, name := range []string{"testdata/nvidia_smi_query_gpu.csv", "testdata/nvidia_smi_perfbot_query.csv"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	for _, s := range []string{
		"index, name, driver_version, clocks.sm, clocks.mem, temperature.gpu, power.draw, clocks_throttle_reasons.active\n" +
			"0, NVIDIA H200, 580.159.04, 1980, 3201, 36, 128.11, 0x0000000000000001\n1, NVIDIA H200, 580.159.04, [N/A], 3201, 36, 128.11, 0x1\n",
		"name, clocks.current.sm [MHz]\nNVIDIA H200, 1980 MHz\nNVIDIA H200, 1410 MHz\n",
		"0, NVIDIA H200\n", "", "# comment\n", "index, name\nx, y\n", "name, power.draw\n\"a\"b\", 1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		gpus, err := ParseGPUQuery(strings.NewReader(data))
		if err != nil {
			if gpus != nil {
				t.Fatalf("error %v, and %d GPUs", err, len(gpus))
			}
			if !strings.HasPrefix(err.Error(), "gpu query: ") {
				t.Fatalf("error %q is not the parser's", err)
			}
			return
		}
		if len(gpus) == 0 {
			t.Fatal("no GPUs and no error")
		}
		for _, g := range gpus {
			for _, v := range []float64{g.SMClockMHz, g.MemClockMHz, g.TemperatureC, g.PowerW} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("GPU %d has a value that is not finite: %+v", g.Index, g)
				}
			}
		}
		if hasIndexColumn(t, data) {
			return
		}
		for i, g := range gpus {
			if g.Index != i {
				t.Fatalf("without an index column GPU %d has index %d", i, g.Index)
			}
		}
	})
}

// hasIndexColumn reads the header as ParseGPUQuery does and reports whether
// it names the index column.
func hasIndexColumn(t *testing.T, data string) bool {
	cr := csv.NewReader(strings.NewReader(data))
	cr.Comment, cr.TrimLeadingSpace, cr.FieldsPerRecord = '#', true, -1
	header, err := cr.Read()
	if err != nil {
		t.Fatalf("accepted, but the header does not read: %v", err)
	}
	for _, h := range header {
		if unitSuffix.ReplaceAllString(strings.TrimSpace(h), "") == "index" {
			return true
		}
	}
	return false
}
