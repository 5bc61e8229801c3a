package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/noisyrepo"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLooseReport(t *testing.T) {
	const h = "9b485a2a5ed84ac1751a5d37ff27055e4c5defcc"
	for _, tc := range []struct {
		name, json, verdict string
		culprits            []string
		runs                float64
		hasRuns             bool
	}{
		{"today's shape", `{"verdict":"culprit","good":{"commit":"aaaaaaaaaa"},"culprits":[{"commit":"` + h + `","confidence":0.99}],"runs":34}`,
			"culprit", []string{h}, 34, true},
		{"nested and renamed", `{"result":{"verdict":"culprit","culprit":{"commit":"` + h + `"}},"cost":{"runs":12}}`,
			"culprit", []string{h}, 12, true},
		{"plain hashes, no runs", `{"verdict":"candidates","culprits":["` + h[:10] + `","bbbbbbbbbb"]}`,
			"candidates", []string{h[:10], "bbbbbbbbbb"}, 0, false},
		{"not reproduced", `{"verdict":"not_reproduced","culprits":[],"runs":20}`, "not_reproduced", nil, 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := decode(t, tc.json)
			if v, _ := findString(m, "verdict"); v != tc.verdict {
				t.Errorf("verdict %q, want %q", v, tc.verdict)
			}
			if got := culprits(m); strings.Join(got, " ") != strings.Join(tc.culprits, " ") {
				t.Errorf("culprits %v, want %v", got, tc.culprits)
			}
			n, ok := findNumber(m, "runs")
			if ok != tc.hasRuns || n != tc.runs {
				t.Errorf("runs %v %v, want %v %v", n, ok, tc.runs, tc.hasRuns)
			}
		})
	}
}

func TestCorrect(t *testing.T) {
	const h = "9b485a2a5ed84ac1751a5d37ff27055e4c5defcc"
	r := &noisyrepo.Repo{Culprit: h, CulpritIndex: 3}
	for _, tc := range []struct {
		o    outcome
		want bool
	}{
		{outcome{repo: r, verdict: "culprit", named: []string{h}}, true},
		{outcome{repo: r, verdict: "culprit", named: []string{h[:10]}}, true},
		{outcome{repo: r, verdict: "culprit", named: []string{h, "bbbbbbbbbb"}}, false},
		{outcome{repo: r, verdict: "not_reproduced"}, false},
		{outcome{repo: &noisyrepo.Repo{CulpritIndex: -1}, verdict: "not_reproduced"}, true},
		{outcome{repo: &noisyrepo.Repo{CulpritIndex: -1}, verdict: "culprit", named: []string{h}}, false},
	} {
		if got := tc.o.correct(); got != tc.want {
			t.Errorf("%+v: correct = %v, want %v", tc.o, got, tc.want)
		}
	}
}

func TestQuantiles(t *testing.T) {
	x := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	if q := quantile(x, 0.5); q != 5.5 {
		t.Errorf("median %v, want 5.5", q)
	}
	if p := p90(x); p != 9 {
		t.Errorf("p90 %v, want 9", p)
	}
	if p := p90([]float64{4}); p != 4 {
		t.Errorf("p90 of one %v", p)
	}
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"-repos", "0"}, &out, &errb); code != 1 {
		t.Errorf("-repos 0: exit %d, want 1", code)
	}
	if code := run(t.Context(), []string{"-perfbot", "/nonexistent/perfbot"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "/nonexistent/perfbot") {
		t.Errorf("missing binary: exit %d, stderr %q", code, errb.String())
	}
}
