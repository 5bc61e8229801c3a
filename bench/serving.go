package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// Serving benchmarks (sglang.bench_serving, vllm bench serve) print a
// summary block and can save the same numbers as JSON. Both forms give
// samples with the JSON key as name ("output_throughput",
// "median_ttft_ms", "accept_length"), so a metric selects the same name
// whichever form the benchmark step saves. Text labels without a known key
// are snake-cased ("Mean E2E Latency (ms)" becomes "mean_e2e_latency_ms").
//
// Units come from the name: "_ms" → "ms", request rates → "req/s", other
// throughputs → "tok/s", duration → "s", percentages → "%", and "value" for
// counts and ratios such as accept length.

// servingLabels maps summary labels (lower case, unit included) to the
// JSON keys of the same tool.
var servingLabels = map[string]map[string]string{
	"sglang-serving": {
		"successful requests":                  "completed",
		"benchmark duration (s)":               "duration",
		"total input tokens":                   "total_input_tokens",
		"total input text tokens":              "total_input_text_tokens",
		"total input vision tokens":            "total_input_vision_tokens",
		"total generated tokens":               "total_output_tokens",
		"total generated tokens (retokenized)": "total_output_tokens_retokenized",
		"request throughput (req/s)":           "request_throughput",
		"input token throughput (tok/s)":       "input_throughput",
		"output token throughput (tok/s)":      "output_throughput",
		"peak output token throughput (tok/s)": "max_output_tokens_per_s",
		"peak concurrent requests":             "max_concurrent_requests",
		"total token throughput (tok/s)":       "total_throughput",
		"total throughput (tok/s)":             "total_throughput",
		"accept length":                        "accept_length",
		"max request concurrency":              "max_concurrency",
		"traffic request rate":                 "request_rate",
		"last generation throughput (tok/s)":   "last_gen_throughput",
	},
	"vllm-serve": {
		"successful requests":                  "completed",
		"failed requests":                      "failed",
		"maximum request concurrency":          "max_concurrency",
		"request rate configured (rps)":        "request_rate",
		"benchmark duration (s)":               "duration",
		"total input tokens":                   "total_input_tokens",
		"total generated tokens":               "total_output_tokens",
		"request throughput (req/s)":           "request_throughput",
		"request goodput (req/s)":              "request_goodput",
		"output token throughput (tok/s)":      "output_throughput",
		"peak output token throughput (tok/s)": "max_output_tokens_per_s",
		"peak concurrent requests":             "max_concurrent_requests",
		"total token throughput (tok/s)":       "total_token_throughput",
		"rtfx (inverse real-time factor)":      "rtfx",
		"acceptance rate (%)":                  "spec_decode_acceptance_rate",
		"acceptance length":                    "spec_decode_acceptance_length",
		"drafts":                               "spec_decode_num_drafts",
		"draft tokens":                         "spec_decode_draft_tokens",
		"accepted tokens":                      "spec_decode_accepted_tokens",
		"per-position acceptance (%)":          "spec_decode_per_position_acceptance_rates",
	},
}

var (
	summaryStart = regexp.MustCompile(`^=+ .*Benchmark Result =+$`)
	summaryEnd   = regexp.MustCompile(`^=+$`)
	summaryRule  = regexp.MustCompile(`^-+.*-+$`)
	summaryLine  = regexp.MustCompile(`^(\s*)([^:]+):\s*(\S*)`)
	nonWord      = regexp.MustCompile(`[^a-z0-9]+`)
)

func parseSGLangServing(r io.Reader, file string, _ Options) ([]record.Sample, error) {
	return parseServing(r, file, "sglang-serving")
}

func parseVLLMServe(r io.Reader, file string, _ Options) ([]record.Sample, error) {
	return parseServing(r, file, "vllm-serve")
}

// parseServing reads either a summary printed by a serving benchmark or
// its JSON result file (one object, or one object per line as written by
// --output-file / --append-result). Records that report failed requests
// are errors: their latencies and throughputs cover only part of the load
// and cannot be compared with a clean run.
func parseServing(r io.Reader, file, tool string) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	var samples []record.Sample
	if looksLikeJSON(lines) {
		samples, err = servingJSON(lines, file)
	} else {
		samples, err = servingText(lines, file, servingLabels[tool])
	}
	if err != nil {
		return nil, err
	}
	if len(samples) == 0 {
		return nil, pythonFailure(file, lines, "serving benchmark summary")
	}
	return samples, nil
}

