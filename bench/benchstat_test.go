package bench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/record"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func TestWriteBenchstat(t *testing.T) {
	rows := []BenchstatRow{
		{Commit: "3f2a9c1", Name: "VerifyStep/k=3", Unit: "tok/s", Value: 812.5, Better: record.Higher},
		{Commit: "3f2a9c1", Name: "VerifyStep/k=3", Unit: "tok/s", Value: 815},
		{Commit: "3f2a9c1", Name: "BenchmarkAllReduce", Unit: "us", Value: 1652.2},
		{Commit: "9b0e7d4", Name: "VerifyStep/k=3", Unit: "tok/s", Value: 692.25, Better: record.Higher},
		{Commit: "9b0e7d4", Name: "AllReduce", Unit: "us", Value: 1e6},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteBenchstat(&buf, rows))

	golden := filepath.Join("testdata", "benchstat.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), buf.String())

	// Read it back the way benchstat does.
	r := benchfmt.NewReader(&buf, "out")
	var got []BenchstatRow
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("syntax error in written output: %v", rec)
		case *benchfmt.Result:
			require.Len(t, rec.Values, 1)
			got = append(got, BenchstatRow{Commit: rec.GetConfig("commit"), Name: rec.Name.String(),
				Unit: rec.Values[0].Unit, Value: rec.Values[0].Value})
		}
	}
	require.NoError(t, r.Err())
	require.Equal(t, []BenchstatRow{
		{Commit: "3f2a9c1", Name: "VerifyStep/k=3", Unit: "tok/s", Value: 812.5},
		{Commit: "3f2a9c1", Name: "VerifyStep/k=3", Unit: "tok/s", Value: 815},
		{Commit: "3f2a9c1", Name: "AllReduce", Unit: "us", Value: 1652.2},
		{Commit: "9b0e7d4", Name: "VerifyStep/k=3", Unit: "tok/s", Value: 692.25},
		{Commit: "9b0e7d4", Name: "AllReduce", Unit: "us", Value: 1e6},
	}, got)
	require.Equal(t, 1, r.Units().GetBetter("tok/s"))
}

func TestWriteBenchstatRejects(t *testing.T) {
	tests := []struct {
		name string
		row  BenchstatRow
		want string
	}{
		{"empty commit", BenchstatRow{Name: "X", Unit: "u", Value: 1}, "commit"},
		{"commit with newline", BenchstatRow{Commit: "a\nb", Name: "X", Unit: "u", Value: 1}, "one non-empty line"},
		{"name with space", BenchstatRow{Commit: "a", Name: "Avg bus bandwidth", Unit: "u", Value: 1}, "no spaces"},
		{"unit with space", BenchstatRow{Commit: "a", Name: "X", Unit: "GB /s", Value: 1}, "unit"},
		{"NaN", BenchstatRow{Commit: "a", Name: "X", Unit: "u", Value: nan()}, "NaN"},
		{"bad direction", BenchstatRow{Commit: "a", Name: "X", Unit: "u", Value: 1, Better: "up"}, "better"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := WriteBenchstat(&buf, []BenchstatRow{tc.row})
			require.ErrorContains(t, err, tc.want)
			require.Empty(t, buf.String())
		})
	}
	err := WriteBenchstat(&bytes.Buffer{}, []BenchstatRow{
		{Commit: "a", Name: "X", Unit: "u", Value: 1, Better: record.Higher},
		{Commit: "b", Name: "X", Unit: "u", Value: 1, Better: record.Lower},
	})
	require.ErrorContains(t, err, "higher-is-better before")
}

func nan() float64 { z := 0.0; return z / z }
