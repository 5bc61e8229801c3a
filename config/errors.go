package config

import (
	"fmt"
	"strings"
)

// Error is one problem in a configuration file, located at the line of the
// offending key so that the reader can go straight to it.
type Error struct {
	// File is the configuration file as it was named to Load or Parse.
	File string
	// Line is 1-based; 0 when the problem has no place in the file.
	Line int
	// Key is the path of the offending key ("benchmarks[0].format"); empty
	// for YAML syntax errors.
	Key string
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one configuration file, in the order of
// their lines. Reporting them all at once spares the user a fix-rerun loop.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}
