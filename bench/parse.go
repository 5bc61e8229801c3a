package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// Options are the format-specific settings given to Parse. Keys a format
// does not use are ignored. Recognised keys:
//
//	file     name used in error messages (every format; default "<input>")
//	fields   json: comma-separated "name=dotted.path" pairs
//	pattern  regex: a regular expression with a named group "value" and an
//	         optional named group "name"
//	unit     regex: the unit of the values (required); json: the unit of
//	         every field (default: the field name's suffix, see parseJSON)
//	better   regex, json: "higher" or "lower"
//	allow_failed  openai: failed requests a report may hold (default 0)
type Options = map[string]string

// FormatGoBench is the Go benchmark format's name in configuration.
const FormatGoBench = "gobench"

// parser reads one benchmark output format.
type parser func(r io.Reader, file string, opts Options) ([]record.Sample, error)

// formats lists every format Parse accepts, in the order Formats reports
// them.
var formats = []struct {
	name  string
	parse parser
}{
	{FormatGoBench, parseGoBench},
	{"nccl-tests", parseNCCLTests},
	{"nccl-debug", parseNCCLDebug},
	{"sglang-serving", parseSGLangServing},
	{"sglang-log", parseSGLangLog},
	{"sglang-one-batch", parseSGLangOneBatch},
	{"vllm-throughput", parseVLLMThroughput},
	{"vllm-serve", parseVLLMServe},
	{"openai", parseOpenAI},
	{"prometheus", parsePrometheus},
	{"json", parseJSON},
	{"regex", parseRegex},
}

// Formats returns the names of the formats Parse accepts.
func Formats() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.name
	}
	return names
}

// Parse reads benchmark output in the named format from r and returns
// every value it holds, in the order they appear (Prometheus text: by
// metric name, each metric's series in their order). Output that holds no
// result, or that reports a failed benchmark, is an error; Parse never
// returns an empty slice with a nil error, nor a value that is NaN or
// infinite, nor a rate or time that cannot be (see allPossible).
func Parse(format string, r io.Reader, opts map[string]string) ([]record.Sample, error) {
	file := opts["file"]
	if file == "" {
		file = "<input>"
	}
	for _, f := range formats {
		if f.name != format {
			continue
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("parse %s output: read %s: %w", format, file, err)
		}
		samples, err := f.parse(bytes.NewReader(data), file, opts)
		if err == nil {
			err = allFinite(samples, file)
		}
		if err == nil {
			err = allPossible(format, samples, file, data)
		}
		if err != nil {
			return nil, fmt.Errorf("parse %s output: %w", format, err)
		}
		if len(samples) == 0 {
			// Each parser reports its own "no results" error with the
			// text it saw; this is the backstop.
			return nil, fmt.Errorf("parse %s output: %s: %w", format, file, ErrNoResults)
		}
		return samples, nil
	}
	return nil, fmt.Errorf("unknown benchmark output format %q (valid: %s)", format, strings.Join(Formats(), ", "))
}

// ErrNoResults means the output held no benchmark result at all: a build
// error, "no test files", an empty file or the wrong format.
var ErrNoResults = errors.New("no benchmark results")

// ErrBenchmarkFailed means the output itself reports a failure ("--- FAIL",
// "panic:", a configuration error printed by the benchmark) or a result
// that is NaN or infinite.
var ErrBenchmarkFailed = errors.New("benchmark failed")

// ErrSyntax means a line that should hold a result could not be read.
var ErrSyntax = errors.New("malformed benchmark output")

// OutputError is an error in benchmark output, located at a line and
// quoting it. Err is ErrNoResults, ErrBenchmarkFailed or ErrSyntax, so
// callers can tell a broken benchmark from an unreadable one with
// errors.Is.
type OutputError struct {
	File string
	Line int    // 1-based; 0 when the error is about the whole output
	Text string // the offending line(s), trimmed
	Msg  string
	Err  error
}

func (e *OutputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Text != "" {
		fmt.Fprintf(&b, ": %q", e.Text)
	}
	return b.String()
}

func (e *OutputError) Unwrap() error { return e.Err }

// noResults returns an ErrNoResults OutputError quoting the first
// non-empty lines of the output, which usually say why (a compiler error,
// "no test files", a Python traceback).
func noResults(file string, lines []string, what string) *OutputError {
	const quote = 3
	var first []string
	line := 0
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if line == 0 {
			line = i + 1
		}
		first = append(first, l)
		if len(first) == quote {
			break
		}
	}
	msg := "no " + what + " found"
	if len(first) == 0 {
		msg += " (output is empty)"
	}
	return &OutputError{File: file, Line: line, Text: strings.Join(first, " | "), Msg: msg, Err: ErrNoResults}
}

// readLines reads all of r and splits it into lines without their line
// endings. Benchmark outputs are small; holding them lets errors quote
// any line.
func readLines(r io.Reader, file string) ([]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil, nil
	}
	return strings.Split(text, "\n"), nil
}

// parseNumber is strconv.ParseFloat that reads a value too large for a
// float64 as the infinity it rounds to, so that notFinite reports it: a
// benchmark that prints 1e400 printed a value, not a syntax error.
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		return v, nil
	}
	return v, err
}

// isFinite reports whether v is neither NaN nor infinite.
func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// notFinite returns nil for a finite v, and otherwise an ErrBenchmarkFailed
// error at line n quoting text. NaN or an infinity where a result belongs
// means the benchmark divided by zero or measured nothing: the revision's
// benchmark failed. Kept as a sample, the value would be refused by the
// store and the run would count as an infrastructure error.
func notFinite(file string, n int, text, what string, v float64) error {
	if isFinite(v) {
		return nil
	}
	return &OutputError{File: file, Line: n, Text: text,
		Msg: fmt.Sprintf("%s is %v, not a finite number", what, v), Err: ErrBenchmarkFailed}
}

// allFinite is the backstop behind every parser's own check, which quotes
// the line.
func allFinite(samples []record.Sample, file string) error {
	for _, s := range samples {
		if err := notFinite(file, 0, "", s.Name+" "+s.Unit, s.Value); err != nil {
			return err
		}
	}
	return nil
}
