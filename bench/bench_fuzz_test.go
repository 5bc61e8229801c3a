package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/record"
)

// The fuzz targets, one per format, check what every parser promises:
// it does not panic; an error is an *OutputError wrapping ErrNoResults,
// ErrBenchmarkFailed or ErrSyntax and naming a line of the output; a
// success holds at least one sample, each with a name, a unit, a known
// direction and a finite value. Where a format can be written back
// (Go benchmark format, Prometheus text, JSON), what was parsed is written
// and parsed again and must come back the same.
//
// Seeds are the recorded outputs in testdata/ (copies of the shared
// samples), each whole and cut into its parts, and the inputs of the tests.

// fuzzSeeds adds every testdata file named, whole and part by part, and
// the extra inputs.
func fuzzSeeds(f *testing.F, files []string, extra ...string) {
	f.Helper()
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		for _, part := range strings.Split(string(data), "# source:") {
			f.Add([]byte(part))
		}
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

// checkParse parses data and fails t when a promise is broken; it returns
// the samples of a success.
func checkParse(t *testing.T, format string, data []byte, opts Options) []record.Sample {
	t.Helper()
	samples, err := Parse(format, bytes.NewReader(data), opts)
	if err != nil {
		if samples != nil {
			t.Fatalf("error %v, and %d samples", err, len(samples))
		}
		var oe *OutputError
		if !errors.As(err, &oe) {
			t.Fatalf("error %q is a %T, not an *OutputError", err, err)
		}
		if !errors.Is(err, ErrNoResults) && !errors.Is(err, ErrBenchmarkFailed) && !errors.Is(err, ErrSyntax) {
			t.Fatalf("error %q wraps none of the sentinels", err)
		}
		lines, _ := readLines(bytes.NewReader(data), "")
		if oe.Line < 0 || oe.Line > max(len(lines), 1) {
			t.Fatalf("error %q names line %d of %d", err, oe.Line, len(lines))
		}
		return nil
	}
	if len(samples) == 0 {
		t.Fatal("no samples and no error")
	}
	for _, s := range samples {
		switch {
		case s.Name == "":
			t.Fatalf("sample without a name: %+v", s)
		case s.Unit == "":
			t.Fatalf("sample without a unit: %+v", s)
		case math.IsNaN(s.Value) || math.IsInf(s.Value, 0):
			t.Fatalf("sample %s is %v", s.Name, s.Value)
		case s.Better != "" && s.Better != record.Higher && s.Better != record.Lower:
			t.Fatalf("sample %s is better %q", s.Name, s.Better)
		}
	}
	return samples
}

// sameSamples fails t unless got holds want's names, units and values in
// order.
func sameSamples(t *testing.T, what string, want, got []record.Sample) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d samples, want %d\nwant %v\ngot  %v", what, len(got), len(want), want, got)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Unit != want[i].Unit || got[i].Value != want[i].Value {
			t.Fatalf("%s: sample %d is %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

func FuzzGoBench(f *testing.F) {
	fuzzSeeds(f, []string{"go_bench.txt", "go_bench_reportmetric.txt"},
		"=== RUN   BenchmarkVerifyStep\nBenchmarkVerifyStep\nBenchmarkVerifyStep-2   \t     100\t  12.5 ms/verify\t 812.0 tok/s\nPASS\nok  \tx\t1.2s\n",
		"BenchmarkVerifyStep-2   \t     100\t  12.5 ms/verify\t NaN tok/s\nPASS\n",
		"Unit tok/s better=higher\nBenchmarkDecode/bs=1-2 10 1254 ns/op 798178 tok/s\n",
		"BenchmarkX-2 \tpanic: boom\n", "goos: linux\nBenchmarkX\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		samples := checkParse(t, "gobench", data, nil)
		if samples == nil {
			return
		}
		// Written back with WriteBenchstat, the samples read the same. The
		// names go with their prefix, as go test prints them: the writer
		// drops one "Benchmark", and a benchmark may be called
		// BenchmarkBenchmarkX.
		rows := make([]BenchstatRow, len(samples))
		for i, s := range samples {
			rows[i] = BenchstatRow{Commit: "c", Name: "Benchmark" + s.Name, Unit: s.Unit, Value: s.Value}
		}
		var out bytes.Buffer
		if err := WriteBenchstat(&out, rows); err != nil {
			t.Fatalf("write back: %v", err)
		}
		sameSamples(t, "written back", samples, checkParse(t, "gobench", out.Bytes(), nil))
	})
}

func FuzzNCCLTests(f *testing.F) {
	row := "        1024           256     float     sum      -1    45.33    0.02    0.04       0    37.98    0.03    0.05       0\n"
	fuzzSeeds(f, []string{"nccl_tests_all_reduce_perf.txt"},
		ncclHeader+row+"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.05\n",
		ncclHeader+strings.Replace(row, "0.02", "nan", 1)+"# Avg bus bandwidth    : 0.05\n",
		ncclHeader+row+ncclHeader+row,
		"#\n#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"+
			"     1048576        262144   float     sum    51.20   20.48   38.40  0e+00    50.10   20.93   39.24  0e+00\n# Avg bus bandwidth    : 38.82\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range checkParse(t, "nccl-tests", data, nil) {
			switch s.Unit {
			case ncclTimeUnit, ncclAlgBWUnit, ncclBusBWUnit:
			default:
				t.Fatalf("sample %s has unit %q", s.Name, s.Unit)
			}
		}
	})
}

