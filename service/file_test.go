package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report/reporttest"
	"github.com/perfbot/perfbot/store"
)

// tokenEnv is the variable the tests' github.token_env names.
const tokenEnv = "PERFBOT_TEST_GITHUB_TOKEN"

// records is a Bot over a store alone (OnStore): a store in a temporary
// directory and, for GitHub, the fake.
type records struct {
	bot    *Bot
	fake   *reporttest.GitHub // nil when filing to the issues directory
	issues string             // the issues directory
}

// openRecords opens a workspace that files to the issues directory, or to
// a fake GitHub when github is set.
func openRecords(t *testing.T, github bool) *records {
	t.Helper()
	cfg, err := config.Default()
	require.NoError(t, err)
	dir := t.TempDir()
	cfg.Store = filepath.Join(dir, "perfbot.db")
	cfg.IssuesDir = filepath.Join(dir, "issues")
	cfg.GitHub = config.GitHub{TokenEnv: tokenEnv, Labels: []string{"perf-regression"}}
	w := &records{issues: cfg.IssuesDir}
	if github {
		w.fake = reporttest.NewGitHub(t)
		cfg.GitHub.Repo, cfg.GitHub.APIURL = reporttest.Repo, w.fake.URL()
	}
	db, err := store.Open(cfg.Store)
	require.NoError(t, err)
	w.bot = OnStore(cfg, db, Options{})
	t.Cleanup(func() { w.bot.Close() })
	return w
}

// issueCount is the number of issues the tracker holds.
func (w *records) issueCount(t *testing.T) int {
	t.Helper()
	if w.fake != nil {
		return w.fake.IssueCount()
	}
	files, err := filepath.Glob(filepath.Join(w.issues, "*.md"))
	require.NoError(t, err)
	return len(files)
}

