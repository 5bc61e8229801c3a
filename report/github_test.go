package report

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/secret"
)

func TestNewGitHubRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts GitHubOptions
		want string
	}{
		{"no slash", GitHubOptions{Repo: "infer", Token: testToken}, `github repo "infer": want owner/name`},
		{"empty owner", GitHubOptions{Repo: "/infer", Token: testToken}, "want owner/name"},
		{"too deep", GitHubOptions{Repo: "a/b/c", Token: testToken}, "want owner/name"},
		{"no token", GitHubOptions{Repo: testRepo}, "github token is empty"},
		{"not a URL", GitHubOptions{Repo: testRepo, Token: testToken, APIURL: "github.example.com"}, "want an http(s) URL"},
		{"credentials in URL", GitHubOptions{Repo: testRepo, Token: testToken, APIURL: "https://bot:" + testToken + "@github.example.com/"}, "must not hold credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewGitHub(tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), testToken)
		})
	}
}

func TestGitHubRoundTrip(t *testing.T) {
	ctx := context.Background()
	fake := newFakeGitHub(t)
	g, _, _ := newTestGitHub(t, fake, nil)
	body := "evidence\n" + marker("perfbotfp0123456789abcdef0123") + "\n"

	iss, err := g.Create(ctx, "verify_tok_s −14.8% at 3f2a9c1e00 (communicator)", body, []string{"perf-regression", "component:communicator"})
	require.NoError(t, err)
	assert.Equal(t, Issue{Number: 1, URL: "https://github.example.com/perfbot/infer/issues/1", State: IssueOpen}, iss)
	assert.Equal(t, []string{"perf-regression", "component:communicator"}, fake.Issue(1).Labels)

	found, ok, err := g.Find(ctx, "perfbotfp0123456789abcdef0123")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, iss, found)
	assert.Zero(t, fake.Count(routeSearch), "the labelled list found it")

	_, ok, err = g.Find(ctx, "perfbotfpffffffffffffffffffff")
	require.NoError(t, err)
	assert.False(t, ok)

	require.NoError(t, g.Comment(ctx, 1, "again"))
	assert.Equal(t, []string{"again"}, fake.Issue(1).Comments)

	fake.SetState(1, IssueClosed)
	got, err := g.Get(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, IssueClosed, got.State)
	require.NoError(t, g.Reopen(ctx, 1))
	assert.Equal(t, IssueOpen, fake.Issue(1).State)
}

func TestGitHubFind(t *testing.T) {
	const fp = "perfbotfpaaaaaaaaaaaaaaaaaaaa"
	for _, tc := range []struct {
		name       string
		setup      func(f *fakeGitHub)
		wantNumber int // 0: not found
		wantLists  int
		wantSearch int
	}{
		{
			name: "on the third page of labelled issues",
			setup: func(f *fakeGitHub) {
				f.Add("target", "x\n"+marker(fp), IssueClosed, "perf-regression")
				for i := 0; i < 4; i++ {
					f.Add(fmt.Sprintf("other %d", i), marker(fmt.Sprintf("perfbotfp%020d", i)), IssueOpen, "perf-regression")
				}
			},
			wantNumber: 1, wantLists: 3, wantSearch: 0,
		},
		{
			name: "label removed: search finds it",
			setup: func(f *fakeGitHub) {
				f.Add("other", marker("perfbotfpbbbbbbbbbbbbbbbbbbbb"), IssueOpen, "perf-regression")
				f.Add("target", marker(fp), IssueOpen, "triaged")
			},
			wantNumber: 2, wantLists: 1, wantSearch: 1,
		},
		{
			name: "the word without the marker is not a match",
			setup: func(f *fakeGitHub) {
				f.Add("quotes it", "see "+fp+" in the log", IssueOpen, "perf-regression")
			},
			wantNumber: 0, wantLists: 1, wantSearch: 1,
		},
		{
			name:       "nothing filed yet",
			setup:      func(f *fakeGitHub) {},
			wantNumber: 0, wantLists: 1, wantSearch: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeGitHub(t)
			tc.setup(fake)
			g, _, _ := newTestGitHub(t, fake, nil)
			g.pageSize = 2
			iss, ok, err := g.Find(context.Background(), fp)
			require.NoError(t, err)
			assert.Equal(t, tc.wantNumber != 0, ok)
			assert.Equal(t, tc.wantNumber, iss.Number)
			assert.Equal(t, tc.wantLists, fake.Count(routeList), "list requests")
			assert.Equal(t, tc.wantSearch, fake.Count(routeSearch), "search requests")
		})
	}
}

