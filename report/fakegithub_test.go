package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeGitHub speaks the REST shapes the GitHub tracker uses, under
// /api/v3/ as GitHub Enterprise Server does, and answers with GitHub's
// documented error bodies and headers when a fault is queued.

const (
	testToken = "ghp_TESTtoken0123456789abcdefSECRET"
	testRepo  = "perfbot/infer"
)

// Routes, for counting requests and queueing faults.
const (
	routeCreate  = "POST /issues"
	routeList    = "GET /issues"
	routeGet     = "GET /issue"
	routeEdit    = "PATCH /issue"
	routeComment = "POST /comments"
	routeSearch  = "GET /search"
)

type fakeIssue struct {
	Number   int
	Title    string
	Body     string
	State    string
	Labels   []string
	Comments []string
}

type fakeFault struct {
	status int
	header map[string]string
	body   string
	// apply performs the request before answering with the fault, as when
	// a proxy times out after GitHub stored the issue.
	apply bool
	// drop closes the connection without an answer.
	drop bool
}

type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server
	// echoAuth makes error messages quote the Authorization header, as a
	// careless proxy might.
	echoAuth bool

	mu       sync.Mutex
	issues   []*fakeIssue
	requests map[string]int
	faults   map[string][]fakeFault
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{t: t, requests: map[string]int{}, faults: map[string][]fakeFault{}}
	base := "/api/v3/repos/" + testRepo
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+base+"/issues", f.route(routeCreate, f.create))
	mux.HandleFunc("GET "+base+"/issues", f.route(routeList, f.list))
	mux.HandleFunc("GET "+base+"/issues/{n}", f.route(routeGet, f.get))
	mux.HandleFunc("PATCH "+base+"/issues/{n}", f.route(routeEdit, f.edit))
	mux.HandleFunc("POST "+base+"/issues/{n}/comments", f.route(routeComment, f.comment))
	mux.HandleFunc("GET /api/v3/search/issues", f.route(routeSearch, f.search))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// fail queues faults for the next requests of route.
func (f *fakeGitHub) fail(route string, faults ...fakeFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[route] = append(f.faults[route], faults...)
}

func (f *fakeGitHub) count(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[route]
}

func (f *fakeGitHub) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.requests {
		n += c
	}
	return n
}

// add stores an issue directly, as if a person had filed it.
func (f *fakeGitHub) add(title, body, state string, labels ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.issues) + 1
	f.issues = append(f.issues, &fakeIssue{Number: n, Title: title, Body: body, State: state, Labels: labels})
	return n
}

func (f *fakeGitHub) issue(n int) fakeIssue {
	f.mu.Lock()
	defer f.mu.Unlock()
	require.True(f.t, n >= 1 && n <= len(f.issues), "no issue %d", n)
	iss := *f.issues[n-1]
	iss.Comments = append([]string(nil), iss.Comments...)
	return iss
}

func (f *fakeGitHub) setState(n int, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.issues[n-1].State = state
}

func (f *fakeGitHub) issueCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.issues)
}

func (f *fakeGitHub) route(name string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests[name]++
		var fault *fakeFault
		if q := f.faults[name]; len(q) > 0 {
			fault, f.faults[name] = &q[0], q[1:]
		}
		f.mu.Unlock()

		if r.Header.Get("Authorization") != "Bearer "+testToken {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
			return
		}
		if fault == nil {
			h(w, r)
			return
		}
		if fault.drop {
			conn, _, err := http.NewResponseController(w).Hijack()
			require.NoError(f.t, err)
			conn.Close()
			return
		}
		if fault.apply {
			h(httptest.NewRecorder(), r)
		}
		for k, v := range fault.header {
			w.Header().Set(k, v)
		}
		body := fault.body
		if f.echoAuth {
			body = strings.Replace(body, `"message":"`, `"message":"(`+r.Header.Get("Authorization")+`) `, 1)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(fault.status)
		fmt.Fprint(w, body)
	}
}

func (f *fakeGitHub) issueJSON(iss *fakeIssue) map[string]any {
	labels := make([]map[string]string, len(iss.Labels))
	for i, l := range iss.Labels {
		labels[i] = map[string]string{"name": l}
	}
	return map[string]any{
		"number":   iss.Number,
		"html_url": fmt.Sprintf("https://github.example.com/%s/issues/%d", testRepo, iss.Number),
		"state":    iss.State,
		"title":    iss.Title,
		"body":     iss.Body,
		"labels":   labels,
	}
}

