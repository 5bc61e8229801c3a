// Package server is perfbot's HTTP face: the JSON API and the dashboard
// that `perfbot serve` serves and that the other commands use while a
// server holds the store. It reads through package views and changes
// through package service (the queue and triage); neither imports it.
//
//	GET  /healthz                     200 "ok"
//	GET  /api/history?metric=&since=&limit=&cursor=
//	GET  /api/commits/{sha}           a commit (hash or unique prefix): runs, metrics, fingerprint
//	GET  /api/compare?a=&b=           two commits side by side
//	GET  /api/jobs?limit=&cursor=     the jobs, newest first, without traces
//	GET  /api/jobs/{id}               one job with its trace
//	GET  /api/findings?limit=&cursor= the findings, newest first, with their triage
//	GET  /api/findings/{id}           a finding (its id or a unique prefix) with its triage
//	POST /api/jobs {"kind","request"} enqueue a job (bearer token); 202 {"id"}
//	POST /api/bisect {BisectRequest}  enqueue a bisection (bearer token); 202 {"id"}
//	POST /api/nightly                 enqueue a nightly cycle now (bearer token); 202 {"id"}
//	POST /api/findings/{id}/triage {"state","note"}  triage a finding (bearer token)
//	GET  /metrics                     Prometheus metrics (see metrics.go)
//	GET  /                            the dashboard (see dashboard.go)
//
// A list comes a page at a time (see page.go). A request whose Host
// header does not name the server gets 421 (see hosts.go). Bad parameters get 400 with a JSON error naming the parameter; a job,
// commit or finding that does not exist gets 404. Mutations need
// "Authorization: Bearer <token>" with one of the tokens the server was
// given: without one, or with a wrong one, 401. A server given no token
// refuses every mutation with 403 Forbidden and changes nothing: no
// credential could make the request succeed, which is what 403 says and
// 401 (which asks for credentials) does not.
package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/views"
)

// Reader is what the server reads: the read side, a *views.Views.
type Reader interface {
	HistoryPage(ctx context.Context, q views.HistoryQuery, after string) ([]views.HistoryRow, string, error)
	JobsPage(ctx context.Context, after string, limit int) ([]store.Job, string, error)
	Job(ctx context.Context, id string) (views.JobView, error)
	FindingsPage(ctx context.Context, after string, limit int) ([]record.Finding, string, error)
	Finding(ctx context.Context, name string) (record.Finding, error)
	Commit(ctx context.Context, rev string) (*views.CommitView, error)
	Compare(ctx context.Context, a, b string) (*views.Comparison, error)
	Dashboard(ctx context.Context) (*views.Dashboard, error)
}

var _ Reader = (*views.Views)(nil)

// Writer is what the server changes the store through, a *service.Bot:
// it queues jobs and records triage decisions.
type Writer interface {
	Enqueue(kind record.JobKind, req any) (string, error)
	Triage(ctx context.Context, name string, req service.TriageRequest) (record.Finding, error)
}

// Options configures New.
type Options struct {
	// Tokens are the bearer tokens that may mutate; none refuses every
	// mutation.
	Tokens []string
	// Enqueued is called after a job was queued (to wake the worker).
	Enqueued func()
	// Vitals reads what /metrics exposes; nil takes the Reader's own
	// reader when it has one (a *views.Views), else /metrics exposes only
	// the Go runtime's metrics.
	Vitals VitalsReader
	// Now is the clock of the nightly cycles POST /api/nightly queues;
	// nil is time.Now.
	Now func() time.Time
	// Listen is the address served (host:port); requests whose Host
	// header names another host are refused (see hosts.go). Empty accepts
	// localhost names and loopback addresses only.
	Listen string
}

