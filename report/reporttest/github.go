// Package reporttest holds a fake GitHub for the tests of the packages that
// file issues: an httptest server that speaks the REST shapes report's
// GitHub tracker uses, under /api/v3/ as GitHub Enterprise Server does, and
// answers with GitHub's documented error bodies and headers when a fault is
// queued.
package reporttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Token is the only token the fake accepts; Repo is the only repository it
// serves.
const (
	Token = "ghp_TESTtoken0123456789abcdefSECRET"
	Repo  = "perfbot/infer"
)

// Routes, for counting requests and queueing faults.
const (
	RouteCreate  = "POST /issues"
	RouteList    = "GET /issues"
	RouteGet     = "GET /issue"
	RouteEdit    = "PATCH /issue"
	RouteComment = "POST /comments"
	RouteSearch  = "GET /search"
)

// The states of an issue, as GitHub spells them.
const (
	stateOpen = "open"
)

// Issue is an issue the fake holds.
type Issue struct {
	Number   int
	Title    string
	Body     string
	State    string
	Labels   []string
	Comments []string
}

// Fault is the answer to one request instead of the normal one.
type Fault struct {
	Status int
	Header map[string]string
	Body   string
	// Apply performs the request before answering with the fault, as when
	// a proxy times out after GitHub stored the issue.
	Apply bool
	// Drop closes the connection without an answer.
	Drop bool
}

// GitHub is the fake server. Its methods are safe for concurrent use.
type GitHub struct {
	t   testing.TB
	srv *httptest.Server
	// EchoAuth makes error messages quote the Authorization header, as a
	// careless proxy might.
	EchoAuth bool

	mu       sync.Mutex
	issues   []*Issue
	requests map[string]int
	faults   map[string][]Fault
	pulls    []*PullRequest
}

// NewGitHub starts a fake GitHub that stops when the test ends.
func NewGitHub(t testing.TB) *GitHub {
	f := &GitHub{t: t, requests: map[string]int{}, faults: map[string][]Fault{}}
	base := "/api/v3/repos/" + Repo
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+base+"/issues", f.route(RouteCreate, f.create))
	mux.HandleFunc("GET "+base+"/issues", f.route(RouteList, f.list))
	mux.HandleFunc("GET "+base+"/issues/{n}", f.route(RouteGet, f.get))
	mux.HandleFunc("PATCH "+base+"/issues/{n}", f.route(RouteEdit, f.edit))
	mux.HandleFunc("POST "+base+"/issues/{n}/comments", f.route(RouteComment, f.comment))
	mux.HandleFunc("GET /api/v3/search/issues", f.route(RouteSearch, f.search))
	mux.HandleFunc("POST "+base+"/pulls", f.route(RouteCreatePull, f.createPull))
	mux.HandleFunc("GET "+base+"/pulls", f.route(RouteListPulls, f.listPulls))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the server's base URL, an API URL for report.GitHubOptions.
func (f *GitHub) URL() string { return f.srv.URL }

// Client is an HTTP client for the server.
func (f *GitHub) Client() *http.Client { return f.srv.Client() }

// Fail queues faults for the next requests of route.
func (f *GitHub) Fail(route string, faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[route] = append(f.faults[route], faults...)
}

// Count is the number of requests route received.
func (f *GitHub) Count(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[route]
}

// Total is the number of requests received.
func (f *GitHub) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.requests {
		n += c
	}
	return n
}

// Add stores an issue directly, as if a person had filed it, and returns
// its number.
func (f *GitHub) Add(title, body, state string, labels ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.issues) + 1
	f.issues = append(f.issues, &Issue{Number: n, Title: title, Body: body, State: state, Labels: labels})
	return n
}

// Issue returns a copy of issue n.
func (f *GitHub) Issue(n int) Issue {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n < 1 || n > len(f.issues) {
		f.t.Fatalf("fake GitHub: no issue %d", n)
	}
	iss := *f.issues[n-1]
	iss.Comments = append([]string(nil), iss.Comments...)
	return iss
}

// SetState sets the state of issue n, as a person closing it would.
func (f *GitHub) SetState(n int, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.issues[n-1].State = state
}

// IssueCount is the number of issues the fake holds.
func (f *GitHub) IssueCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.issues)
}

func (f *GitHub) route(name string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests[name]++
		var fault *Fault
		if q := f.faults[name]; len(q) > 0 {
			fault, f.faults[name] = &q[0], q[1:]
		}
		f.mu.Unlock()

		if r.Header.Get("Authorization") != "Bearer "+Token {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
			return
		}
		if fault == nil {
			h(w, r)
			return
		}
		if fault.Drop {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				f.t.Errorf("fake GitHub: hijack: %v", err)
				return
			}
			conn.Close()
			return
		}
		if fault.Apply {
			h(httptest.NewRecorder(), r)
		}
		for k, v := range fault.Header {
			w.Header().Set(k, v)
		}
		body := fault.Body
		if f.EchoAuth {
			body = strings.Replace(body, `"message":"`, `"message":"(`+r.Header.Get("Authorization")+`) `, 1)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(fault.Status)
		fmt.Fprint(w, body)
	}
}

func (f *GitHub) issueJSON(iss *Issue) map[string]any {
	labels := make([]map[string]string, len(iss.Labels))
	for i, l := range iss.Labels {
		labels[i] = map[string]string{"name": l}
	}
	return map[string]any{
		"number":   iss.Number,
		"html_url": fmt.Sprintf("https://github.example.com/%s/issues/%d", Repo, iss.Number),
		"state":    iss.State,
		"title":    iss.Title,
		"body":     iss.Body,
		"labels":   labels,
	}
}

func (f *GitHub) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Title  string   `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Title == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": []map[string]string{{"resource": "Issue", "field": "title", "code": "missing_field"}}})
		return
	}
	n := f.Add(req.Title, req.Body, stateOpen, req.Labels...)
	f.mu.Lock()
	defer f.mu.Unlock()
	writeJSON(w, http.StatusCreated, f.issueJSON(f.issues[n-1]))
}

func (f *GitHub) lookup(w http.ResponseWriter, r *http.Request) *Issue {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 || n > len(f.issues) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/issues/issues#get-an-issue"})
		return nil
	}
	return f.issues[n-1]
}

func (f *GitHub) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if iss := f.lookup(w, r); iss != nil {
		writeJSON(w, http.StatusOK, f.issueJSON(iss))
	}
}

func (f *GitHub) edit(w http.ResponseWriter, r *http.Request) {
	var req struct {
		State string `json:"state"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.t.Errorf("fake GitHub: edit: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if iss := f.lookup(w, r); iss != nil {
		if req.State != "" {
			iss.State = req.State
		}
		writeJSON(w, http.StatusOK, f.issueJSON(iss))
	}
}

func (f *GitHub) comment(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.t.Errorf("fake GitHub: comment: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if iss := f.lookup(w, r); iss != nil {
		iss.Comments = append(iss.Comments, req.Body)
		writeJSON(w, http.StatusCreated, map[string]any{"id": 1000 + len(iss.Comments), "body": req.Body})
	}
}

// list answers newest first, filtered by labels and state, a page at a
// time with GitHub's Link header.
func (f *GitHub) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = stateOpen
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
func (f *GitHub) search(w http.ResponseWriter, r *http.Request) {
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
