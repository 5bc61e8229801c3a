package config

import (
	"errors"
	"io/fs"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/configs"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/secret"
)

// FuzzParse checks what Parse promises for any bytes: no panic; a refusal
// is Errors, each naming the file, a line within it and a message, in line
// order; an accepted configuration is valid the way the rest of perfbot
// relies on (one primary metric, every metric on a configured benchmark of
// a known format, distinct metric names, an API URL that go-github takes
// and that keeps the token off plain http), and parsing it again gives the
// same configuration and the same spec hash. Seeds are the example
// configurations of package configs and the tests' inputs.
func FuzzParse(f *testing.F) {
	examples, err := fs.Glob(configs.FS, "*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range examples {
		data, err := configs.FS.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		minimal,
		minimal + "github:\n  repo: owner/name\n  token_env: PERF_TOKEN\n  api_url: https://ghe.example.com/api/v3\n",
		minimal + "github:\n  api_url: http://ghe.example.com/\n",
		minimal + "bisect:\n  confidence: 0.9\n  max_run: 10\n",
		minimal + "schedule: '@daily'\nschedule: '@hourly'\n",
		minimal + "  - name: decode\n    benchmark: engine\n    select: X\n    unit: tok/s\n    primary: true\n",
		minimal + "components:\n  comm: [\"python/**/communicator*.py\"]\n",
		"a: &a [*a]\n", "---\n---\n", "", "\t", "repo: [\n",
	} {
		f.Add([]byte(s))
	}
	formats := bench.Formats()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "perfbot.yaml")
		if err != nil {
			checkErrors(t, err, data)
			return
		}
		primaries := 0
		names := map[string]bool{}
		for _, m := range c.Metrics {
			if m.Primary {
				primaries++
			}
			if names[m.Name] {
				t.Fatalf("metric %q twice", m.Name)
			}
			names[m.Name] = true
			if !slices.ContainsFunc(c.Benchmarks, func(b record.BenchStep) bool { return b.Name == m.Benchmark }) {
				t.Fatalf("metric %s names benchmark %q, which is not configured", m.Name, m.Benchmark)
			}
		}
		if primaries != 1 {
			t.Fatalf("%d primary metrics", primaries)
		}
		for _, b := range c.Benchmarks {
			if !slices.Contains(formats, b.Format) {
				t.Fatalf("benchmark %s has format %q", b.Name, b.Format)
			}
		}
		u, err := url.Parse(c.GitHub.APIURL)
		if err != nil || !strings.HasSuffix(c.GitHub.APIURL, "/") || u.User != nil ||
			!(u.Scheme == "https" || u.Scheme == "http" && secret.IsLoopback(u.Hostname())) {
			t.Fatalf("api_url %q accepted", c.GitHub.APIURL)
		}
		again, err := Parse(data, "perfbot.yaml")
		if err != nil {
			t.Fatalf("parsed once, refused the second time: %v", err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("two parses differ:\n%+v\n%+v", c, again)
		}
		if c.Spec().Hash() != again.Spec().Hash() {
			t.Fatal("two parses give different spec hashes")
		}
	})
}

// checkErrors fails t unless err is a well-formed Errors for data.
func checkErrors(t *testing.T, err error, data []byte) {
	t.Helper()
	var es Errors
	if !errors.As(err, &es) || len(es) == 0 {
		t.Fatalf("error %q is a %T, not Errors", err, err)
	}
	lines := yamlLines(string(data))
	for i, e := range es {
		switch {
		case e.File != "perfbot.yaml":
			t.Fatalf("error %q names file %q", e, e.File)
		case e.Line < 0 || e.Line > lines:
			t.Fatalf("error %q names line %d of %d", e, e.Line, lines)
		case e.Msg == "":
			t.Fatalf("error without a message: %+v", e)
		case i > 0 && es[i-1].Line > e.Line:
			t.Fatalf("errors out of line order: %q before %q", es[i-1], e)
		}
	}
}

// yamlLines counts lines as the YAML parser does: "\r\n", a lone "\r",
// "\n", NEL, LS and PS each end one.
func yamlLines(s string) int {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	n := 1
	for _, r := range s {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}
