package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTriageCommand(t *testing.T) {
	dir, _ := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 100}, {tokS: 80}})
	out, errOut, code := perfbot(t, dir, "bisect", "--good", "HEAD~2", "--bad", "HEAD", "--json")
	require.Equal(t, 0, code, errOut)
	var rep struct{ Findings []string }
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Findings, 1)
	id := rep.Findings[0]

	for _, tt := range []struct {
		name   string
		args   []string
		want   int
		stdout string
		stderr string
	}{
		{name: "invalid, with a note", args: []string{"triage", id, "invalid", "--note", "host throttled"}, want: exitOK, stdout: id + " (gen_tok_s at "},
		{name: "an unknown state", args: []string{"triage", id, "wontfix"}, want: exitInput, stderr: `state "wontfix"`},
		{name: "an unknown finding", args: []string{"triage", "perfbotfpzz", "fixed"}, want: exitInput, stderr: `no finding "perfbotfpzz"`},
		{name: "no state", args: []string{"triage", id}, want: exitInput, stderr: "accepts 2 arg(s)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := perfbot(t, dir, tt.args...)
			require.Equal(t, tt.want, code, errOut)
			require.Contains(t, out, tt.stdout)
			require.Contains(t, errOut, tt.stderr)
		})
	}
	out, errOut, code = perfbot(t, dir, "findings", "--json")
	require.Equal(t, 0, code, errOut)
	var fs []struct {
		ID     string
		Triage struct{ State, Note string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &fs), out)
	require.Len(t, fs, 1)
	require.Equal(t, "invalid", fs[0].Triage.State)
	require.Equal(t, "host throttled", fs[0].Triage.Note)
}
