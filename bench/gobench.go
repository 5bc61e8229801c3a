package bench

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/perfbot/perfbot/record"
	"golang.org/x/perf/benchfmt"
)

// failureLine matches the lines by which go test reports that a benchmark
// (or its package) failed. A panic can start mid-line, right after the
// benchmark name that go test printed before running it.
var failureLine = regexp.MustCompile(`^\s*(--- FAIL|FAIL(\s|$))|(^|\s)(panic:|fatal error:)`)

// parseGoBench reads the Go benchmark format
// (https://go.dev/design/14313-benchmark-format) through benchfmt.
//
// Values keep the units benchfmt gives them: custom units (tok/s,
// ms/verify, us/op) as written, and units holding "ns" or "MB" tidied to
// base units (ns/op becomes sec/op, MB/s becomes B/s). Select converts
// back when asked for the written unit. Names omit the "Benchmark" prefix
// and keep sub-benchmark parts and the -N GOMAXPROCS suffix.
//
// Unlike benchfmt, which skips malformed lines, any syntax error is an
// error here: a half-written result line means the run was cut short, and
// averaging what is left would hide it.
func parseGoBench(r io.Reader, file string, _ Options) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	var failures []string
	firstFailure := 0
	var nonFinite, syntaxErrLong error
	for i, l := range lines {
		if failureLine.MatchString(l) {
			if firstFailure == 0 {
				firstFailure = i + 1
			}
			failures = append(failures, strings.TrimSpace(l))
		}
		if nonFinite == nil {
			nonFinite = nonFiniteResult(file, i+1, l)
		}
	}

	// benchfmt reads lines of up to 64 KiB and stops at a longer one. No
	// result line is that long: a long line is a progress bar redrawn
	// with \r, or a dump, and is left out (blank, to keep the numbering).
	results := make([]string, len(lines))
	for i, l := range lines {
		if len(l) < maxGoBenchLine {
			results[i] = l
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(l), "Benchmark") && syntaxErrLong == nil {
			syntaxErrLong = &OutputError{File: file, Line: i + 1, Text: quoted(strings.TrimSpace(l)),
				Msg: fmt.Sprintf("benchmark line of %d bytes, too long to be a result", len(l)), Err: ErrSyntax}
		}
	}
	br := benchfmt.NewReader(strings.NewReader(strings.Join(results, "\n")), file)
	type result struct {
		name  string
		value benchfmt.Value
	}
	var values []result
	var syntaxErr error
	for syntaxErr == nil && br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			syntaxErr = syntaxError(rec, lines)
		case *benchfmt.Result:
			if len(rec.Name) == 0 {
				// "Benchmark 1 2 ns/op": a result no metric can select,
				// which go test never prints.
				syntaxErr = namelessResult(file, lines)
				continue
			}
			// The Reader reuses rec; copy out what we keep.
			for _, v := range rec.Values {
				values = append(values, result{rec.Name.String(), v})
			}
		}
	}
	if err := br.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}

	// A failure explains a malformed line ("BenchmarkX-2 \tpanic: ..."),
	// so it is reported first.
	if len(failures) > 0 {
		if len(values) == 0 && syntaxErr == nil {
			e := noResults(file, lines, "benchmark results")
			e.Err = ErrBenchmarkFailed
			return nil, e
		}
		return nil, &OutputError{File: file, Line: firstFailure, Text: strings.Join(first(failures, 3), " | "),
			Msg: "benchmark reported a failure", Err: ErrBenchmarkFailed}
	}
	// benchfmt reads NaN and Inf as values, and 1e400 as a syntax error.
	if nonFinite != nil {
		return nil, nonFinite
	}
	if syntaxErr == nil {
		syntaxErr = syntaxErrLong
	}
	if syntaxErr != nil {
		return nil, syntaxErr
	}
	if len(values) == 0 {
		return nil, noResults(file, lines, "benchmark results")
	}
	if n, last := lastNonEmpty(lines); n > 0 && isBareBenchmarkName(last) {
		return nil, &OutputError{File: file, Line: n, Text: strings.TrimSpace(last),
			Msg: "output ends while a benchmark was running (truncated?)", Err: ErrSyntax}
	}

	units := br.Units()
	samples := make([]record.Sample, len(values))
	for i, res := range values {
		samples[i] = record.Sample{Name: res.name, Unit: res.value.Unit, Value: res.value.Value,
			Better: direction(units.GetBetter(res.value.Unit))}
	}
	return samples, nil
}