// servingSeeds are the serving benchmarks' outputs and the tests' inputs.
func servingSeeds(f *testing.F) {
	fuzzSeeds(f, []string{"sglang_bench_serving.jsonl", "sglang_bench_serving_summary.txt", "vllm_bench_serve.txt", "vllm_benchmark_serving.json"},
		"{\n  \"completed\": 10,\n  \"failed\": 0,\n  \"output_throughput\": 123.5,\n  \"ttfts\": [1, 2]\n}\n",
		`{"completed": 10, "output_throughput": NaN, "request_rate": Infinity}`+"\n",
		`{"completed": 10, "failed": 0, "mean_ttft_ms": "nan"}`+"\n",
		"============ Serving Benchmark Result ============\nTraffic request rate:                    inf\n"+
			"Successful requests:                     10\nOutput token throughput (tok/s):         95.62\n"+
			"==================================================\n",
		"Traceback (most recent call last):\n  File \"x.py\"\nRuntimeError: boom\n")
}

func FuzzSGLangServing(f *testing.F) {
	servingSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, "sglang-serving", data, nil) })
}

func FuzzVLLMServe(f *testing.F) {
	servingSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, "vllm-serve", data, nil) })
}

func FuzzSGLangLog(f *testing.F) {
	fuzzSeeds(f, []string{"sglang_server_decode_log.txt"},
		"[2024-05-01 10:00:00 TP0] Decode batch. #running-req: 8, #token: 900, token usage: 0.01, gen throughput (token/s): 812.50, #queue-req: 0\n",
		"[x TP0] Decode batch, gen throughput (token/s): 1.2.3, #queue-req: 0\n",
		"[x TP0] Decode batch, gen throughput (token/s): 3.1, accept len: nan, accept rate: 0.4\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, "sglang-log", data, nil) })
}

func FuzzNCCLDebug(f *testing.F) {
	fuzzSeeds(f, []string{"nccl_debug_info_h200_1gpu.txt"}, ncclTuning,
		"h:1:1 [0] NCCL INFO NCCL version\n", "h:1:1 [0] NCCL INFO 8 coll channels, x nvls channels\n",
		"h:1:1 [0] NCCL INFO AllReduce: 99999999999999999999 Bytes -> Algo RING proto LL\n",
		"h:1:1 [0] NCCL INFO Init timings - x: total 1e400\n", "h:1:1 [0] NCCL WARN Cuda failure\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		samples := checkParse(t, "nccl-debug", data, nil)
		info, err := NCCLDebug(bytes.NewReader(data), "<input>")
		if samples != nil && err != nil {
			t.Fatalf("the format read samples, the facts failed: %v", err)
		}
		if err == nil && info == nil {
			t.Fatal("no facts and no error")
		}
	})
}

