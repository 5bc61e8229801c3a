package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/views"
)

// A command whose store is held by a running `perfbot serve` goes through
// that server instead: it finds the server in the endpoint file beside the
// store.

// remote is a client of the server that holds the store.
type remote struct {
	ep     endpoint
	client *http.Client
}

// beside returns the client of the server holding the store when err says
// the store is locked and a server left its endpoint beside it.
func (g *globals) beside(err error) (*remote, bool) {
	if !errors.Is(err, store.ErrLocked) {
		return nil, false
	}
	cfg, cerr := g.loadConfig()
	if cerr != nil {
		return nil, false
	}
	ep, ok := readEndpoint(endpointPath(g.storePath(cfg)))
	if !ok {
		return nil, false
	}
	fmt.Fprintf(g.stderr, "the store is held by perfbot serve (pid %d); going through it at %s\n", ep.PID, ep.URL)
	return &remote{ep: ep, client: &http.Client{Timeout: time.Minute}}, true
}

func (r *remote) do(ctx context.Context, method, path string, body, out any) error {
	_, err := r.doHeader(ctx, method, path, body, out)
	return err
}

// doHeader is do that also returns the answer's header.
func (r *remote) doHeader(ctx context.Context, method, path string, body, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.ep.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.ep.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, &record.InfraError{Op: "reach perfbot serve at " + r.ep.URL, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, &record.InfraError{Op: "read from perfbot serve", Err: err}
	}
	if resp.StatusCode/100 != 2 {
		var e server.Error
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound {
				return nil, &record.InputError{Err: errors.New(e.Error)}
			}
			return nil, fmt.Errorf("perfbot serve: %s %s: %s", method, path, e.Error)
		}
		return nil, fmt.Errorf("perfbot serve: %s %s: %s", method, path, resp.Status)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("perfbot serve: %s %s: decode the answer: %w", method, path, err)
	}
	return resp.Header, nil
}

// history reads the history through the server.
func (r *remote) history(ctx context.Context, q views.HistoryQuery) ([]views.HistoryRow, error) {
	v := url.Values{}
	if q.Metric != "" {
		v.Set("metric", q.Metric)
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339))
	}
	if q.Fingerprints {
		v.Set("fingerprints", "true")
	}
	var rows []views.HistoryRow
	for {
		size := server.MaxLimit
		if q.Limit > 0 {
			size = min(size, q.Limit-len(rows))
		}
		v.Set("limit", strconv.Itoa(size))
		var page []views.HistoryRow
		h, err := r.doHeader(ctx, http.MethodGet, "/api/history?"+v.Encode(), nil, &page)
		if err != nil {
			return nil, err
		}
		rows = append(rows, page...)
		next := server.NextPage(h)
		if next == "" || q.Limit > 0 && len(rows) >= q.Limit {
			return rows, nil
		}
		v.Set("cursor", next)
	}
}

// findings lists the findings through the server, every page.
func (r *remote) findings(ctx context.Context) ([]record.Finding, error) {
	fs := []record.Finding{}
	v := url.Values{"limit": {strconv.Itoa(server.MaxLimit)}}
	for {
		var page []views.FindingRow
		h, err := r.doHeader(ctx, http.MethodGet, "/api/findings?"+v.Encode(), nil, &page)
		if err != nil {
			return nil, err
		}
		for _, row := range page {
			fs = append(fs, row.Finding)
		}
		next := server.NextPage(h)
		if next == "" {
			return fs, nil
		}
		v.Set("cursor", next)
	}
}

// finding reads one finding (its id or a unique prefix) through the
// server.
func (r *remote) finding(ctx context.Context, name string) (record.Finding, error) {
	var row views.FindingRow
	err := r.do(ctx, http.MethodGet, "/api/findings/"+url.PathEscape(name), nil, &row)
	return row.Finding, err
}

// run submits a job and follows its trace on progress until it ends; it
// decodes the job's report into out.
func (r *remote) run(ctx context.Context, kind record.JobKind, req any, progress io.Writer, out any) error {
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var queued server.EnqueueResponse
	if err := r.do(ctx, http.MethodPost, "/api/jobs", server.EnqueueRequest{Kind: kind, Request: raw}, &queued); err != nil {
		return err
	}
	fmt.Fprintf(progress, "submitted job %s; following its trace\n", queued.ID)
	seen := 0
	for {
		var v views.JobView
		if err := r.do(ctx, http.MethodGet, "/api/jobs/"+url.PathEscape(queued.ID), nil, &v); err != nil {
			return err
		}
		for _, l := range v.Trace[min(seen, len(v.Trace)):] {
			fmt.Fprintln(progress, l.Text)
		}
		seen = max(seen, len(v.Trace))
		switch v.Status {
		case record.JobDone:
			return json.Unmarshal(v.Result, out)
		case record.JobFailed:
			return jobError(queued.ID, v.ErrorKind, v.Error)
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(progress, "stopped following job %s; it goes on in perfbot serve\n", queued.ID)
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// jobError is a failed job's error as the command run by hand would have
// returned it, so that it exits with the same status: the job's
// ErrorKind says whose the failure was.
func jobError(id, kind, msg string) error {
	switch kind {
	case "input":
		return &record.InputError{Err: fmt.Errorf("job %s failed: %s", id, msg)}
	case "infra":
		return &record.InfraError{Op: "job " + id, Err: errors.New(msg)}
	}
	return fmt.Errorf("job %s failed: %s", id, msg)
}
