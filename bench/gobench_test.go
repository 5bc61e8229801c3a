package bench

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/record"
	"github.com/stretchr/testify/require"
)

func TestGoBenchSamples(t *testing.T) {
	gb := sampleParts(t, "go_bench.txt")
	rm := sampleParts(t, "go_bench_reportmetric.txt")
	tests := []struct {
		name    string
		input   string
		count   int
		want    []selected
		better  map[string]record.Better // unit → direction
		checkFn func(t *testing.T, samples []record.Sample)
	}{
		{
			name: "old.txt sub-benchmarks with -48", input: gb[0], count: 20,
			want: []selected{
				{"BenchmarkEncode/format=json", "ns/op", 1718},
				{"Encode/format=json-48", "sec/op", 1718e-9},
				{"Encode/format=gob", "ns/op", 3065.5},
			},
			better: map[string]record.Better{"sec/op": record.Lower},
		},
		{
			name: "units.txt custom unit and config changes", input: gb[2], count: 8,
			want: []selected{{"Size", "text-bytes", 102.5}, {"BenchmarkNonExact", "text-bytes", 101}},
		},
		{
			name: "ReportMetric tok/s", input: rm[0], count: 18,
			want: []selected{
				{"Decode/bs=8", "tok/s", 970598},
				{"Decode/bs=1-2", "tok/op", 1},
				{"BenchmarkDecode/bs=1", "ns/op", 1254},
			},
			better: map[string]record.Better{"tok/s": "", "sec/op": record.Lower},
		},
		{
			name: "Unit metadata declares tok/s better=higher", input: "Unit tok/s better=higher\n" + rm[0], count: 18,
			want:   []selected{{"Decode/bs=1", "tok/s", 798178}},
			better: map[string]record.Better{"tok/s": record.Higher},
		},
		{
			name: "go test -v output", count: 2,
			input: "=== RUN   BenchmarkVerifyStep\nBenchmarkVerifyStep\nBenchmarkVerifyStep-2   \t     100\t  12.5 ms/verify\t 812.0 tok/s\nPASS\nok  \tx\t1.2s\n",
			want:  []selected{{"VerifyStep", "ms/verify", 12.5}, {"BenchmarkVerifyStep", "tok/s", 812}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples := parseText(t, "gobench", tc.input, nil)
			require.Len(t, samples, tc.count)
			requireSelected(t, samples, tc.want)
			for _, s := range samples {
				if d, ok := tc.better[s.Unit]; ok {
					require.Equal(t, d, s.Better, "better of %s", s.Unit)
				}
				require.False(t, strings.HasPrefix(s.Name, "Benchmark"), s.Name)
			}
		})
	}
}

func TestGoBenchErrors(t *testing.T) {
	rm := sampleParts(t, "go_bench_reportmetric.txt")
	good := "BenchmarkDecode/bs=1-2   \t    2000\t      1254 ns/op\t    798178 tok/s\n"
	runErrorCases(t, []errorCase{
		{name: "truncated inside a result line", format: "gobench",
			input: good + "BenchmarkDecode/bs=8-2   \t    2000\t      8245 ns/op\t  1.000\n",
			is:    ErrSyntax, mention: []string{"<input>:2:", "missing units", "8245 ns/op"}},
		{name: "truncated after the padded name", format: "gobench", input: good + "BenchmarkDecode/bs=8-2   \t",
			is: ErrSyntax, mention: []string{"<input>:2:", "missing iteration count", "BenchmarkDecode/bs=8-2"}},
		{name: "truncated after the -v name line", format: "gobench", input: good + "BenchmarkDecode/bs=8\n",
			is: ErrSyntax, mention: []string{"<input>:2:", "truncated", "BenchmarkDecode/bs=8"}},
		{name: "value is not a number", format: "gobench", input: "BenchmarkX 10 fast ns/op\n",
			is: ErrSyntax, mention: []string{"<input>:1:", "parsing measurement", "BenchmarkX 10 fast ns/op"}},
		{name: "garbage", format: "gobench", input: "hello world\n\x00\x01 binary junk\n",
			is: ErrNoResults, mention: []string{"hello world"}},
		{name: "empty output", format: "gobench", input: "", is: ErrNoResults, mention: []string{"output is empty"}},
		{name: "benchstat table is not results", format: "gobench", input: rm[1], is: ErrNoResults, mention: []string{"goos: linux"}},
		{name: "no test files", format: "gobench", input: "?   \texample.com/x\t[no test files]\n",
			is: ErrNoResults, mention: []string{"[no test files]"}},
		{name: "build failure", format: "gobench",
			input: "# example.com/x\n./x.go:3:2: undefined: foo\nFAIL\texample.com/x [build failed]\nFAIL\n",
			is:    ErrBenchmarkFailed, mention: []string{"./x.go:3:2: undefined: foo"}},
		{name: "--- FAIL after results", format: "gobench",
			input: good + "--- FAIL: BenchmarkDecode/bs=8\n    x_test.go:12: wrong output\nFAIL\nexit status 1\n",
			is:    ErrBenchmarkFailed, mention: []string{"<input>:2:", "--- FAIL: BenchmarkDecode/bs=8"}},
		{name: "panic on the result line", format: "gobench", input: good + "BenchmarkDecode/bs=8-2   \tpanic: boom\n\ngoroutine 7 [running]:\n",
			is: ErrBenchmarkFailed, mention: []string{"<input>:2:", "panic: boom"}},
		{name: "panic", format: "gobench", input: good + "panic: runtime error: index out of range [3]\n\ngoroutine 7 [running]:\n",
			is: ErrBenchmarkFailed, mention: []string{"panic: runtime error"}},
		{name: "file name in messages", format: "gobench", input: "BenchmarkX 10\n", opts: Options{"file": "engine.txt"},
			is: ErrSyntax, mention: []string{"engine.txt:1:", "missing measurements"}},
	})
}

func TestGoBenchConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		output string
		want   map[string]string
	}{
		{name: "go test's own lines", output: "goos: linux\ngoarch: amd64\npkg: example.com/m\ncpu: AMD EPYC 9654\nBenchmarkX-8 10 5 ns/op\nPASS\nok  \texample.com/m\t1.2s\n",
			want: map[string]string{"goos": "linux", "goarch": "amd64", "pkg": "example.com/m", "cpu": "AMD EPYC 9654"}},
		{name: "a Python benchmark's software", output: "torch: 2.11.0+cu128\r\ncuda: 12.8\nnccl: 2.27.3\ngpu: NVIDIA H200\nBenchmarkDecode 1 119.7 tok/s\n",
			want: map[string]string{"torch": "2.11.0+cu128", "cuda": "12.8", "nccl": "2.27.3", "gpu": "NVIDIA H200"}},
		{name: "the first value of a key counts", output: "torch: 2.11.0\ntorch: 1.13\n", want: map[string]string{"torch": "2.11.0"}},
		{name: "not configuration", output: "Torch: 2\nmy key: v\nhttp://x\n  indented: no\nBenchmarkX 1 2 tok/s\n", want: nil},
		{name: "a key with no value", output: "note:\n", want: map[string]string{"note": ""}},
		{name: "a long value is cut", output: "blob: " + strings.Repeat("x", 300) + "\n", want: map[string]string{"blob": strings.Repeat("x", 200) + "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, GoBenchConfig([]byte(tc.output)))
		})
	}
}
