package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder walks a YAML node tree and collects every problem with the line
// of the key it concerns. Decoding through yaml.Node rather than into
// structs is what lets a semantic error ("unknown format") name its line,
// not only a syntax error.
type decoder struct {
	file string
	errs Errors
}

// errorf records a problem at node n under the key path key.
func (d *decoder) errorf(n *yaml.Node, key, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// field is one key of a mapping: the key node (for its line) and its value.
type field struct {
	key   *yaml.Node
	value *yaml.Node
}

// mapping checks that n is a mapping whose keys are all in known and
// returns its fields by key. Unknown and repeated keys are errors: a typo
// in a key would otherwise silently fall back to a default.
func (d *decoder) mapping(n *yaml.Node, path string, known ...string) map[string]field {
	n = resolve(n)
	if isNull(n) {
		return map[string]field{}
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return map[string]field{}
	}
	fields := make(map[string]field, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		p := join(path, name)
		switch {
		case k.Kind != yaml.ScalarNode:
			d.errorf(k, path, "keys must be plain strings, got %s", describe(k))
		case !slices.Contains(known, name):
			d.errorf(k, p, "unknown key (want one of %s)", strings.Join(known, ", "))
		case fields[name].key != nil:
			d.errorf(k, p, "repeated key (first at line %d)", fields[name].key.Line)
		default:
			fields[name] = field{key: k, value: v}
		}
	}
	return fields
}

// pairs returns the fields of a mapping with free-form keys (environment
// variables, component names) in file order.
func (d *decoder) pairs(n *yaml.Node, path string) []field {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return nil
	}
	var out []field
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			d.errorf(k, path, "keys must be non-empty strings, got %s", describe(k))
			continue
		}
		if first, ok := seen[k.Value]; ok {
			d.errorf(k, join(path, k.Value), "repeated key (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, field{key: k, value: resolve(v)})
	}
	return out
}

// sequence checks that n is a list and returns its items.
func (d *decoder) sequence(n *yaml.Node, path string) []*yaml.Node {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "want a list, got %s", describe(n))
		return nil
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		items[i] = resolve(c)
	}
	return items
}

// str returns the text of a scalar; a null value is the empty string.
func (d *decoder) str(n *yaml.Node, path string) string {
	n = resolve(n)
	if isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, path, "want a string, got %s", describe(n))
		return ""
	}
	return n.Value
}

// scalars returns the items of a list of strings; items that are not
// strings are reported and left out.
func (d *decoder) scalars(n *yaml.Node, path string) []*yaml.Node {
	var out []*yaml.Node
	for i, item := range d.sequence(n, path) {
		if item.Kind != yaml.ScalarNode || isNull(item) {
			d.errorf(item, fmt.Sprintf("%s[%d]", path, i), "want a string, got %s", describe(item))
			continue
		}
		out = append(out, item)
	}
	return out
}

// strings returns a list of strings.
func (d *decoder) strings(n *yaml.Node, path string) []string {
	var out []string
	for _, item := range d.scalars(n, path) {
		out = append(out, item.Value)
	}
	return out
}

// stringMap returns a mapping of strings to strings, such as an
// environment. Numbers and booleans keep their text as written
// (NCCL_MIN_NCHANNELS: 4 is "4").
func (d *decoder) stringMap(n *yaml.Node, path string) map[string]string {
	fs := d.pairs(n, path)
	if len(fs) == 0 {
		return nil
	}
	out := make(map[string]string, len(fs))
	for _, f := range fs {
		out[f.key.Value] = d.str(f.value, join(path, f.key.Value))
	}
	return out
}

// duration reads a Go duration ("10m", "1h30m") that must be positive.
func (d *decoder) duration(n *yaml.Node, path string) time.Duration {
	s := d.str(n, path)
	v, err := time.ParseDuration(s)
	if err != nil {
		d.errorf(n, path, "bad duration %q (want a Go duration such as 90s, 10m or 1h30m)", s)
		return 0
	}
	if v <= 0 {
		d.errorf(n, path, "duration %q must be positive", s)
		return 0
	}
	return v
}

// percent reads a percentage written like "2%" or "0.5%" and returns it as
// a fraction. A bare number is refused: 0.02 and 2 would both be plausible
// readings of it.
func (d *decoder) percent(n *yaml.Node, path string) float64 {
	s := strings.TrimSpace(d.str(n, path))
	num, ok := strings.CutSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil {
		d.errorf(n, path, "bad percentage %q (write it like 2%% or 0.5%%)", s)
		return 0
	}
	if !(v > 0 && v < 100) {
		d.errorf(n, path, "percentage %q is outside (0%%, 100%%)", s)
		return 0
	}
	return v / 100
}

// confidence reads a probability in the open interval (0.5, 1).
func (d *decoder) confidence(n *yaml.Node, path string) float64 {
	s := d.str(n, path)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d.errorf(n, path, "bad confidence %q (want a number such as 0.99)", s)
		return 0
	}
	if !(v > 0.5 && v < 1) {
		d.errorf(n, path, "confidence %v is outside (0.5, 1): write a probability such as 0.99", v)
		return 0
	}
	return v
}

// positive reads an integer of at least 1.
func (d *decoder) positive(n *yaml.Node, path string) int {
	return d.atLeast(n, path, 1)
}

// atLeast reads a whole number of at least least.
func (d *decoder) atLeast(n *yaml.Node, path string, least int) int {
	s := d.str(n, path)
	v, err := strconv.Atoi(s)
	if err != nil {
		d.errorf(n, path, "bad number %q (want a whole number)", s)
		return 0
	}
	if v < least {
		d.errorf(n, path, "%d must be at least %d", v, least)
		return 0
	}
	return v
}

// within reads a whole number from least to most.
func (d *decoder) within(n *yaml.Node, path string, least, most int) int {
	v := d.atLeast(n, path, least)
	if v > most {
		d.errorf(n, path, "%d is more than %d", v, most)
		return 0
	}
	return v
}

// boolean reads true or false.
func (d *decoder) boolean(n *yaml.Node, path string) bool {
	n = resolve(n)
	var v bool
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil {
		d.errorf(n, path, "want true or false, got %q", n.Value)
	}
	return v
}

// resolve follows YAML aliases (*anchor) to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is absent or written as null ("key:" with no
// value); both mean "use the default".
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe names the kind of a node for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "an unexpected node"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// sortErrors orders problems by line so the report reads top to bottom.
func sortErrors(es Errors) {
	slices.SortStableFunc(es, func(a, b *Error) int { return a.Line - b.Line })
}