// servingText reads every "==== ... Benchmark Result ====" block.
func servingText(lines []string, file string, labels map[string]string) ([]record.Sample, error) {
	var samples []record.Sample
	var nonFinite error
	in, prefix, start := false, "", 0 // start: line of the current block's title
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && summaryStart.MatchString(trimmed):
			in, prefix, start = true, "", i+1
			continue
		case !in:
			continue
		case summaryEnd.MatchString(trimmed):
			in = false
			continue
		case summaryRule.MatchString(trimmed) || trimmed == "":
			continue
		}
		m := summaryLine.FindStringSubmatch(line)
		if m == nil {
			// Copies of the summary in documents often lose the
			// closing line; any other line ends the block too.
			in = false
			continue
		}
		indent, label, value := m[1], strings.ToLower(strings.TrimSpace(m[2])), m[3]
		if value == "" {
			// A heading for the indented lines below it, e.g.
			// "Per-position acceptance (%):" then "  Position 0: 36.59".
			prefix = servingName(label, labels)
			continue
		}
		name := servingName(label, labels)
		if name == "" {
			continue // a label of punctuation names nothing
		}
		if indent != "" && prefix != "" {
			name = prefix + "/" + name
		} else {
			prefix = ""
		}
		v, err := parseNumber(value)
		if err != nil || (!isFinite(v) && isServingSetting(name)) {
			continue // settings such as "Backend: sglang" or "Traffic request rate: inf"
		}
		if nonFinite == nil {
			nonFinite = notFinite(file, i+1, trimmed, name, v)
		}
		samples = append(samples, servingSample(name, v))
	}
	// Failed requests explain NaN latencies, so they are reported first.
	if err := servingFailed(samples, file, start); err != nil {
		return nil, err
	}
	if nonFinite != nil {
		return nil, nonFinite
	}
	return samples, nil
}

// isServingSetting reports whether a serving benchmark's value is a setting
// that may be infinite: the request rate, whose default "inf" sends every
// request at once.
func isServingSetting(name string) bool { return name == "request_rate" }

// servingName returns the sample name for a summary label.
func servingName(label string, labels map[string]string) string {
	if key, ok := labels[label]; ok {
		return key
	}
	label = strings.ReplaceAll(label, "(ms)", "ms")
	label = strings.ReplaceAll(label, "(%)", "pct")
	if i := strings.IndexByte(label, '('); i >= 0 {
		label = label[:i]
	}
	return strings.Trim(nonWord.ReplaceAllString(label, "_"), "_")
}

// servingSample gives a serving metric its unit and direction.
func servingSample(name string, v float64) record.Sample {
	base := name
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = name[:i]
	}
	s := record.Sample{Name: name, Value: v, Unit: "value"}
	switch {
	case strings.HasSuffix(base, "_ms"):
		s.Unit, s.Better = "ms", record.Lower
	case strings.HasSuffix(base, "_decode_steps"):
		// A time counted in plain decode steps measured beside it.
		s.Unit, s.Better = "decode-steps", record.Lower
	case strings.HasPrefix(base, "request_goodput"), base == "request_throughput", base == "request_rate":
		s.Unit, s.Better = "req/s", record.Higher
	case strings.HasSuffix(base, "throughput"), strings.HasSuffix(base, "_per_s"):
		s.Unit, s.Better = "tok/s", record.Higher
	case base == "duration":
		s.Unit, s.Better = "s", record.Lower
	case strings.Contains(base, "acceptance_rate"), strings.HasSuffix(base, "_pct"):
		s.Unit, s.Better = "%", record.Higher
	case strings.Contains(base, "accept"):
		s.Better = record.Higher
	}
	if base == "request_rate" {
		s.Better = "" // a setting, not a result
	}
	return s
}

// servingFailed returns an error when the samples of one record say that
// requests failed.
func servingFailed(samples []record.Sample, file string, line int) error {
	for _, s := range samples {
		if (s.Name == "completed" && s.Value == 0) || (s.Name == "failed" && s.Value > 0) {
			return &OutputError{File: file, Line: line, Msg: fmt.Sprintf("%s = %g: requests failed", s.Name, s.Value), Err: ErrBenchmarkFailed}
		}
	}
	return nil
}