func (f *fakeGitHub) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Title  string   `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Title == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": []map[string]string{{"resource": "Issue", "field": "title", "code": "missing_field"}}})
		return
	}
	n := f.add(req.Title, req.Body, IssueOpen, req.Labels...)
	f.mu.Lock()
	defer f.mu.Unlock()
	writeJSON(w, http.StatusCreated, f.issueJSON(f.issues[n-1]))
}

func (f *fakeGitHub) lookup(w http.ResponseWriter, r *http.Request) *fakeIssue {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 || n > len(f.issues) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/issues/issues#get-an-issue"})
		return nil
	}
	return f.issues[n-1]
}

func (f *fakeGitHub) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if iss := f.lookup(w, r); iss != nil {
		writeJSON(w, http.StatusOK, f.issueJSON(iss))
	}
}

func (f *fakeGitHub) edit(w http.ResponseWriter, r *http.Request) {
	var req struct {
		State string `json:"state"`
	}
	require.NoError(f.t, json.NewDecoder(r.Body).Decode(&req))
	f.mu.Lock()
	defer f.mu.Unlock()
	if iss := f.lookup(w, r); iss != nil {
		if req.State != "" {
			iss.State = req.State
		}
		writeJSON(w, http.StatusOK, f.issueJSON(iss))
	}
}

func (f *fakeGitHub) comment(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Body string `json:"body"`
	}
	require.NoError(f.t, json.NewDecoder(r.Body).Decode(&req))
	f.mu.Lock()
	defer f.mu.Unlock()
	if iss := f.lookup(w, r); iss != nil {
		iss.Comments = append(iss.Comments, req.Body)
		writeJSON(w, http.StatusCreated, map[string]any{"id": 1000 + len(iss.Comments), "body": req.Body})
	}
}

// list answers newest first, filtered by labels and state, a page at a
// time with GitHub's Link header.
func (f *fakeGitHub) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = IssueOpen
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	f.mu.Lock()
	var match []map[string]any
	for i := len(f.issues) - 1; i >= 0; i-- {
		iss := f.issues[i]
		if (state == "all" || iss.State == state) && hasAll(iss.Labels, want) {
			match = append(match, f.issueJSON(iss))
		}
	}
	f.mu.Unlock()
	perPage, page := atoiOr(q.Get("per_page"), 30), atoiOr(q.Get("page"), 1)
	lo, hi := min((page-1)*perPage, len(match)), min(page*perPage, len(match))
	if hi < len(match) {
		next := *r.URL
		nq := next.Query()
		nq.Set("page", strconv.Itoa(page+1))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, f.srv.URL, next.RequestURI()))
	}
	writeJSON(w, http.StatusOK, append([]map[string]any{}, match[lo:hi]...))
}

// search finds issues whose body holds the query's perfbot fingerprint.
func (f *fakeGitHub) search(w http.ResponseWriter, r *http.Request) {
	var word string
	for _, term := range strings.Fields(r.URL.Query().Get("q")) {
		if strings.HasPrefix(term, "perfbotfp") {
			word = term
		}
	}
	f.mu.Lock()
	items := []map[string]any{}
	for _, iss := range f.issues {
		if word != "" && strings.Contains(iss.Body, word) {
			items = append(items, f.issueJSON(iss))
		}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(items), "incomplete_results": false, "items": items})
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	return def
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// GitHub's documented error answers.

func primaryRateLimit(reset time.Time) fakeFault {
	return fakeFault{status: http.StatusForbidden,
		header: map[string]string{
			"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
			"X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10), "X-RateLimit-Resource": "core",
		},
		body: `{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`,
	}
}

func secondaryRateLimit(retryAfter string) fakeFault {
	return fakeFault{status: http.StatusForbidden,
		header: map[string]string{"Retry-After": retryAfter},
		body:   `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
	}
}

func tooManyRequests(retryAfter string) fakeFault {
	return fakeFault{status: http.StatusTooManyRequests,
		header: map[string]string{"Retry-After": retryAfter},
		body:   `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
	}
}

func validationFailed() fakeFault {
	return fakeFault{status: http.StatusUnprocessableEntity,
		body: `{"message":"Validation Failed","errors":[{"resource":"Issue","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}],"documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue"}`,
	}
}

func statusFault(status int, msg string) fakeFault {
	return fakeFault{status: status, body: `{"message":"` + msg + `","documentation_url":"https://docs.github.com/rest"}`}
}

func badGateway() fakeFault {
	return fakeFault{status: http.StatusBadGateway, body: "<html><body><h1>502 Bad Gateway</h1></body></html>"}
}

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
		APIURL:     fake.srv.URL,
		HTTPClient: fake.srv.Client(),
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
