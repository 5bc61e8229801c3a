package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/views"
)

// notFound answers an *record.InputError about a thing that does not
// exist with 404 naming the parameter, and any other error as fail does.
func notFound(w http.ResponseWriter, param string, err error) {
	var ie *record.InputError
	if errors.As(err, &ie) {
		writeJSON(w, http.StatusNotFound, Error{Error: err.Error(), Param: param})
		return
	}
	fail(w, err)
}

func (s *srv) commit(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	if !isHex(sha) {
		badParam(w, "sha", fmt.Errorf("sha %q: want a commit hash or a prefix of one (hex digits)", sha))
		return
	}
	v, err := s.read.Commit(r.Context(), sha)
	if err != nil {
		notFound(w, "sha", err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *srv) compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for _, p := range []string{"a", "b"} {
		if !isHex(q.Get(p)) {
			badParam(w, p, fmt.Errorf("%s %q: want a commit hash or a prefix of one (hex digits)", p, q.Get(p)))
			return
		}
	}
	c, err := s.read.Compare(r.Context(), q.Get("a"), q.Get("b"))
	if err != nil {
		notFound(w, "a", err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// isHex reports whether s is a non-empty string of hex digits no longer
// than a SHA-256 hash.
func isHex(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func (s *srv) findings(w http.ResponseWriter, r *http.Request) {
	limit, cursor, ok := pageParams(w, r)
	if !ok {
		return
	}
	fs, next, err := s.read.FindingsPage(r.Context(), cursor, limit)
	var ie *record.InputError
	if errors.As(err, &ie) {
		badParam(w, "cursor", err)
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	out := make([]views.FindingRow, 0, len(fs))
	for _, f := range fs {
		out = append(out, views.FindingRow{Finding: f, TriageState: f.TriageState()})
	}
	writePage(w, r, out, next)
}

func (s *srv) finding(w http.ResponseWriter, r *http.Request) {
	f, err := s.read.Finding(r.Context(), r.PathValue("id"))
	if err != nil {
		notFound(w, "id", err)
		return
	}
	writeJSON(w, http.StatusOK, views.FindingRow{Finding: f, TriageState: f.TriageState()})
}

// decodeBody decodes a JSON body into v, refusing unknown fields; an
// empty body leaves v as it is when empty is allowed.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, empty bool) bool {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		badParam(w, "body", fmt.Errorf("body: %w", err))
		return false
	}
	if len(data) == 0 && empty {
		return true
	}
	if err := strictJSON(data, v); err != nil {
		badParam(w, "body", fmt.Errorf("body: %w", err))
		return false
	}
	return true
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (s *srv) bisect(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || len(data) == 0 {
		badParam(w, "body", errors.New("body: want a JSON bisection request such as {\"Good\":\"a1b2c3\",\"Bad\":\"d4e5f6\"}"))
		return
	}
	if err := service.CheckRequest(record.JobBisect, data); err != nil {
		badParam(w, "body", err)
		return
	}
	s.queue(w, record.JobBisect, json.RawMessage(data))
}

// NightlyBody is the optional body of POST /api/nightly.
type NightlyBody struct {
	// Scheduled names the cycle (a cycle asked for twice in one second is
	// one job); zero is now.
	Scheduled time.Time `json:"scheduled"`
}

func (s *srv) nightly(w http.ResponseWriter, r *http.Request) {
	var body NightlyBody
	if !decodeBody(w, r, &body, true) {
		return
	}
	if body.Scheduled.IsZero() {
		now := time.Now
		if s.opts.Now != nil {
			now = s.opts.Now
		}
		body.Scheduled = now()
	}
	s.queue(w, record.JobNightly, service.NightlyRequest{Scheduled: body.Scheduled.UTC().Truncate(time.Second)})
}

func (s *srv) queue(w http.ResponseWriter, kind record.JobKind, req any) {
	id, err := s.write.Enqueue(kind, req)
	if err != nil {
		fail(w, err)
		return
	}
	if s.opts.Enqueued != nil {
		s.opts.Enqueued()
	}
	writeJSON(w, http.StatusAccepted, EnqueueResponse{ID: id})
}

func (s *srv) triage(w http.ResponseWriter, r *http.Request) {
	var req service.TriageRequest
	if !decodeBody(w, r, &req, false) {
		return
	}
	if !req.State.Valid() {
		badParam(w, "state", fmt.Errorf("state %q: want one of %v", req.State, record.Triages()))
		return
	}
	f, err := s.write.Triage(r.Context(), r.PathValue("id"), req)
	if err != nil {
		notFound(w, "id", err)
		return
	}
	writeJSON(w, http.StatusOK, views.FindingRow{Finding: f, TriageState: f.TriageState()})
}
