package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/report/reporttest"
)

// bisect --file-issue checks what filing needs before it measures, and
// once it has measured prints its one JSON document whether or not the
// filing worked; a finding that was not filed is unfiled, for
// report --retry-unfiled.
func TestBisectFileIssue(t *testing.T) {
	const tokenVar = "TOY_GITHUB_TOKEN"
	for _, tt := range []struct {
		name      string
		token     string
		wantCode  int // -1: any failure
		wantErr   string
		wantRuns  bool   // anything was measured
		wantState string // of the finding, when one was made
	}{
		{name: "no token: refused before measuring", wantCode: exitInput, wantErr: "$" + tokenVar + " is empty"},
		{name: "a token GitHub refuses: measured, printed, unfiled", token: "ghp_expired", wantCode: -1,
			wantErr: "Bad credentials", wantRuns: true, wantState: "unfiled"},
		{name: "a good token: filed", token: reporttest.Token, wantCode: exitOK, wantRuns: true, wantState: "filed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gh := reporttest.NewGitHub(t)
			dir, _ := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 100}, {tokS: 80}})
			cfg, err := os.ReadFile(filepath.Join(dir, "perfbot.yaml"))
			require.NoError(t, err)
			// The benchmark prints its environment: no token of perfbot's
			// reaches it, and so none reaches an issue.
			cfg = []byte(strings.Replace(string(cfg), "run: sh bench.sh", "run: env; sh bench.sh", 1))
			cfg = append(cfg, "github: {repo: "+reporttest.Repo+", token_env: "+tokenVar+", api_url: \""+gh.URL()+"\"}\n"...)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "perfbot.yaml"), cfg, 0o644))
			t.Setenv(tokenVar, tt.token)
			ghToken := "ghp_" + strings.Repeat("z", 36)
			t.Setenv("GITHUB_TOKEN", ghToken)

			out, errOut, code := perfbot(t, dir, "bisect", "--good", "HEAD~2", "--bad", "HEAD", "--file-issue", "--json")
			if tt.wantCode < 0 {
				require.NotEqual(t, exitOK, code, errOut)
			} else {
				require.Equal(t, tt.wantCode, code, errOut)
			}
			require.Contains(t, errOut, tt.wantErr)
			require.Equal(t, tt.wantRuns, len(history(t, dir)) > 0, "measured")
			if !tt.wantRuns {
				require.Empty(t, out)
				require.Zero(t, gh.Total(), "nothing sent")
				return
			}
			var rep struct {
				Verdict  string
				Findings []string
			}
			require.NoError(t, json.Unmarshal([]byte(out), &rep), "one JSON document: %q", out)
			require.Equal(t, "culprit", rep.Verdict)
			require.Len(t, rep.Findings, 1)

			out, errOut, code = perfbot(t, dir, "findings", "--json")
			require.Equal(t, exitOK, code, errOut)
			var fs []struct{ ID, State string }
			require.NoError(t, json.Unmarshal([]byte(out), &fs), out)
			require.Len(t, fs, 1)
			require.Equal(t, tt.wantState, fs[0].State)
			if tt.wantState == "filed" {
				iss := gh.Issue(1)
				require.Contains(t, iss.Body, "PATH=", "the issue quotes the benchmark's log")
				for _, secret := range []string{tt.token, ghToken} {
					require.NotContains(t, iss.Body, secret)
				}
			}
		})
	}
}