// servingJSON reads JSON result records: every top-level number is a
// sample named by its key. Lists (per-request details) and strings
// (metadata) are skipped. A number that is NaN or infinite fails the
// benchmark, unless it is the request rate (a setting).
func servingJSON(lines []string, file string) ([]record.Sample, error) {
	docs, err := decodeJSONObjects(lines, file)
	if err != nil {
		return nil, err
	}
	var samples []record.Sample
	for _, d := range docs {
		obj := d.obj
		var rec []record.Sample
		var nonFinite error
		for _, k := range sortedKeys(obj) {
			v, ok := jsonNumber(obj[k])
			name := strings.TrimSuffix(k, ":")
			if !ok || name == "" || (!isFinite(v) && isServingSetting(name)) {
				continue
			}
			if nonFinite == nil && !isFinite(v) {
				n, text := nonFiniteKeyLine(lines, d.line, k)
				nonFinite = notFinite(file, n, text, name, v)
			}
			rec = append(rec, servingSample(name, v))
		}
		// Failed requests explain NaN latencies, so they are reported first.
		if err := servingFailed(rec, file, d.line); err != nil {
			return nil, err
		}
		if nonFinite != nil {
			return nil, nonFinite
		}
		samples = append(samples, rec...)
	}
	return samples, nil
}

// jsonObject is one JSON object of a stream and the line it starts on.
type jsonObject struct {
	obj  map[string]any
	line int
}

// resultKey is a number a result file holds under key, with its unit and
// direction.
type resultKey struct {
	key, unit string
	better    record.Better
}

// keySamples reads keys from the result object o, each as a sample named
// prefix + key; a key o lacks is left out, and one that is not finite is
// an error naming its line among lines.
func keySamples(o jsonObject, keys []resultKey, prefix string, lines []string, file string) ([]record.Sample, error) {
	var samples []record.Sample
	for _, k := range keys {
		v, ok := jsonNumber(o.obj[k.key])
		if !ok {
			continue
		}
		if !isFinite(v) {
			n, text := nonFiniteKeyLine(lines, o.line, k.key)
			return nil, notFinite(file, n, text, k.key, v)
		}
		samples = append(samples, record.Sample{Name: prefix + k.key, Unit: k.unit, Value: v, Better: k.better})
	}
	return samples, nil
}

// decodeJSONObjects is decodeJSONStream for results that are objects
// (one a configuration, or one document): any other value is an error
// naming its line.
func decodeJSONObjects(lines []string, file string) ([]jsonObject, error) {
	docs, err := decodeJSONStream(lines, file)
	if err != nil {
		return nil, err
	}
	out := make([]jsonObject, 0, len(docs))
	for _, d := range docs {
		obj, ok := d.value.(map[string]any)
		if !ok {
			return nil, &OutputError{File: file, Line: d.line, Msg: fmt.Sprintf("expected a JSON object, found %T", d.value), Err: ErrSyntax}
		}
		out = append(out, jsonObject{obj: obj, line: d.line})
	}
	return out, nil
}

// jsonDoc is one JSON value of a stream and the line it starts on.
type jsonDoc struct {
	value any
	line  int
}

// decodeJSONStream decodes one or more JSON values (a document, or JSON
// lines). Lines starting with "#" are skipped, and Python's bare
// Infinity, -Infinity and NaN (json.dumps writes them; RFC 8259 has no
// such tokens) are read as the strings "Infinity", "-Infinity" and "NaN",
// which jsonNumber reads as those numbers.
func decodeJSONStream(lines []string, file string) ([]jsonDoc, error) {
	var buf bytes.Buffer
	var lineStarts []int // offset in buf where each line begins
	for _, l := range lines {
		lineStarts = append(lineStarts, buf.Len())
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			buf.WriteByte('\n')
			continue
		}
		buf.WriteString(pythonJSONConstants(l))
		buf.WriteByte('\n')
	}
	lineAt := func(off int64) int {
		return sort.SearchInts(lineStarts, int(off)+1)
	}
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.UseNumber()
	var docs []jsonDoc
	for {
		start := lineAt(skipSpace(buf.Bytes(), dec.InputOffset()))
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			// A syntax error's offset counts from the start of the
			// stream; a value cut short ends at the last line.
			n := len(lines)
			var se *json.SyntaxError
			if errors.As(err, &se) {
				n = lineAt(se.Offset - 1)
			}
			if n < 1 {
				n = 1
			}
			if n > len(lines) {
				n = len(lines)
			}
			return nil, &OutputError{File: file, Line: n, Text: strings.TrimSpace(lines[n-1]),
				Msg: fmt.Sprintf("invalid JSON: %v", err), Err: ErrSyntax}
		}
		docs = append(docs, jsonDoc{v, start})
	}
}

