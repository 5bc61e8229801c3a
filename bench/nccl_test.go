package bench

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/record"
	"github.com/stretchr/testify/require"
)

const ncclHeader = `#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
`

func TestNCCLTestsSamples(t *testing.T) {
	parts := sampleParts(t, "nccl_tests_all_reduce_perf.txt")
	require.Len(t, parts, 2)
	tests := []struct {
		name  string
		input string
		count int
		want  []selected
	}{
		{name: "16xH100 older header, integer times", input: parts[0], count: 31*2*3 + 1, want: []selected{
			{"size=134217728/out-of-place", "busbw-GB/s", 152.32},
			{"size=134217728/in-place", "us", 1636.7},
			{"size=2147483648/out-of-place", "us", 12646},
			{"size=8589934592/in-place", "algbw-GB/s", 179.92},
			{"avg", "busbw-GB/s", 70.742},
		}},
		{name: "16xB200 nccl-tests 2.17.6", input: parts[1], count: 29*2*3 + 1, want: []selected{
			{"size=2147483648/in-place", "busbw-GB/s", 702.91},
			{"size=8/out-of-place", "us", 36.50},
			{"avg", "busbw-GB/s", 137.179},
		}},
		{name: "two complete runs give two samples per row", input: parts[1] + "\n" + parts[1], count: 2 * (29*2*3 + 1), want: []selected{
			{"size=2147483648/in-place", "busbw-GB/s", 702.91},
		}},
		{name: "N/A checks and exponent times", count: 7, input: ncclHeader +
			"   536870912     134217728     float     sum      -1  1.2e+05    4.47    8.38    N/A  1.1e+05    4.88    9.15    N/A\n" +
			"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 8.765\n",
			want: []selected{{"size=536870912/out-of-place", "us", 120000}, {"size=536870912/in-place", "busbw-GB/s", 9.15}}},
		{name: "several data types name the type", count: 13, input: ncclHeader +
			"        1024           256     float     sum      -1    45.33    0.02    0.04       0    37.98    0.03    0.05       0\n" +
			"        1024           512      half     sum      -1    40.00    0.03    0.05       0    38.00    0.03    0.05       0\n" +
			"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.05\n",
			want: []selected{{"size=1024/type=half/out-of-place", "us", 40}, {"size=1024/type=float/in-place", "us", 37.98}}},
		{name: "old layout without root and with error column", count: 7, input: "#\n" +
			"#                                                 out-of-place                    in-place\n" +
			"#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n" +
			"     1048576        262144   float     sum    51.20   20.48   38.40  0e+00    50.10   20.93   39.24  0e+00\n" +
			"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 38.82\n",
			want: []selected{{"size=1048576/out-of-place", "busbw-GB/s", 38.40}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples := parseText(t, "nccl-tests", tc.input, nil)
			require.Len(t, samples, tc.count)
			requireSelected(t, samples, tc.want)
			for _, s := range samples {
				want := record.Higher
				if s.Unit == "us" {
					want = record.Lower
				}
				require.Equal(t, want, s.Better, "%s %s", s.Name, s.Unit)
			}
		})
	}
}

func TestNCCLTestsErrors(t *testing.T) {
	parts := sampleParts(t, "nccl_tests_all_reduce_perf.txt")
	row := "        8192          2048     float     sum      -1    42.13    0.19    0.36       0    41.47    0.20    0.37       0\n"
	footer := "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.365\n"
	runErrorCases(t, []errorCase{
		{name: "header printed by each rank (mpirun without MPI=1)", format: "nccl-tests",
			input: "# nThread 1 nGpus 1 minBytes 8 maxBytes 8192\n" + ncclHeader + "# nThread 1 nGpus 1 minBytes 8 maxBytes 8192\n" + ncclHeader + row + row + footer + footer,
			is:    ErrBenchmarkFailed, mention: []string{"<input>:7:", "MPI=1", "size         count"}},
		{name: "wrong values", format: "nccl-tests", input: ncclHeader + strings.Replace(row, "0.37       0", "0.37       3", 1) + footer,
			is: ErrBenchmarkFailed, mention: []string{"<input>:4:", "in-place result has 3 wrong values"}},
		{name: "out of bounds values", format: "nccl-tests", input: ncclHeader + row + "# Out of bounds values : 2 FAILED\n# Avg bus bandwidth    : 0.365\n",
			is: ErrBenchmarkFailed, mention: []string{"Out of bounds values : 2 FAILED"}},
		{name: "NCCL failure", format: "nccl-tests", input: ncclHeader + "node1: Test NCCL failure all_reduce.cu:44 'unhandled system error'\n",
			is: ErrBenchmarkFailed, mention: []string{"Test NCCL failure all_reduce.cu:44"}},
		{name: "truncated before the footer", format: "nccl-tests", input: ncclHeader + row + row,
			is: ErrSyntax, mention: []string{"truncated", "<input>:5:"}},
		{name: "truncated row", format: "nccl-tests", input: ncclHeader + "        8192          2048     float     sum      -1    42.13    0.19\n",
			is: ErrSyntax, mention: []string{"row has 7 fields", "13"}},
		{name: "rows without a header", format: "nccl-tests", input: row + footer, is: ErrSyntax, mention: []string{"before any column header"}},
		{name: "only the preamble", format: "nccl-tests", input: strings.Split(parts[0], "#                  ")[0],
			is: ErrNoResults, mention: []string{"## NCCL TEST RESULT"}},
		{name: "empty", format: "nccl-tests", input: "\n\n", is: ErrNoResults},
	})
}
