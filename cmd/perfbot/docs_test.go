package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/config"
)

// configurationDoc is the configuration reference, relative to the
// repository root.
const configurationDoc = "docs/configuration.md"

// readDoc returns a file of the repository, named from its root.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
	require.NoError(t, err)
	return string(data)
}

// docSection returns the text of the Markdown file name from the heading
// line to the next heading of the same or a higher level.
func docSection(t *testing.T, name, heading string) string {
	t.Helper()
	_, after, ok := strings.Cut(readDoc(t, name), "\n"+heading+"\n")
	require.True(t, ok, "%s has no heading %q", name, heading)
	level := strings.Repeat("#", strings.Index(heading, " "))
	lines := strings.Split(after, "\n")
	inCode := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if !inCode && strings.HasPrefix(line, "#") && strings.HasPrefix(level, strings.SplitN(line, " ", 2)[0]) {
			return strings.Join(lines[:i], "\n")
		}
	}
	return after
}

// TestConfigurationListsEveryFormat: the reference's table of benchmark
// formats has one row per format bench parses, and no other.
func TestConfigurationListsEveryFormat(t *testing.T) {
	section := docSection(t, configurationDoc, "## Benchmark formats and their options")
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(section, -1) {
		rows = append(rows, m[1])
	}
	require.ElementsMatch(t, bench.Formats(), rows)
}

// configMappings are the mappings of a configuration whose keys config
// knows by name, each as a document that puts the unknown key zz_probe
// in it. Lists are written with [] (hosts[].name).
var configMappings = map[string]string{
	"":                    "zz_probe: 1\n",
	"repo":                "repo: {url: ., zz_probe: 1}\n",
	"hosts[]":             "hosts: [{zz_probe: 1}]\n",
	"build[]":             "build: [{run: make, zz_probe: 1}]\n",
	"benchmarks[]":        "benchmarks: [{zz_probe: 1}]\n",
	"benchmarks[].server": "benchmarks: [{name: b, run: b, format: gobench, server: {zz_probe: 1}}]\n",
	"metrics[]":           "metrics: [{zz_probe: 1}]\n",
	"bisect":              "bisect: {zz_probe: 1}\n",
	"detect":              "detect: {zz_probe: 1}\n",
	"github":              "github: {zz_probe: 1}\n",
	"report":              "report: {zz_probe: 1}\n",
	"fingerprint":         "fingerprint: {zz_probe: 1}\n",
	"serve":               "serve: {zz_probe: 1}\n",
	"pool":                "pool: {zz_probe: 1}\n",
	"speculative":         "speculative: {zz_probe: 1}\n",
}

// configKeys asks config which keys it knows: every key path, such as
// hosts[].key_file, that a configuration may hold. Each probe document
// gets an unknown key back with the keys its mapping takes.
func configKeys(t *testing.T) []string {
	t.Helper()
	want := regexp.MustCompile(`^unknown key \(want one of (.*)\)$`)
	var keys []string
	for path, doc := range configMappings {
		_, err := config.Parse([]byte(doc), "perfbot.yaml")
		var errs config.Errors
		require.True(t, errors.As(err, &errs), "%s: %v", path, err)
		found := false
		for _, e := range errs {
			m := want.FindStringSubmatch(e.Msg)
			if m == nil || !strings.HasSuffix(e.Key, "zz_probe") {
				continue
			}
			found = true
			for _, k := range strings.Split(m[1], ", ") {
				if path != "" {
					k = path + "." + k
				}
				keys = append(keys, k)
			}
		}
		require.True(t, found, "config did not refuse the unknown key in %s: %v", path, err)
	}
	slices.Sort(keys)
	return keys
}

// TestConfigurationDocumentsEveryKey: the reference has a row for every
// key config takes (a key that holds a mapping may be documented by the
// rows of its keys instead), and every row names a key config takes.
func TestConfigurationDocumentsEveryKey(t *testing.T) {
	keys := configKeys(t)
	require.Contains(t, keys, "hosts[].known_hosts", "the probe finds the keys of list items")

	var rows []string
	inKeys := false
	for _, line := range strings.Split(readDoc(t, configurationDoc), "\n") {
		switch {
		case strings.HasPrefix(line, "| key |"):
			inKeys = true
		case !strings.HasPrefix(line, "|"):
			inKeys = false
		case inKeys:
			if m := regexp.MustCompile("^\\| `([^`]+)` \\|").FindStringSubmatch(line); m != nil {
				rows = append(rows, m[1])
			}
		}
	}
	require.NotEmpty(t, rows, "%s has no table of keys", configurationDoc)
	for _, row := range rows {
		require.Contains(t, keys, row, "%s documents a key that config does not take", configurationDoc)
	}
	for _, key := range keys {
		documented := slices.ContainsFunc(rows, func(row string) bool {
			return row == key || strings.HasPrefix(row, key+".") || strings.HasPrefix(row, key+"[].")
		})
		require.True(t, documented, "%s has no row for %s", configurationDoc, key)
	}
}

// TestDocsYAMLBlocksLoad: every YAML block of the README and of docs/
// loads. A block with repo: is a whole configuration; any other is a
// fragment, laid over the quick start's perfbot.yaml (its lists added to
// the quick start's, its other keys replacing them). A block after
// "<!-- excerpt: configs/NAME -->" is a part of that example, line for
// line.
func TestDocsYAMLBlocksLoad(t *testing.T) {
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	for _, d := range docs {
		files = append(files, "docs/"+filepath.Base(d))
	}
	var base map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(readmeBlock(t, "perfbot.yaml")), &base))

	block := regexp.MustCompile("(?s)(?:<!-- excerpt: (\\S+) -->\n)?```yaml\n(.*?)\n```\n")
	blocks := 0
	for _, name := range files {
		for i, m := range block.FindAllStringSubmatch(readDoc(t, name), -1) {
			blocks++
			where := name + " yaml block " + strconv.Itoa(i+1)
			if m[1] != "" {
				example := readDoc(t, m[1])
				for _, line := range strings.Split(m[2], "\n") {
					require.Contains(t, example, strings.TrimSpace(line), "%s: a line that %s does not have", where, m[1])
				}
				continue
			}
			var doc map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(m[2]), &doc), where)
			if _, whole := doc["repo"]; !whole {
				merged := map[string]any{}
				for k, v := range base {
					merged[k] = v
				}
				for k, v := range doc {
					if list, ok := v.([]any); ok {
						if old, ok := merged[k].([]any); ok {
							v = append(slices.Clone(old), list...)
						}
					}
					merged[k] = v
				}
				doc = merged
			}
			data, err := yaml.Marshal(doc)
			require.NoError(t, err, where)
			_, err = config.Parse(data, "perfbot.yaml")
			require.NoError(t, err, "%s:\n%s", where, m[2])
		}
	}
	require.Positive(t, blocks)
}