func FuzzPrometheus(f *testing.F) {
	fuzzSeeds(f, nil, promText, "up\n", `up{job="x 1`+"\n", "# HELP x y\n",
		"go_gc_duration_seconds{quantile=\"0.5\"} NaN\nup 1\n", "vllm:gpu_cache_usage_perc +Inf\n",
		`a{b="c \"d\" }",e="f"} 1e300 1700000000000`+"\n",
		// Names that are not legacy names are quoted when written back.
		`"0"0`, `{"vllm.cache","le.x"="1"} 2`+"\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		samples := checkParse(t, "prometheus", data, nil)
		if samples == nil {
			return
		}
		// Written back one series a line, the samples read the same.
		var out strings.Builder
		for _, s := range samples {
			out.WriteString(s.Name + " " + strconv.FormatFloat(s.Value, 'g', -1, 64) + "\n")
		}
		sameSamples(t, "written back", samples, checkParse(t, "prometheus", []byte(out.String()), nil))
	})
}

func FuzzJSON(f *testing.F) {
	fuzzSeeds(f, []string{"vllm_benchmark_serving.json", "sglang_bench_serving.jsonl"},
		`{"avg_bus_bandwidth": {"bandwidth": 137.2, "okay": "unchecked"},
 "results": [{"size": 8, "out_of_place": {"time": 36.5, "bus_bw": 0}}, {"size": 16, "out_of_place": {"time": 35.5, "bus_bw": Infinity}}]}`,
		"{\"x\": 1}\n{\"x\": 3}\n{\"x\": 2}\n", `{"results": [{"size": 8, "bus_bw": "nan"}]}`, "{\"a\": 1,\n\"b\": }\n", `[1, [2, {"c": -1e400}]]`)
	f.Fuzz(func(t *testing.T, data []byte) {
		samples := checkParse(t, "json", data, nil)
		checkParse(t, "json", data, Options{"fields": "x=x, bw=results.0.bus_bw"})
		if samples == nil {
			return
		}
		// Written back one sample a line, the samples read the same.
		var out bytes.Buffer
		for _, s := range samples {
			line, err := json.Marshal(map[string]float64{s.Name: s.Value})
			if err != nil {
				t.Fatalf("encode %s: %v", s.Name, err)
			}
			out.Write(append(line, '\n'))
		}
		back := checkParse(t, "json", out.Bytes(), nil)
		// A name is a dotted path, which a key that holds dots cannot be
		// told from; the written-back names are the keys themselves.
		sameSamples(t, "written back", samples, back)
	})
}

func FuzzRegex(f *testing.F) {
	fuzzSeeds(f, nil, "Throughput: 5.35 requests/s, 2735.50 total tokens/s, 1369.41 output tokens/s\nAvg latency: 5.25 seconds\n",
		"tok/s: NaN\n", "tok/s: 1e400\n", "P99: 12 ms\nP99: x ms\n")
	patterns := []string{
		`(?P<value>[0-9.]+) (?P<name>total|output) tokens/s`,
		`(?m)^tok/s: (?P<value>\S+)$`,
		`(?P<name>\w+): (?P<value>\S+) ms`,
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range patterns {
			checkParse(t, "regex", data, Options{"pattern": p, "unit": "tok/s"})
		}
	})
}

func FuzzSGLangOneBatch(f *testing.F) {
	fuzzSeeds(f, []string{"sglang_bench_one_batch.txt"},
		"Benchmark ...\nPrefill. latency: 0.4.1 s, throughput:   2465.87 token/s\n",
		"Prefill. latency: 0.03121 s, throughput:  32810.00 token/s\nDecode.  median latency:     nan s, median throughput:       nan token/s\n",
		"Decode.  median latency: 0.00549 s, median throughput:    182.08 token/s\n",
		`{"batch_size": 8, "prefill_latency": 0.1486, "median_decode_throughput": 1143.4}`+"\n",
		`{"batch_size": 1, "median_decode_latency": NaN}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range checkParse(t, "sglang-one-batch", data, nil) {
			if (s.Unit == "s") != (s.Better == record.Lower) || (s.Unit != "s" && s.Unit != "tok/s") {
				t.Fatalf("sample %s: unit %q, better %q", s.Name, s.Unit, s.Better)
			}
		}
	})
}

func FuzzVLLMThroughput(f *testing.F) {
	fuzzSeeds(f, []string{"vllm_bench_throughput.txt"},
		"Throughput: 5.35 requests/s, lots of total tokens/s\n",
		"Throughput: nan requests/s, nan total tokens/s, nan output tokens/s\n",
		"Total num prompt tokens:  255378\n", `{"tokens_per_second": Infinity}`)
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, "vllm-throughput", data, nil) })
}