// TestGitHubFailures drives one comment through each failure GitHub
// documents and checks how often the tracker asked and how long it waited.
func TestGitHubFailures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		faults     func(clock *fakeClock) []fakeFault
		retries    int
		wantErr    string // empty: success
		wantStatus int    // a *FileError with this status
		wantCalls  int
		wantSleeps []time.Duration
		// wantWait is a single wait known to the second only: a reset
		// header holds whole seconds.
		wantWait time.Duration
	}{
		{
			name:   "primary rate limit waits for the reset",
			faults: func(c *fakeClock) []fakeFault { return []fakeFault{primaryRateLimit(c.Now().Add(30 * time.Second))} },
			// One second more than the reset covers its truncation.
			wantCalls: 2, wantWait: 31 * time.Second,
		},
		{
			name:      "primary rate limit beyond MaxWait fails at once",
			faults:    func(c *fakeClock) []fakeFault { return []fakeFault{primaryRateLimit(c.Now().Add(time.Hour))} },
			wantErr:   "more than the 10m0s allowed to wait",
			wantCalls: 1, wantSleeps: nil,
		},
		{
			name:      "secondary rate limit honours Retry-After",
			faults:    func(*fakeClock) []fakeFault { return []fakeFault{secondaryRateLimit("60")} },
			wantCalls: 2, wantSleeps: []time.Duration{time.Minute},
		},
		{
			name:      "429 honours Retry-After",
			faults:    func(*fakeClock) []fakeFault { return []fakeFault{tooManyRequests("30")} },
			wantCalls: 2, wantSleeps: []time.Duration{30 * time.Second},
		},
		{
			name:      "502 is retried with backoff",
			faults:    func(*fakeClock) []fakeFault { return []fakeFault{badGateway(), badGateway()} },
			wantCalls: 3, wantSleeps: []time.Duration{2 * time.Second, 4 * time.Second},
		},
		{
			name: "retries are bounded",
			faults: func(*fakeClock) []fakeFault {
				return []fakeFault{badGateway(), badGateway(), badGateway(), badGateway(), badGateway(), badGateway()}
			},
			retries:   3,
			wantErr:   "giving up after 4 attempts: Bad Gateway",
			wantCalls: 4, wantSleeps: []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second},
		},
		{
			name: "rate limits count against the retries",
			faults: func(*fakeClock) []fakeFault {
				return []fakeFault{secondaryRateLimit("5"), secondaryRateLimit("5"), secondaryRateLimit("5")}
			},
			retries:   1,
			wantErr:   "giving up after 2 attempts: secondary rate limit",
			wantCalls: 2, wantSleeps: []time.Duration{5 * time.Second},
		},
		{
			name:      "a dropped connection is retried",
			faults:    func(*fakeClock) []fakeFault { return []fakeFault{{Drop: true}} },
			wantCalls: 2, wantSleeps: []time.Duration{2 * time.Second},
		},
		{
			name: "401 is permanent",
			faults: func(*fakeClock) []fakeFault {
				return []fakeFault{statusFault(http.StatusUnauthorized, "Bad credentials")}
			},
			wantErr:    "401 Unauthorized: Bad credentials (the token is invalid or expired)",
			wantStatus: http.StatusUnauthorized, wantCalls: 1,
		},
		{
			name: "403 without a rate limit is permanent",
			faults: func(*fakeClock) []fakeFault {
				return []fakeFault{statusFault(http.StatusForbidden, "Resource not accessible by integration")}
			},
			wantErr:    "the token may not write issues in perfbot/infer",
			wantStatus: http.StatusForbidden, wantCalls: 1,
		},
		{
			name:       "404 is permanent",
			faults:     func(*fakeClock) []fakeFault { return []fakeFault{statusFault(http.StatusNotFound, "Not Found")} },
			wantErr:    "no repository perfbot/infer, or the token cannot see it",
			wantStatus: http.StatusNotFound, wantCalls: 1,
		},
		{
			name:       "422 is permanent and names the field",
			faults:     func(*fakeClock) []fakeFault { return []fakeFault{validationFailed()} },
			wantErr:    "Validation Failed; body is too long (maximum is 65536 characters)",
			wantStatus: http.StatusUnprocessableEntity, wantCalls: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeGitHub(t)
			fake.Add("existing", "body", IssueOpen, "perf-regression")
			g, clock, logs := newTestGitHub(t, fake, func(o *GitHubOptions) { o.Retries = tc.retries })
			fake.Fail(routeComment, tc.faults(clock)...)

			err := g.Comment(context.Background(), 1, "found again")

			assert.Equal(t, tc.wantCalls, fake.Count(routeComment), "requests")
			if tc.wantWait != 0 {
				require.Len(t, clock.sleeps(), 1)
				assert.InDelta(t, float64(tc.wantWait), float64(clock.sleeps()[0]), float64(time.Second))
			} else {
				assert.Equal(t, tc.wantSleeps, clock.sleeps(), "waits")
			}
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, []string{"found again"}, fake.Issue(1).Comments)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			var fe *FileError
			if tc.wantStatus != 0 {
				require.True(t, errors.As(err, &fe), "want a *FileError, got %T", err)
				assert.Equal(t, tc.wantStatus, fe.Status)
			} else {
				assert.False(t, errors.As(err, &fe), "a transient failure is not a *FileError")
			}
			assert.NotContains(t, err.Error(), testToken)
			assert.NotContains(t, logs.String(), testToken)
		})
	}
}