// comments is the number of comments on issue 1.
func (w *records) comments(t *testing.T) int {
	t.Helper()
	if w.fake != nil {
		return len(w.fake.Issue(1).Comments)
	}
	files, err := filepath.Glob(filepath.Join(w.issues, "1-*.md"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	return strings.Count(string(b), "\n## Comment ")
}

// culpritFinding is a confirmed regression at the commit with the
// confidence, as Bot.StoreFindings stores it before filing.
func culpritFinding(commit string, confidence float64) record.Finding {
	c := record.Commit{Hash: commit, Subject: "communicator: prefer symmetric memory allreduce", Author: "Mei Lin", Date: time.Date(2026, 11, 20, 14, 0, 0, 0, time.UTC)}
	f := record.Finding{
		Created: time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC), Repo: "/srv/infer",
		Outcome: record.OutcomeCulprit, Metric: "verify_tok_s", Unit: "tok/s", Direction: record.Regression,
		Good:       record.End{Commit: record.Commit{Hash: strings.Repeat("a", 40)}, N: 10, Median: 100, Interval: record.Interval{Lo: 99, Hi: 101}},
		Bad:        record.End{Commit: c, N: 10, Median: 92, Interval: record.Interval{Lo: 91, Hi: 93}},
		Culprits:   []record.Culprit{{Commit: c, Confidence: confidence, Effect: record.Effect{Pct: -8, Interval: record.Interval{Lo: -9, Hi: -7}}}},
		Components: []string{"communicator"},
		Confidence: confidence,
		State:      record.StateKept,
	}
	f.ID = f.DerivedID()
	return f
}

func TestFile(t *testing.T) {
	culprit := strings.Repeat("3f2a9c1e", 5)
	tests := []struct {
		name   string
		github bool
		// token is the value of github.token_env.
		token string
		// before is filed first, with the right token.
		before []record.Finding
		// fault is GitHub's answer to the first create.
		fault   *reporttest.Fault
		finding record.Finding

		wantErr      string
		wantInput    bool // the error is the user's (exit 1)
		wantState    record.State
		wantIssue    int
		wantIssues   int
		wantComments int
	}{
		{
			name:    "markdown dir: a new issue",
			finding: culpritFinding(culprit, 0.995), wantState: record.StateFiled, wantIssue: 1, wantIssues: 1,
		},
		{
			name: "fake GitHub: a new issue", github: true, token: reporttest.Token,
			finding: culpritFinding(culprit, 0.995), wantState: record.StateFiled, wantIssue: 1, wantIssues: 1,
		},
		{
			name:    "markdown dir: found again, commented not re-filed",
			before:  []record.Finding{culpritFinding(culprit, 0.995)},
			finding: culpritFinding(culprit, 0.999), wantState: record.StateFiled, wantIssue: 1, wantIssues: 1, wantComments: 1,
		},
		{
			name: "fake GitHub: found again, commented not re-filed", github: true, token: reporttest.Token,
			before:  []record.Finding{culpritFinding(culprit, 0.995)},
			finding: culpritFinding(culprit, 0.999), wantState: record.StateFiled, wantIssue: 1, wantIssues: 1, wantComments: 1,
		},
		{
			name:   "below the publish cut-off: kept, nothing sent",
			github: true, token: reporttest.Token,
			finding: culpritFinding(culprit, 0.5), wantState: record.StateKept,
		},
		{
			name: "not confirmed: kept",
			finding: func() record.Finding {
				f := culpritFinding(culprit, 0.995)
				f.Unconfirmed = "fresh runs give -0.1% [-1.0%, +0.8%]"
				return f
			}(),
			wantState: record.StateKept,
		},
		{
			name: "GitHub refuses the token: unfiled", github: true, token: "ghp_expired",
			finding: culpritFinding(culprit, 0.995), wantState: record.StateUnfiled, wantErr: "Bad credentials",
		},
		{
			name: "GitHub rejects the issue: unfiled", github: true, token: reporttest.Token,
			fault:   ptr(reporttest.ValidationFailed()),
			finding: culpritFinding(culprit, 0.995), wantState: record.StateUnfiled, wantErr: "body is too long",
		},
		{
			name: "GitHub without a token: unfiled, nothing sent", github: true,
			finding: culpritFinding(culprit, 0.995), wantInput: true, wantErr: "$" + tokenEnv + " is empty", wantState: record.StateUnfiled,
		},
		{
			name: "GitHub without a token, below the cut-off: kept", github: true,
			finding: culpritFinding(culprit, 0.5), wantInput: true, wantErr: "$" + tokenEnv + " is empty", wantState: record.StateKept,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			w := openRecords(t, tt.github)
			t.Setenv(tokenEnv, reporttest.Token)
			for _, f := range tt.before {
				require.NoError(t, w.bot.File(ctx, []*record.Finding{&f}))
			}
			t.Setenv(tokenEnv, tt.token)
			if tt.fault != nil {
				w.fake.Fail(reporttest.RouteCreate, *tt.fault)
			}

			f := tt.finding
			err := w.bot.File(ctx, []*record.Finding{&f})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				var ie *record.InputError
				require.Equal(t, tt.wantInput, errors.As(err, &ie), "input error: %v", err)
			} else {
				require.NoError(t, err)
			}
			require.NotContains(t, f.FileError, reporttest.Token, "no token in what is stored")
			require.Equal(t, tt.wantIssues, w.issueCount(t), "issues in the tracker")
			if tt.wantState == record.StateKept && w.fake != nil {
				require.Zero(t, w.fake.Total(), "a kept finding sends nothing")
			}
			if tt.wantComments > 0 {
				require.Equal(t, tt.wantComments, w.comments(t))
			}
			if tt.wantInput && w.fake != nil {
				require.Zero(t, w.fake.Total(), "a tracker that cannot be set up is sent nothing")
			}

			require.Equal(t, tt.wantState, f.State)
			require.Equal(t, tt.wantIssue, f.Issue)
			stored, err := readViews(w.bot).Finding(ctx, f.ID)
			require.NoError(t, err)
			require.Equal(t, tt.wantState, stored.State, "the new state is stored")
			require.Equal(t, tt.wantIssue, stored.Issue)
			n, ok, err := w.bot.Store.IssueFor(f.Fingerprint())
			require.NoError(t, err)
			require.Equal(t, tt.wantIssue > 0, ok, "the issue is recorded with the finding")
			require.Equal(t, tt.wantIssue, n)
			if tt.wantState == record.StateUnfiled {
				require.Contains(t, stored.FileError, tt.wantErr)
			}

			// Filing it again sends nothing and changes nothing.
			if f.State == record.StateFiled && w.fake != nil {
				before := w.fake.Total()
				require.NoError(t, w.bot.File(ctx, []*record.Finding{&f}))
				require.Equal(t, before, w.fake.Total(), "an already filed finding sends nothing")
			}
		})
	}
}

