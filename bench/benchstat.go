package bench

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perfbot/perfbot/record"
	"golang.org/x/perf/benchfmt"
)

// BenchstatRow is one value of one revision, as WriteBenchstat writes it.
type BenchstatRow struct {
	Commit string
	// Name is the benchmark name without the "Benchmark" prefix; it must
	// not hold spaces.
	Name  string
	Unit  string
	Value float64
	// Better, when set, is written as "Unit <unit> better=<dir>" metadata
	// so that benchstat knows which way the unit improves.
	Better record.Better
}

// WriteBenchstat writes rows in the Go benchmark format, each run of rows
// of one commit preceded by a "commit: <hash>" configuration line, so
// that "benchstat -col commit" compares the commits. Rows are written in
// the order given.
func WriteBenchstat(w io.Writer, rows []BenchstatRow) error {
	bw := benchfmt.NewWriter(w)
	better := map[string]record.Better{}
	for i, row := range rows {
		if err := row.validate(); err != nil {
			return fmt.Errorf("benchstat row %d: %w", i, err)
		}
		if row.Better == "" {
			continue
		}
		if have, ok := better[row.Unit]; ok && have != row.Better {
			return fmt.Errorf("benchstat row %d: unit %s is %s-is-better here and %s-is-better before", i, row.Unit, row.Better, have)
		}
		if _, ok := better[row.Unit]; !ok {
			better[row.Unit] = row.Better
			meta := &benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: row.Unit, Key: "better"},
				OrigUnit: row.Unit, Value: string(row.Better)}
			if err := bw.Write(meta); err != nil {
				return fmt.Errorf("write unit metadata: %w", err)
			}
		}
	}
	for _, row := range rows {
		// A fresh Result each time: Result keeps an index of its
		// configuration that reuse would leave stale.
		res := &benchfmt.Result{
			Config: []benchfmt.Config{{Key: "commit", Value: []byte(row.Commit), File: true}},
			Name:   benchfmt.Name(strings.TrimPrefix(row.Name, "Benchmark")),
			Iters:  1,
			Values: []benchfmt.Value{{Value: row.Value, Unit: row.Unit}},
		}
		if err := bw.Write(res); err != nil {
			return fmt.Errorf("write %s at %s: %w", row.Name, row.Commit, err)
		}
	}
	return nil
}

func (r BenchstatRow) validate() error {
	switch {
	case r.Commit == "" || strings.ContainsAny(r.Commit, "\n\r"):
		return fmt.Errorf("commit %q must be one non-empty line", r.Commit)
	case strings.TrimPrefix(r.Name, "Benchmark") == "" || strings.ContainsAny(r.Name, " \t\n\r"):
		return fmt.Errorf("name %q must be non-empty and hold no spaces", r.Name)
	case r.Unit == "" || strings.ContainsAny(r.Unit, " \t\n\r"):
		return fmt.Errorf("unit %q must be non-empty and hold no spaces", r.Unit)
	case math.IsNaN(r.Value) || math.IsInf(r.Value, 0):
		return fmt.Errorf("value of %s is %v", r.Name, r.Value)
	}
	if _, err := parseBetter(string(r.Better)); err != nil {
		return err
	}
	return nil
}