func TestGitHubRateLimitBlocksLaterCalls(t *testing.T) {
	ctx := context.Background()
	fake := newFakeGitHub(t)
	fake.Add("existing", "body", IssueOpen)
	g, clock, _ := newTestGitHub(t, fake, nil)
	fake.Fail(routeComment, primaryRateLimit(clock.Now().Add(time.Hour)))

	require.Error(t, g.Comment(ctx, 1, "first"))
	err := g.Reopen(ctx, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rate limited for")
	assert.Equal(t, 1, fake.Total(), "no request is sent before the reset")

	clock.Sleep(ctx, time.Hour+2*time.Second) // the reset passes
	require.NoError(t, g.Reopen(ctx, 1))
	assert.Equal(t, 2, fake.Total())
	assert.Equal(t, []time.Duration{time.Hour + 2*time.Second}, clock.sleeps(), "no wait once the reset has passed")
}

func TestGitHubCreateAfterLostResponse(t *testing.T) {
	ctx := context.Background()
	fake := newFakeGitHub(t)
	g, _, _ := newTestGitHub(t, fake, nil)
	// GitHub stores the issue, then the proxy in front answers 502.
	fake.Fail(routeCreate, fakeFault{Status: http.StatusBadGateway, Body: "bad gateway", Apply: true})
	body := "evidence\n" + marker("perfbotfp0123456789abcdef0123") + "\n"

	iss, err := g.Create(ctx, "verify_tok_s −14.8% at 3f2a9c1e00", body, []string{"perf-regression"})
	require.NoError(t, err)
	assert.Equal(t, 1, iss.Number)
	assert.Equal(t, 1, fake.IssueCount(), "one issue, not two")
	assert.Equal(t, 1, fake.Count(routeCreate))
	assert.Equal(t, 1, fake.Count(routeList), "the retry looked before creating again")
}

func TestGitHubCreateRetriesWhenNothingWasCreated(t *testing.T) {
	fake := newFakeGitHub(t)
	g, _, _ := newTestGitHub(t, fake, nil)
	fake.Fail(routeCreate, badGateway())
	iss, err := g.Create(context.Background(), "t", "b\n"+marker("perfbotfp0123456789abcdef0123"), nil)
	require.NoError(t, err)
	assert.Equal(t, 1, iss.Number)
	assert.Equal(t, 1, fake.IssueCount())
	assert.Equal(t, 2, fake.Count(routeCreate))
}

func TestGitHubCancelledWait(t *testing.T) {
	fake := newFakeGitHub(t)
	fake.Add("existing", "body", IssueOpen)
	ctx, cancel := context.WithCancel(context.Background())
	g, _, _ := newTestGitHub(t, fake, func(o *GitHubOptions) {
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			cancel()
			return ctx.Err()
		}
	})
	fake.Fail(routeComment, badGateway())
	err := g.Comment(ctx, 1, "x")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, fake.Count(routeComment))
}

// TestGitHubNeverLeaksToken makes the server quote the Authorization header
// in every error and checks errors and logs.
func TestGitHubNeverLeaksToken(t *testing.T) {
	ctx := context.Background()
	fake := newFakeGitHub(t)
	fake.EchoAuth = true
	fake.Add("existing", "body", IssueOpen)
	g, clock, logs := newTestGitHub(t, fake, func(o *GitHubOptions) { o.Retries = 2 })
	fake.Fail(routeComment,
		secondaryRateLimit("1"),
		tooManyRequests("1"),
		primaryRateLimit(clock.Now().Add(5*time.Second)),
		statusFault(http.StatusForbidden, "Must have admin rights"),
	)
	fake.Fail(routeCreate, validationFailed())

	var errs []error
	errs = append(errs, g.Comment(ctx, 1, "x"))
	errs = append(errs, g.Comment(ctx, 1, "x"))
	_, err := g.Create(ctx, "t", "b", nil)
	errs = append(errs, err)

	var text strings.Builder
	for _, err := range errs {
		require.Error(t, err)
		fmt.Fprintf(&text, "%v\n%+v\n%#v\n", err, err, err)
	}
	text.WriteString(logs.String())
	assert.Contains(t, text.String(), "Bearer "+secret.Mask, "the server did echo the header")
	assert.NotContains(t, text.String(), testToken)
}