func TestRetryUnfiled(t *testing.T) {
	tests := []struct {
		name string
		// fail makes the first filing of the second finding fail.
		fail func(t *testing.T, w *records)
		// heal undoes it before the retry.
		heal      func(t *testing.T, w *records)
		wantRetry int // findings the retry tried
	}{
		{
			name:      "an expired token, renewed",
			fail:      func(t *testing.T, w *records) { t.Setenv(tokenEnv, "ghp_expired") },
			heal:      func(t *testing.T, w *records) { t.Setenv(tokenEnv, reporttest.Token) },
			wantRetry: 1,
		},
		{
			name: "a refusal that the next try does not meet",
			fail: func(t *testing.T, w *records) {
				w.fake.Fail(reporttest.RouteList, reporttest.StatusFault(403, "Resource not accessible by integration"))
			},
			heal:      func(t *testing.T, w *records) {},
			wantRetry: 1,
		},
		{
			name:      "a token missing, then set",
			fail:      func(t *testing.T, w *records) { t.Setenv(tokenEnv, "") },
			heal:      func(t *testing.T, w *records) { t.Setenv(tokenEnv, reporttest.Token) },
			wantRetry: 1,
		},
		{
			name:      "nothing unfiled",
			fail:      func(t *testing.T, w *records) {},
			heal:      func(t *testing.T, w *records) {},
			wantRetry: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			w := openRecords(t, true)
			t.Setenv(tokenEnv, reporttest.Token)
			filed := culpritFinding(strings.Repeat("1", 40), 0.995)
			require.NoError(t, w.bot.File(ctx, []*record.Finding{&filed}))
			tt.fail(t, w)
			later := culpritFinding(strings.Repeat("2", 40), 0.995)
			_ = w.bot.File(ctx, []*record.Finding{&later})
			tt.heal(t, w)

			tried, err := w.bot.RetryUnfiled(ctx)
			require.NoError(t, err)
			require.Len(t, tried, tt.wantRetry)
			for _, f := range tried {
				require.Equal(t, later.ID, f.ID, "only the unfiled finding is tried")
				require.Equal(t, record.StateFiled, f.State)
				require.Empty(t, f.FileError)
			}
			fs, err := readViews(w.bot).ListFindings(ctx)
			require.NoError(t, err)
			require.Len(t, fs, 2)
			for _, f := range fs {
				require.Equal(t, record.StateFiled, f.State, "finding %s", f.ID)
			}
			require.Equal(t, 2, w.fake.IssueCount(), "one issue each, none twice")
		})
	}
}

func ptr[T any](v T) *T { return &v }

// What filing needs is checked before anything is measured, and checking
// sends nothing.
func TestCheckFiling(t *testing.T) {
	for _, tt := range []struct {
		name      string
		github    bool
		token     string
		wantInput string
	}{
		{name: "the issues directory"},
		{name: "GitHub with its token", github: true, token: reporttest.Token},
		{name: "GitHub without its token", github: true, wantInput: "$" + tokenEnv + " is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := openRecords(t, tt.github)
			t.Setenv(tokenEnv, tt.token)
			err := w.bot.CheckFiling()
			if tt.wantInput == "" {
				require.NoError(t, err)
			} else {
				var ie *record.InputError
				require.ErrorAs(t, err, &ie)
				require.ErrorContains(t, err, tt.wantInput)
			}
			if w.fake != nil {
				require.Zero(t, w.fake.Total(), "checking sends nothing")
			}
		})
	}
}

// TestFileJob: the file job files a stored finding by a prefix of its id,
// or every unfiled one, and refuses a request that names neither or both
// or a finding the store does not hold, as the user's mistake.
func TestFileJob(t *testing.T) {
	ctx := context.Background()
	w := openRecords(t, false)
	f := culpritFinding(strings.Repeat("3", 40), 0.995)
	require.NoError(t, w.bot.Store.PutFinding(f))

	rep, err := w.bot.FileJob(ctx, FileRequest{Finding: f.ID[:8]})
	require.NoError(t, err)
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, record.StateFiled, rep.Findings[0].State)
	assert.Equal(t, 1, w.issueCount(t))

	rep, err = w.bot.FileJob(ctx, FileRequest{RetryUnfiled: true})
	require.NoError(t, err)
	assert.Empty(t, rep.Findings, "nothing is unfiled")

	for _, tc := range []struct {
		name string
		req  FileRequest
		want string
	}{
		{"neither", FileRequest{}, "name a finding or ask to retry"},
		{"both", FileRequest{Finding: f.ID, RetryUnfiled: true}, "name a finding or ask to retry"},
		{"no such finding", FileRequest{Finding: "perfbotfp00"}, `no finding "perfbotfp00"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.bot.FileJob(ctx, tc.req)
			var input *record.InputError
			require.ErrorAs(t, err, &input)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	assert.Equal(t, 1, w.issueCount(t), "no second issue")
}
