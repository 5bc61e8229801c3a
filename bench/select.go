package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
	"golang.org/x/perf/benchunit"
)

// Select returns the value of the benchmark, row or field sel in unit,
// the median when several samples match (go test -count N).
//
// A name matches sel when it equals sel, with or without a "Benchmark"
// prefix on sel and with or without a trailing -N GOMAXPROCS suffix on the
// name. A sel without "/" also matches the name's top level
// ("VerifyStep" matches "VerifyStep/k=3-2", "up" matches `up{job="x"}`), but only when that top level
// holds a single distinct name; otherwise the choice is ambiguous and
// Select returns an error listing the candidates. Every matching sample
// must have the same full name.
//
// unit is compared as written; when no sample has it, Select converts from
// the tidied unit benchfmt stores (asking for "ns/op" reads "sec/op" and
// multiplies by 1e9). An empty unit selects the only unit the name has.
func Select(samples []record.Sample, sel, unit string) (float64, error) {
	name, err := selectName(samples, sel)
	if err != nil {
		return 0, err
	}
	var units []string
	values := map[string][]float64{}
	for _, s := range samples {
		if s.Name != name {
			continue
		}
		if _, ok := values[s.Unit]; !ok {
			units = append(units, s.Unit)
		}
		values[s.Unit] = append(values[s.Unit], s.Value)
	}
	if unit == "" {
		if len(units) != 1 {
			return 0, fmt.Errorf("select %q: no unit given and %s has %d units (%s)", sel, name, len(units), strings.Join(units, ", "))
		}
		unit = units[0]
	}
	if v, ok := values[unit]; ok {
		return stats.Median(v), nil
	}
	factor, tidy := benchunit.Tidy(1, unit)
	if v, ok := values[tidy]; ok && tidy != unit {
		return stats.Median(v) / factor, nil
	}
	return 0, fmt.Errorf("select %q: %s has no values in %s (units: %s)", sel, name, unit, strings.Join(units, ", "))
}

// selectName resolves sel to exactly one full sample name.
func selectName(samples []record.Sample, sel string) (string, error) {
	if sel == "" {
		return "", fmt.Errorf("select: empty benchmark name")
	}
	names := distinctNames(samples)
	want := []string{sel}
	if trimmed, ok := strings.CutPrefix(sel, "Benchmark"); ok && trimmed != "" {
		want = append(want, trimmed)
	}
	for _, w := range want {
		if slices.Contains(names, w) {
			return w, nil
		}
	}
	var matches []string
	for _, n := range names {
		for _, w := range want {
			if nameMatches(n, w) {
				matches = append(matches, n)
				break
			}
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("select %q: no such benchmark (have: %s)", sel, listNames(names))
	}
	return "", fmt.Errorf("select %q: ambiguous, matches %s; name one of them", sel, listNames(matches))
}

// nameMatches reports whether the full name matches sel under the rules
// of Select (other than exact equality, which the caller checks first).
func nameMatches(name, sel string) bool {
	bare := trimProcs(name)
	if bare == sel || bare == trimProcs(sel) {
		return true
	}
	if strings.ContainsAny(sel, "/{") {
		return false
	}
	// The top level ends at the first sub-benchmark part or, for
	// Prometheus series, at the label set.
	top := bare
	if i := strings.IndexAny(bare, "/{"); i >= 0 {
		top = bare[:i]
	}
	return top == sel
}

// trimProcs removes a trailing -N GOMAXPROCS suffix.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return name
		}
	}
	return name[:i]
}

func distinctNames(samples []record.Sample) []string {
	var names []string
	seen := map[string]bool{}
	for _, s := range samples {
		if !seen[s.Name] {
			seen[s.Name] = true
			names = append(names, s.Name)
		}
	}
	return names
}

// listNames formats names for an error message, cut short when there are
// many (an nccl-tests sweep has dozens of rows).
func listNames(names []string) string {
	const max = 20
	if len(names) == 0 {
		return "none"
	}
	if len(names) > max {
		return strings.Join(names[:max], ", ") + fmt.Sprintf(", … (%d more)", len(names)-max)
	}
	return strings.Join(names, ", ")
}