// skipSpace returns the offset of the first non-space byte at or after
// off.
func skipSpace(b []byte, off int64) int64 {
	for off < int64(len(b)) && (b[off] == ' ' || b[off] == '\n' || b[off] == '\t' || b[off] == '\r') {
		off++
	}
	return off
}

// pythonJSONConstants quotes Infinity, -Infinity and NaN outside strings.
func pythonJSONConstants(line string) string {
	if !strings.Contains(line, "Infinity") && !strings.Contains(line, "NaN") {
		return line
	}
	var b strings.Builder
	inString, escaped := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		rest := line[i:]
		switch {
		case c == '"':
			inString = true
		case strings.HasPrefix(rest, "-Infinity"):
			b.WriteString(`"-Infinity"`)
			i += len("-Infinity") - 1
			continue
		case strings.HasPrefix(rest, "Infinity"):
			b.WriteString(`"Infinity"`)
			i += len("Infinity") - 1
			continue
		case strings.HasPrefix(rest, "NaN"):
			b.WriteString(`"NaN"`)
			i += len("NaN") - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// jsonNumber returns v as a float64 when it is a number: a JSON number (one
// too large for a float64 is infinite), or a string that spells NaN or an
// infinity, which is how Python's bare tokens arrive (see
// decodeJSONStream) and how nccl-tests -J ("nan") and vLLM ("inf") write
// them. Other strings are not numbers.
func jsonNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := parseNumber(string(x))
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err == nil && !isFinite(f) {
			return f, true
		}
	}
	return 0, false
}

// nonFiniteKeyLine finds where a NaN or infinite value of key was written:
// the first line from line from on where the key is followed by a value
// that reads as one (the key can repeat, in the rows of an array), and
// the key with that value, to quote. A document on one line (JSON lines)
// can be long; the quote stays short. Without such a line it falls back to
// the document's first line.
func nonFiniteKeyLine(lines []string, from int, key string) (int, string) {
	quoted := strconv.Quote(key)
	for n := max(from, 1); n <= len(lines); n++ {
		line := lines[n-1]
		for i := strings.Index(line, quoted); i >= 0; {
			entry := line[i:]
			if end := strings.IndexAny(entry[len(quoted):], ",}]"); end >= 0 {
				entry = entry[:len(quoted)+end]
			}
			_, value, _ := strings.Cut(entry[len(quoted):], ":")
			if v, err := parseNumber(strings.Trim(strings.TrimSpace(value), `"`)); err == nil && !isFinite(v) {
				return n, strings.TrimSpace(entry)
			}
			next := strings.Index(line[i+len(quoted):], quoted)
			if next < 0 {
				break
			}
			i += len(quoted) + next
		}
	}
	n := min(max(from, 1), len(lines))
	return n, strings.TrimSpace(lines[n-1])
}

// looksLikeJSON reports whether the first line that is not blank or a
// "#" comment starts a JSON object or array.
func looksLikeJSON(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return t[0] == '{' || t[0] == '['
	}
	return false
}

// pythonFailure builds the "no results" error for the Python tools: a
// traceback's last line says more than the first lines of the output.
func pythonFailure(file string, lines []string, what string) error {
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "Traceback (most recent call last)") {
			n, last := lastNonEmpty(lines[i:])
			return &OutputError{File: file, Line: i + n, Text: strings.TrimSpace(last),
				Msg: "no " + what + " found; the tool raised an exception", Err: ErrBenchmarkFailed}
		}
	}
	return noResults(file, lines, what)
}
