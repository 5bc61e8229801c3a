package report

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/secret"
)

// GitHubOptions configure a GitHub tracker.
type GitHubOptions struct {
	// Repo is "owner/name".
	Repo string
	// Token authenticates every request. The caller reads it from the
	// variable named by github.token_env; it never appears in an error or a
	// log line of this package.
	Token string
	// APIURL is the REST endpoint; empty or https://api.github.com/ for
	// github.com, otherwise a GitHub Enterprise Server URL (the /api/v3/
	// suffix is added when missing). It is https, or http for a loopback
	// host only.
	APIURL string
	// HTTPClient carries the requests; nil means a client with a 30 s
	// timeout. NewGitHub uses a copy that sends the token to the host of
	// APIURL only and refuses a redirect to any other host.
	HTTPClient *http.Client
	// Label is the label every perfbot issue carries (one of the Filer's
	// Labels); Find lists the issues with it before it falls back to the
	// search API. Default "perf-regression".
	Label  string
	Logger *slog.Logger
	// MaxWait is the longest wait for a rate limit to reset; a longer one
	// fails the call at once. Default 10 minutes.
	MaxWait time.Duration
	// Retries is how many times a failed request is tried again after a
	// rate limit, a 5xx or a network error. Default 4; negative means never.
	Retries int
	// Sleep and Now are the clock; tests replace them. Defaults wait on a
	// timer (returning early with ctx's error) and read time.Now.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

// GitHub is a Tracker that files issues in one GitHub repository through
// go-github.
//
// Failures are sorted three ways. A rate limit (403 with no requests
// remaining, a secondary limit, a 429) waits until GitHub says, up to
// MaxWait, and no request is sent before then. A 5xx or a network error is
// retried with exponential backoff. Anything else (401, 403, 404, 410, 422,
// a redirect away from the API host) is a *FileError at once, never
// retried. The token goes to the API host only.
type GitHub struct {
	owner, name string
	opts        GitHubOptions
	newClient   func() *github.Client
	pageSize    int

	mu sync.Mutex
	// client is replaced after every rate-limit wait: go-github remembers
	// the limit against the wall clock and refuses requests locally until
	// then, while the wait here follows opts.Now and opts.Sleep.
	client   *github.Client
	resumeAt time.Time // no request before this; a rate limit said so
}

var _ Tracker = (*GitHub)(nil)

const (
	defaultLabel   = "perf-regression"
	defaultMaxWait = 10 * time.Minute
	defaultRetries = 4
	backoffBase    = 2 * time.Second
	backoffMax     = time.Minute
	// secondaryWait is GitHub's advice for a secondary limit that names
	// no time: "wait for at least one minute".
	secondaryWait = time.Minute
)

// NewGitHub returns a tracker for opts.Repo.
func NewGitHub(opts GitHubOptions) (*GitHub, error) {
	owner, name, ok := strings.Cut(opts.Repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("github repo %q: want owner/name", opts.Repo)
	}
	if opts.Token == "" {
		return nil, errors.New("github token is empty: set the variable named by github.token_env")
	}
	enterprise, err := enterpriseURL(opts.APIURL)
	if err != nil {
		return nil, err
	}
	api := apiEndpoint{scheme: "https", host: "api.github.com"}
	if enterprise != "" {
		u, _ := url.Parse(enterprise) // checked by enterpriseURL
		api = apiEndpoint{scheme: u.Scheme, host: u.Host}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	client := tokenClient(opts.HTTPClient, api, opts.Token)
	if opts.Label == "" {
		opts.Label = defaultLabel
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = defaultMaxWait
	}
	switch {
	case opts.Retries == 0:
		opts.Retries = defaultRetries
	case opts.Retries < 0:
		opts.Retries = 0
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	g := &GitHub{owner: owner, name: name, opts: opts, pageSize: 100}
	g.newClient = func() *github.Client {
		c := github.NewClient(client)
		if enterprise != "" {
			// Checked by enterpriseURL.
			c, _ = c.WithEnterpriseURLs(enterprise, enterprise)
		}
		return c
	}
	g.client = g.newClient()
	return g, nil
}

// enterpriseURL returns apiURL when it names a GitHub Enterprise Server,
// or "" for github.com. Plain http is taken for a loopback host only (a
// test server, a local proxy): anywhere else the token would cross the
// network in clear.
func enterpriseURL(apiURL string) (string, error) {
	if apiURL == "" {
		return "", nil
	}
	u, err := url.Parse(apiURL)
	if err != nil {
		return "", fmt.Errorf("github.api_url: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return "", fmt.Errorf("github.api_url %q: want an http(s) URL such as https://github.example.com/api/v3/", apiURL)
	}
	if u.User != nil {
		return "", fmt.Errorf("github.api_url %s: must not hold credentials; the token goes in github.token_env", u.Redacted())
	}
	if u.Scheme == "http" && !secret.IsLoopback(u.Hostname()) {
		return "", fmt.Errorf("github.api_url %q sends the token in clear: use https, or http only for a loopback host (127.0.0.1, ::1, localhost)", apiURL)
	}
	if u.Host == "api.github.com" {
		return "", nil
	}
	if _, err := github.NewClient(nil).WithEnterpriseURLs(apiURL, apiURL); err != nil {
		return "", fmt.Errorf("github.api_url %q: %w", apiURL, err)
	}
	return apiURL, nil
}

// apiEndpoint is the only place the token goes: the API URL's scheme and
// host (with its port).
type apiEndpoint struct{ scheme, host string }

func (e apiEndpoint) matches(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, e.scheme) && strings.EqualFold(u.Host, e.host)
}

// tokenClient returns a copy of c that authenticates requests to api with
// the token and refuses to follow a redirect anywhere else. go-github's own
// WithAuthToken adds the token in the transport, to every request the
// client sends, so a redirect to another host would carry it there; the
// http.Client's habit of dropping Authorization on such a redirect does
// not apply to a header the transport adds.
func tokenClient(c *http.Client, api apiEndpoint, token string) *http.Client {
	out := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = &tokenTransport{api: api, token: token, base: base}
	next := c.CheckRedirect
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !api.matches(req.URL) {
			return &redirectError{to: req.URL.Host, api: api.host}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &out
}

// tokenTransport adds the token to the requests for the API host only.
type tokenTransport struct {
	api   apiEndpoint
	token string
	base  http.RoundTripper
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if t.api.matches(req.URL) {
		req.Header.Set("Authorization", "Bearer "+t.token)
	} else {
		req.Header.Del("Authorization")
	}
	return t.base.RoundTrip(req)
}

// redirectError is a redirect away from the API host, refused.
type redirectError struct{ to, api string }

func (e *redirectError) Error() string {
	return fmt.Sprintf("redirect to %s refused: the token goes only to %s, the host of github.api_url", e.to, e.api)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (g *GitHub) repo() string { return g.owner + "/" + g.name }

// Get returns issue number.
func (g *GitHub) Get(ctx context.Context, number int) (Issue, error) {
	var iss *github.Issue
	err := g.call(ctx, fmt.Sprintf("get issue %d of %s", number, g.repo()), func(c *github.Client, _ int) (resp *github.Response, err error) {
		iss, resp, err = c.Issues.Get(ctx, g.owner, g.name, number)
		return resp, err
	})
	if err != nil {
		return Issue{}, err
	}
	return toIssue(iss), nil
}

// Find looks for the issue whose body ends with the fingerprint's marker:
// first among the issues labelled opts.Label, open or closed, then through
// the search API, which is eventually consistent and may not index HTML
// comments, but also finds an issue whose label was removed.
func (g *GitHub) Find(ctx context.Context, fingerprint string) (Issue, bool, error) {
	iss, ok, err := g.findListed(ctx, fingerprint)
	if err != nil || ok {
		return iss, ok, err
	}
	return g.findSearched(ctx, fingerprint)
}

func (g *GitHub) findListed(ctx context.Context, fp string) (Issue, bool, error) {
	op := fmt.Sprintf("list issues labelled %s in %s", g.opts.Label, g.repo())
	opt := &github.IssueListByRepoOptions{
		State:       "all",
		Labels:      []string{g.opts.Label},
		ListOptions: github.ListOptions{PerPage: g.pageSize},
	}
	for page := 1; page != 0; {
		if err := ctx.Err(); err != nil {
			return Issue{}, false, fmt.Errorf("%s: %w", op, err)
		}
		opt.Page = page
		var issues []*github.Issue
		var next int
		err := g.call(ctx, op, func(c *github.Client, _ int) (*github.Response, error) {
			var resp *github.Response
			var err error
			issues, resp, err = c.Issues.ListByRepo(ctx, g.owner, g.name, opt)
			if resp != nil {
				next = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return Issue{}, false, err
		}
		if iss := withMarker(issues, fp); iss != nil {
			return toIssue(iss), true, nil
		}
		page = next
	}
	return Issue{}, false, nil
}

func (g *GitHub) findSearched(ctx context.Context, fp string) (Issue, bool, error) {
	// The fingerprint is one alphanumeric word, so search matches it whole.
	query := fmt.Sprintf("repo:%s is:issue in:body %s", g.repo(), fp)
	var res *github.IssuesSearchResult
	err := g.call(ctx, "search issues of "+g.repo(), func(c *github.Client, _ int) (resp *github.Response, err error) {
		res, resp, err = c.Search.Issues(ctx, query, &github.SearchOptions{ListOptions: github.ListOptions{PerPage: 10}})
		return resp, err
	})
	if err != nil {
		return Issue{}, false, err
	}
	if iss := withMarker(res.Issues, fp); iss != nil {
		return toIssue(iss), true, nil
	}
	return Issue{}, false, nil
}

// withMarker returns the issue among issues whose body ends with fp's
// marker; a search hit on the bare word, or the marker quoted higher up
// in a body, is not enough.
func withMarker(issues []*github.Issue, fp string) *github.Issue {
	for _, iss := range issues {
		if iss.IsPullRequest() {
			continue
		}
		if got, ok := fingerprintIn(iss.GetBody()); ok && got == fp {
			return iss
		}
	}
	return nil
}

// Create files a new issue. If an attempt fails in a way that may have
// created the issue anyway (a 502 after GitHub stored it, a lost response),
// the retry first looks for the body's marker among the newest issues, so
// one regression never gets two issues. Title and body are sent as given:
// the Filer scrubs what it renders (RenderScrubbed).
func (g *GitHub) Create(ctx context.Context, title, body string, labels []string) (Issue, error) {
	fp, hasMarker := fingerprintIn(body)
	req := &github.IssueRequest{Title: github.String(title), Body: github.String(body)}
	if len(labels) > 0 {
		req.Labels = &labels
	}
	var iss *github.Issue
	err := g.call(ctx, "create issue in "+g.repo(), func(c *github.Client, attempt int) (*github.Response, error) {
		if attempt > 0 && hasMarker {
			recent, resp, err := c.Issues.ListByRepo(ctx, g.owner, g.name, &github.IssueListByRepoOptions{
				State: "all", Sort: "created", Direction: "desc", ListOptions: github.ListOptions{PerPage: 30},
			})
			if err != nil {
				return resp, err
			}
			if iss = withMarker(recent, fp); iss != nil {
				g.opts.Logger.Info("github: a failed attempt had created the issue", "issue", iss.GetNumber())
				return resp, nil
			}
		}
		var resp *github.Response
		var err error
		iss, resp, err = c.Issues.Create(ctx, g.owner, g.name, req)
		return resp, err
	})
	if err != nil {
		return Issue{}, err
	}
	return toIssue(iss), nil
}

// Comment adds a comment to issue number; body is sent as given.
func (g *GitHub) Comment(ctx context.Context, number int, body string) error {
	return g.call(ctx, fmt.Sprintf("comment on issue %d of %s", number, g.repo()), func(c *github.Client, _ int) (*github.Response, error) {
		_, resp, err := c.Issues.CreateComment(ctx, g.owner, g.name, number, &github.IssueComment{Body: github.String(body)})
		return resp, err
	})
}

// Reopen sets issue number's state to open.
func (g *GitHub) Reopen(ctx context.Context, number int) error {
	return g.call(ctx, fmt.Sprintf("reopen issue %d of %s", number, g.repo()), func(c *github.Client, _ int) (*github.Response, error) {
		_, resp, err := c.Issues.Edit(ctx, g.owner, g.name, number, &github.IssueRequest{State: github.String(IssueOpen)})
		return resp, err
	})
}

func toIssue(iss *github.Issue) Issue {
	return Issue{Number: iss.GetNumber(), URL: iss.GetHTMLURL(), State: iss.GetState()}
}

// call runs do, the requests of one operation, under the retry policy. Its
// errors are this package's own and hold no go-github value: those keep
// the request, whose Authorization header holds the token.
func (g *GitHub) call(ctx context.Context, op string, do func(c *github.Client, attempt int) (*github.Response, error)) error {
	for attempt := 0; ; attempt++ {
		if err := g.awaitResume(ctx, op); err != nil {
			return err
		}
		resp, err := do(g.currentClient(), attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", op, ctx.Err())
		}
		f := g.classify(err, resp, attempt)
		if f.permanent {
			return &FileError{Op: op, Status: f.status, Msg: f.msg}
		}
		if attempt >= g.opts.Retries {
			// GitHub unreachable or failing: the infrastructure's fault.
			return &record.InfraError{Op: op, Err: fmt.Errorf("giving up after %d attempts: %s", attempt+1, f.msg)}
		}
		g.opts.Logger.Warn("github request failed; retrying", "op", op, "attempt", attempt+1, "status", f.status, "wait", f.wait, "err", f.msg)
		if f.rateLimited {
			if f.wait > g.opts.MaxWait {
				g.setResume(g.opts.Now().Add(f.wait))
				return &record.InfraError{Op: op, Err: fmt.Errorf("%s; it resets in %s, more than the %s allowed to wait", f.msg, f.wait.Round(time.Second), g.opts.MaxWait)}
			}
			g.setResume(g.opts.Now().Add(f.wait))
			continue
		}
		if err := g.opts.Sleep(ctx, f.wait); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
}

// awaitResume waits out a rate limit seen earlier, or fails at once when
// the wait is longer than MaxWait.
func (g *GitHub) awaitResume(ctx context.Context, op string) error {
	g.mu.Lock()
	resume := g.resumeAt
	g.mu.Unlock()
	if resume.IsZero() {
		return nil
	}
	wait := resume.Sub(g.opts.Now())
	if wait > g.opts.MaxWait {
		return fmt.Errorf("%s: rate limited for %s more, longer than the %s allowed to wait", op, wait.Round(time.Second), g.opts.MaxWait)
	}
	if wait > 0 {
		if err := g.opts.Sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s: waiting for the rate limit: %w", op, err)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.resumeAt = time.Time{}
	g.client = g.newClient()
	return nil
}

func (g *GitHub) setResume(t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.After(g.resumeAt) {
		g.resumeAt = t
	}
}

func (g *GitHub) currentClient() *github.Client {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.client
}

// failure is a classified, token-free error.
type failure struct {
	status      int
	msg         string
	wait        time.Duration
	rateLimited bool
	permanent   bool
}

func (g *GitHub) classify(err error, resp *github.Response, attempt int) failure {
	var (
		rate  *github.RateLimitError
		abuse *github.AbuseRateLimitError
		twoFA *github.TwoFactorAuthError
		api   *github.ErrorResponse
		uerr  *url.Error
	)
	backoff := min(backoffBase<<attempt, backoffMax)
	var redirect *redirectError
	switch {
	case errors.As(err, &redirect):
		return failure{permanent: true, msg: redirect.Error()}
	case errors.As(err, &rate):
		wait := secondaryWait
		if !rate.Rate.Reset.IsZero() {
			// One second more: the reset time is truncated to seconds.
			wait = rate.Rate.Reset.Sub(g.opts.Now()) + time.Second
		}
		return failure{status: http.StatusForbidden, rateLimited: true, wait: max(wait, 0),
			msg: g.scrub(fmt.Sprintf("rate limit of %d requests exhausted: %s", rate.Rate.Limit, rate.Message))}
	case errors.As(err, &abuse):
		wait := secondaryWait
		if abuse.RetryAfter != nil && *abuse.RetryAfter > 0 {
			wait = *abuse.RetryAfter
		}
		return failure{status: http.StatusForbidden, rateLimited: true, wait: wait,
			msg: g.scrub("secondary rate limit: " + abuse.Message)}
	case errors.As(err, &twoFA):
		return failure{status: http.StatusUnauthorized, permanent: true, msg: "the account requires a one-time password; use a token"}
	case errors.As(err, &api):
		status := 0
		if api.Response != nil {
			status = api.Response.StatusCode
		}
		msg := g.scrub(apiMessage(api, status, g.repo()))
		switch {
		case status == http.StatusTooManyRequests:
			return failure{status: status, rateLimited: true, wait: retryAfter(api.Response, g.opts.Now()), msg: msg}
		case status >= 500:
			return failure{status: status, wait: backoff, msg: msg}
		}
		return failure{status: status, permanent: true, msg: msg}
	case errors.As(err, &uerr):
		// The URL goes without its query and user; the error inside is the
		// transport's (connection refused, reset, timeout).
		return failure{wait: backoff, msg: g.scrub(fmt.Sprintf("%s %s: %v", uerr.Op, redactURL(uerr.URL), uerr.Err))}
	}
	status := 0
	if resp != nil && resp.Response != nil {
		status = resp.StatusCode
	}
	return failure{status: status, wait: backoff, msg: g.scrub(err.Error())}
}

// apiMessage describes GitHub's refusal with its validation errors and a
// hint at the usual cause.
func apiMessage(e *github.ErrorResponse, status int, repo string) string {
	var b strings.Builder
	b.WriteString(http.StatusText(status))
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	for _, v := range e.Errors {
		if v.Message != "" {
			b.WriteString("; " + v.Message)
		} else {
			fmt.Fprintf(&b, "; %s %s is %s", v.Resource, v.Field, v.Code)
		}
	}
	switch status {
	case http.StatusUnauthorized:
		b.WriteString(" (the token is invalid or expired)")
	case http.StatusForbidden:
		b.WriteString(" (the token may not write issues in " + repo + ")")
	case http.StatusNotFound:
		b.WriteString(" (no repository " + repo + ", or the token cannot see it)")
	case http.StatusGone:
		b.WriteString(" (issues are disabled in " + repo + ")")
	}
	return b.String()
}

// retryAfter reads a 429's Retry-After seconds, else GitHub's advice of a
// minute.
func retryAfter(r *http.Response, now time.Time) time.Duration {
	if r == nil {
		return secondaryWait
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if r.Header.Get("X-RateLimit-Remaining") == "0" {
		if s, err := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(s, 0).Sub(now)+time.Second, 0)
		}
	}
	return secondaryWait
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// scrub masks the token, and anything shaped like a credential, in s: in
// an answer, in case a server or proxy echoed it.
func (g *GitHub) scrub(s string) string {
	return secret.Scrub(s, []string{g.opts.Token})
}
