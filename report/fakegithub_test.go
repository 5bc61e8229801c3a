package report

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/report/reporttest"
)

// The fake GitHub lives in reporttest, for the tests of other packages
// too; these names keep this package's tests short.

type (
	fakeGitHub = reporttest.GitHub
	fakeFault  = reporttest.Fault
)

const (
	testToken = reporttest.Token
	testRepo  = reporttest.Repo

	routeCreate  = reporttest.RouteCreate
	routeList    = reporttest.RouteList
	routeGet     = reporttest.RouteGet
	routeEdit    = reporttest.RouteEdit
	routeComment = reporttest.RouteComment
	routeSearch  = reporttest.RouteSearch
)

var (
	newFakeGitHub      = func(t *testing.T) *fakeGitHub { return reporttest.NewGitHub(t) }
	primaryRateLimit   = reporttest.PrimaryRateLimit
	secondaryRateLimit = reporttest.SecondaryRateLimit
	tooManyRequests    = reporttest.TooManyRequests
	validationFailed   = reporttest.ValidationFailed
	statusFault        = reporttest.StatusFault
	badGateway         = reporttest.BadGateway
)

// fakeClock is the tracker's clock: Sleep moves it forward at once.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// newTestGitHub returns a tracker on fake with a fake clock and its log.
func newTestGitHub(t *testing.T, fake *fakeGitHub, edit func(*GitHubOptions)) (*GitHub, *fakeClock, *bytes.Buffer) {
	t.Helper()
	clock := newFakeClock()
	var logs bytes.Buffer
	opts := GitHubOptions{
		Repo:       testRepo,
		Token:      testToken,
		APIURL:     fake.URL(),
		HTTPClient: fake.Client(),
		Logger:     slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sleep:      clock.Sleep,
		Now:        clock.Now,
	}
	if edit != nil {
		edit(&opts)
	}
	g, err := NewGitHub(opts)
	require.NoError(t, err)
	return g, clock, &logs
}