// New returns the handler of the API and the dashboard, which read through
// r and change the store through w. A nil w, or no token in opts, makes a
// read-only server: it refuses every change.
func New(r Reader, w Writer, opts Options) http.Handler {
	s := &srv{read: r, write: w, opts: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /api/history", s.history)
	mux.HandleFunc("GET /api/jobs", s.jobs)
	mux.HandleFunc("GET /api/jobs/{id}", s.job)
	mux.HandleFunc("POST /api/jobs", s.authorized(s.enqueue))
	mux.HandleFunc("GET /api/commits/{sha}", s.commit)
	mux.HandleFunc("GET /api/compare", s.compare)
	mux.HandleFunc("GET /api/findings", s.findings)
	mux.HandleFunc("GET /api/findings/{id}", s.finding)
	mux.HandleFunc("POST /api/bisect", s.authorized(s.bisect))
	mux.HandleFunc("POST /api/nightly", s.authorized(s.nightly))
	mux.HandleFunc("POST /api/findings/{id}/triage", s.authorized(s.triage))
	mux.Handle("GET /metrics", s.metricsHandler())
	s.dashboardRoutes(mux)
	return hostCheck(opts.Listen, mux)
}

type srv struct {
	read  Reader
	write Writer
	opts  Options
}

// Error is the body of every error answer.
type Error struct {
	Error string `json:"error"`
	// Param names the query parameter or field at fault, when one is.
	Param string `json:"param,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func badParam(w http.ResponseWriter, param string, err error) {
	writeJSON(w, http.StatusBadRequest, Error{Error: err.Error(), Param: param})
}

// fail answers err with the status its kind calls for.
func fail(w http.ResponseWriter, err error) {
	var ie *record.InputError
	switch {
	case errors.As(err, &ie):
		writeJSON(w, http.StatusBadRequest, Error{Error: err.Error()})
	default:
		writeJSON(w, http.StatusInternalServerError, Error{Error: err.Error()})
	}
}

func (s *srv) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	hq := views.HistoryQuery{Metric: q.Get("metric"), Fingerprints: q.Get("fingerprints") == "true"}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			badParam(w, "since", fmt.Errorf("since %q: want an RFC 3339 time such as 2026-11-30T02:00:00Z", v))
			return
		}
		hq.Since = t
	}
	limit, cursor, ok := pageParams(w, r)
	if !ok {
		return
	}
	hq.Limit = limit
	rows, next, err := s.read.HistoryPage(r.Context(), hq, cursor)
	var ie *record.InputError
	if errors.As(err, &ie) {
		param := "metric"
		if errors.Is(err, store.ErrBadCursor) {
			param = "cursor"
		}
		badParam(w, param, err)
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	writePage(w, r, rows, next)
}

func (s *srv) jobs(w http.ResponseWriter, r *http.Request) {
	limit, cursor, ok := pageParams(w, r)
	if !ok {
		return
	}
	jobs, next, err := s.read.JobsPage(r.Context(), cursor, limit)
	var ie *record.InputError
	if errors.As(err, &ie) {
		badParam(w, "cursor", err)
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	writePage(w, r, jobs, next)
}

func (s *srv) job(w http.ResponseWriter, r *http.Request) {
	v, err := s.read.Job(r.Context(), r.PathValue("id"))
	var ie *record.InputError
	if errors.As(err, &ie) {
		writeJSON(w, http.StatusNotFound, Error{Error: err.Error(), Param: "id"})
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// EnqueueRequest is the body of POST /api/jobs.
type EnqueueRequest struct {
	Kind    record.JobKind  `json:"kind"`
	Request json.RawMessage `json:"request"`
}

// EnqueueResponse answers it.
type EnqueueResponse struct {
	ID string `json:"id"`
}

func (s *srv) enqueue(w http.ResponseWriter, r *http.Request) {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	var req EnqueueRequest
	if err := dec.Decode(&req); err != nil {
		badParam(w, "body", fmt.Errorf("body: %w", err))
		return
	}
	if !req.Kind.Valid() {
		badParam(w, "kind", fmt.Errorf("kind %q: want one of %v", req.Kind, service.Kinds()))
		return
	}
	if len(req.Request) == 0 {
		badParam(w, "request", errors.New("request: missing"))
		return
	}
	if err := service.CheckRequest(req.Kind, req.Request); err != nil {
		badParam(w, "request", err)
		return
	}
	s.queue(w, req.Kind, req.Request)
}

// authorized lets a request through only with one of the tokens.
func (s *srv) authorized(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if len(s.opts.Tokens) == 0 || s.write == nil {
			writeJSON(w, http.StatusForbidden, Error{Error: "this server accepts no changes: no API token is configured"})
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok {
			for _, t := range s.opts.Tokens {
				if t != "" && subtle.ConstantTimeCompare([]byte(got), []byte(t)) == 1 {
					next(w, r)
					return
				}
			}
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="perfbot"`)
		writeJSON(w, http.StatusUnauthorized, Error{Error: "missing or wrong bearer token"})
	}
}
