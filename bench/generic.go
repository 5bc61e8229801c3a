package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// parseJSON reads one JSON document or several (JSON lines). With
// opts["fields"] = "name=path,name=path" each document gives one sample
// per field, the value at the dotted path ("results.0.bus_bw": object keys
// and array indexes); a missing path or a value that is not a number is an
// error. Without fields, every number in the document is a sample named by
// its dotted path. A value that is NaN or infinite (also when written as
// Python's NaN or as the string "nan", see jsonNumber) fails the benchmark;
// with fields, only the fields are read. opts["unit"] (default "value")
// and opts["better"] apply to every sample.
func parseJSON(r io.Reader, file string, opts Options) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	better, err := parseBetter(opts["better"])
	if err != nil {
		return nil, err
	}
	unit := opts["unit"]
	if unit == "" {
		unit = "value"
	}
	fields, err := parseFields(opts["fields"])
	if err != nil {
		return nil, err
	}
	docs, err := decodeJSONStream(lines, file)
	if err != nil {
		return nil, err
	}
	var samples []record.Sample
	for _, d := range docs {
		values, err := jsonValues(d.value, fields)
		if err != nil {
			return nil, &OutputError{File: file, Line: d.line, Msg: err.Error(), Err: ErrSyntax}
		}
		for _, v := range values {
			if !isFinite(v.value) {
				n, text := nonFiniteKeyLine(lines, d.line, lastKey(v.path))
				return nil, notFinite(file, n, text, v.name, v.value)
			}
			samples = append(samples, record.Sample{Name: v.name, Unit: unit, Value: v.value, Better: better})
		}
	}
	if len(samples) == 0 {
		return nil, noResults(file, lines, "numbers in JSON")
	}
	return samples, nil
}

type jsonField struct{ name, path string }

// jsonValue is a number read from a JSON document.
type jsonValue struct {
	name, path string
	value      float64
}

// jsonValues reads the fields of doc or, without fields, every number in
// it.
func jsonValues(doc any, fields []jsonField) ([]jsonValue, error) {
	var values []jsonValue
	if len(fields) == 0 {
		flattenJSON("", doc, func(path string, v float64) {
			values = append(values, jsonValue{name: path, path: path, value: v})
		})
		return values, nil
	}
	for _, f := range fields {
		v, err := jsonPath(doc, f.path)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.name, err)
		}
		values = append(values, jsonValue{name: f.name, path: f.path, value: v})
	}
	return values, nil
}

// parseFields reads "name=path,name=path".
func parseFields(spec string) ([]jsonField, error) {
	var fields []jsonField
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, path, ok := strings.Cut(item, "=")
		name, path = strings.TrimSpace(name), strings.TrimSpace(path)
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("json fields: %q is not name=path", item)
		}
		fields = append(fields, jsonField{name, path})
	}
	return fields, nil
}

// jsonPath follows a dotted path through objects and arrays.
func jsonPath(v any, path string) (float64, error) {
	cur := v
	for _, key := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[key]
			if !ok {
				return 0, fmt.Errorf("path %s: no key %q (have %s)", path, key, strings.Join(sortedKeys(c), ", "))
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(c) {
				return 0, fmt.Errorf("path %s: %q is not an index of an array of %d", path, key, len(c))
			}
			cur = c[i]
		default:
			return 0, fmt.Errorf("path %s: cannot look up %q in a %s", path, key, jsonKind(cur))
		}
	}
	f, ok := jsonNumber(cur)
	if !ok {
		return 0, fmt.Errorf("path %s: value is a %s, not a number", path, jsonKind(cur))
	}
	return f, nil
}

// lastKey is the last object key of a dotted path ("results.0.bus_bw" →
// "bus_bw"), the text to look for on the value's line.
func lastKey(path string) string {
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i > 0; i-- {
		if _, err := strconv.Atoi(parts[i]); err != nil {
			return parts[i]
		}
	}
	return parts[0]
}

// flattenJSON calls emit for every number in v, in key order.
func flattenJSON(prefix string, v any, emit func(string, float64)) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch c := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(c) {
			flattenJSON(join(k), c[k], emit)
		}
	case []any:
		for i, e := range c {
			flattenJSON(join(strconv.Itoa(i)), e, emit)
		}
	default:
		if f, ok := jsonNumber(v); ok && prefix != "" {
			emit(prefix, f)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// parseRegex applies opts["pattern"] to the whole output. Each match gives
// one sample: the named group "value" is the value, the named group
// "name" (or opts["name"], else "value") the name; opts["unit"] is
// required and opts["better"] optional. Use (?m) for ^ and $ per line.
func parseRegex(r io.Reader, file string, opts Options) ([]record.Sample, error) {
	re, err := regexp.Compile(opts["pattern"])
	if err != nil {
		return nil, fmt.Errorf("regex pattern: %w", err)
	}
	if opts["pattern"] == "" || re.SubexpIndex("value") < 0 {
		return nil, fmt.Errorf("regex pattern %q has no named group (?P<value>...)", opts["pattern"])
	}
	unit := opts["unit"]
	if unit == "" || strings.ContainsAny(unit, " \t") {
		return nil, fmt.Errorf("regex: option unit must be set to a unit without spaces, got %q", unit)
	}
	better, err := parseBetter(opts["better"])
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	text := string(data)
	valueIdx, nameIdx := re.SubexpIndex("value"), re.SubexpIndex("name")
	var samples []record.Sample
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		line := strings.Count(text[:m[0]], "\n") + 1
		raw := text[m[2*valueIdx]:m[2*valueIdx+1]]
		v, err := parseNumber(strings.TrimSpace(raw))
		if err != nil {
			return nil, &OutputError{File: file, Line: line, Text: text[m[0]:m[1]], Msg: fmt.Sprintf("value %q is not a number", raw), Err: ErrSyntax}
		}
		if err := notFinite(file, line, text[m[0]:m[1]], "value", v); err != nil {
			return nil, err
		}
		name := opts["name"]
		if nameIdx >= 0 && m[2*nameIdx] >= 0 {
			name = text[m[2*nameIdx]:m[2*nameIdx+1]]
		}
		if name == "" {
			name = "value"
		}
		samples = append(samples, record.Sample{Name: name, Unit: unit, Value: v, Better: better})
	}
	if len(samples) == 0 {
		lines, _ := readLines(strings.NewReader(text), file)
		return nil, noResults(file, lines, "match of "+strconv.Quote(opts["pattern"]))
	}
	return samples, nil
}

// parseBetter reads an optional "higher" or "lower".
func parseBetter(s string) (record.Better, error) {
	switch record.Better(s) {
	case "", record.Higher, record.Lower:
		return record.Better(s), nil
	}
	return "", fmt.Errorf("option better must be %q or %q, got %q", record.Higher, record.Lower, s)
}