// maxGoBenchLine is the length from which a line is not read as a result:
// half of bufio.MaxScanTokenSize, benchfmt's limit.
const maxGoBenchLine = bufio.MaxScanTokenSize / 2

// nonFiniteResult returns the notFinite error for a result line (name,
// iterations, then value-unit pairs) that holds a NaN or infinite value.
func nonFiniteResult(file string, n int, line string) error {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return nil
	}
	for i := 2; i+1 < len(f); i += 2 {
		if v, err := parseNumber(f[i]); err == nil {
			if err := notFinite(file, n, strings.TrimSpace(line), f[0]+" "+f[i+1], v); err != nil {
				return err
			}
		}
	}
	return nil
}

// namelessResult is the ErrSyntax error for the first result line whose
// benchmark has no name.
func namelessResult(file string, lines []string) error {
	n := 0
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Benchmark" {
			n = i + 1
			break
		}
	}
	text := ""
	if n > 0 {
		text = strings.TrimSpace(lines[n-1])
	}
	return &OutputError{File: file, Line: n, Text: text, Msg: "result line without a benchmark name", Err: ErrSyntax}
}

// syntaxError turns a benchfmt syntax error into an OutputError quoting
// the line.
func syntaxError(e *benchfmt.SyntaxError, lines []string) error {
	text := ""
	if e.Line >= 1 && e.Line <= len(lines) {
		text = strings.TrimSpace(lines[e.Line-1])
	}
	return &OutputError{File: e.FileName, Line: e.Line, Text: text, Msg: e.Msg, Err: ErrSyntax}
}

// direction converts benchfmt's GetBetter convention (+1 higher, -1 lower,
// 0 unknown) to a Direction.
func direction(better int) record.Better {
	switch {
	case better > 0:
		return record.Higher
	case better < 0:
		return record.Lower
	}
	return ""
}

// isBareBenchmarkName reports whether line is a benchmark name with
// nothing after it: what go test prints just before it runs a benchmark.
func isBareBenchmarkName(line string) bool {
	f := strings.Fields(line)
	return len(f) == 1 && strings.HasPrefix(f[0], "Benchmark")
}

// lastNonEmpty returns the last non-blank line and its 1-based number, or
// 0 when all lines are blank.
func lastNonEmpty(lines []string) (int, string) {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return i + 1, lines[i]
		}
	}
	return 0, ""
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// configLine is a configuration line of the Go benchmark format: a key
// that starts with a lower-case letter and holds no space or upper-case
// letter, a colon, and the value.
var configLine = regexp.MustCompile(`^([a-z][^\sA-Z:]*):(?:\s+(.*))?$`)

// Bounds on what GoBenchConfig keeps: configuration says what software a
// benchmark ran on in a few short lines, and output that holds thousands
// is something else.
const (
	maxConfigKeys  = 64
	maxConfigValue = 200
)

// GoBenchConfig returns the configuration lines of Go benchmark format
// output ("goos: linux", "torch: 2.11.0"), the first value of each key.
// Benchmarks that are not Go's print their own (a Python benchmark its
// torch, CUDA and NCCL versions), and perfbot keeps them with the run.
func GoBenchConfig(output []byte) map[string]string {
	var cfg map[string]string
	for line := range strings.SplitSeq(string(output), "\n") {
		if len(cfg) == maxConfigKeys {
			break
		}
		if len(line) >= maxGoBenchLine {
			continue
		}
		m := configLine.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		if cfg == nil {
			cfg = map[string]string{}
		}
		if _, ok := cfg[m[1]]; !ok {
			v := strings.ToValidUTF8(strings.TrimSpace(m[2]), "\uFFFD")
			if len(v) > maxConfigValue {
				v = strings.ToValidUTF8(v[:maxConfigValue], "") + "…"
			}
			cfg[m[1]] = v
		}
	}
	return cfg
}
