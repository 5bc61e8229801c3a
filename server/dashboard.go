package server

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/views"
)

// The dashboard: server-rendered pages (html/template, SVG charts drawn
// in Go, CSS inline) that need nothing from the internet.
//
//	GET /                  each metric over the nights, the findings with their triage, the jobs
//	GET /commits/{sha}     a commit: its metrics, runs and fingerprint
//	GET /jobs/{id}         a job with its trace
//	GET /compare?a=&b=     two commits side by side
//
// WriteStatic writes the same pages as files that link to each other.

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"short": record.ShortHash,
	"pretty": func(raw []byte) string {
		var buf bytes.Buffer
		if json.Indent(&buf, raw, "", "  ") != nil {
			return string(raw)
		}
		return buf.String()
	},
	"value": fmtValue,
	"pct": func(v float64) string {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%+.1f%%", v)
	},
	"date": func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"day":      func(t time.Time) string { return t.UTC().Format("Jan 2") },
	"clock":    func(t time.Time) string { return t.UTC().Format("15:04:05") },
	"seconds":  func(d time.Duration) string { return d.Round(100 * time.Millisecond).String() },
	"percent":  func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) },
	"conf":     num.Confidence,
	"join":     strings.Join,
	"sortKeys": func(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) },
	"sortVals": func(m map[string]float64) []string { return slices.Sorted(maps.Keys(m)) },
}).ParseFS(templateFS, "templates/*.html"))

// linker makes (its methods are called by the templates too) the dashboard's links: served paths, or the file names of
// a static copy.
type linker struct{ static bool }

func (l linker) Home() string {
	if l.static {
		return "index.html"
	}
	return "/"
}

func (l linker) Commit(hash string) string {
	if l.static {
		return "commit-" + hash + ".html"
	}
	return "/commits/" + url.PathEscape(hash)
}

func (l linker) Job(id string) string {
	if l.static {
		return "job-" + id + ".html"
	}
	return "/jobs/" + url.PathEscape(id)
}

func (l linker) Compare(a, b string) string {
	if l.static {
		return "compare-" + record.ShortHash(a) + "-" + record.ShortHash(b) + ".html"
	}
	return "/compare?a=" + url.QueryEscape(a) + "&b=" + url.QueryEscape(b)
}

func (l linker) Finding(id string) string { return l.Home() + "#finding-" + id }

// page is what every template gets.
type page struct {
	Title string
	L     linker
	Data  any
	// Charts are the rendered charts of the index page, one per metric.
	Charts []template.HTML
	// Error is the message of the error page.
	Error string
}

func (s *srv) dashboardRoutes(mux *http.ServeMux) {
	l := linker{}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		s.render(w, func() (string, *page, error) { return renderIndex(r.Context(), s.read, l) })
	})
	mux.HandleFunc("GET /commits/{sha}", func(w http.ResponseWriter, r *http.Request) {
		s.render(w, func() (string, *page, error) { return renderCommit(r.Context(), s.read, l, r.PathValue("sha")) })
	})
	mux.HandleFunc("GET /jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.render(w, func() (string, *page, error) { return renderJob(r.Context(), s.read, l, r.PathValue("id")) })
	})
	mux.HandleFunc("GET /compare", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.render(w, func() (string, *page, error) { return renderCompare(r.Context(), s.read, l, q.Get("a"), q.Get("b")) })
	})
}

// render runs fn and writes its page, or an error page: 404 for what does
// not exist or cannot be named, 500 for the rest.
func (s *srv) render(w http.ResponseWriter, fn func() (string, *page, error)) {
	name, p, err := fn()
	status := http.StatusOK
	if err != nil {
		status = http.StatusInternalServerError
		var ie *record.InputError
		if errors.As(err, &ie) {
			status = http.StatusNotFound
		}
		name, p = "error", &page{Title: http.StatusText(status), L: linker{}, Error: err.Error()}
	}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, p); err != nil {
		http.Error(w, "render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func renderIndex(ctx context.Context, r Reader, l linker) (string, *page, error) {
	d, err := r.Dashboard(ctx)
	if err != nil {
		return "", nil, err
	}
	p := &page{Title: "perfbot", L: l, Data: indexData{Dashboard: d}}
	for _, ms := range d.Series {
		p.Charts = append(p.Charts, renderChart(ms, l))
	}
	return "index", p, nil
}

// indexData is the index page's data with what the templates compute.
type indexData struct{ *views.Dashboard }

// PrecisionText says how precise the alerts were.
func (d indexData) PrecisionText() string {
	p := d.Precision
	rate, ok := p.Rate()
	if !ok {
		return "no finding triaged yet"
	}
	return fmt.Sprintf("%.0f%%", 100*rate)
}

func renderCommit(ctx context.Context, r Reader, l linker, sha string) (string, *page, error) {
	if !isHex(sha) {
		return "", nil, &record.InputError{Err: fmt.Errorf("commit %q: want a hash or a prefix of one", sha)}
	}
	v, err := r.Commit(ctx, sha)
	if err != nil {
		return "", nil, err
	}
	return "commit", &page{Title: "commit " + record.ShortHash(v.Commit.Hash), L: l, Data: v}, nil
}

func renderJob(ctx context.Context, r Reader, l linker, id string) (string, *page, error) {
	v, err := r.Job(ctx, id)
	if err != nil {
		return "", nil, err
	}
	return "job", &page{Title: "job " + v.ID, L: l, Data: v}, nil
}

func renderCompare(ctx context.Context, r Reader, l linker, a, b string) (string, *page, error) {
	if !isHex(a) || !isHex(b) {
		return "", nil, &record.InputError{Err: fmt.Errorf("compare %q with %q: want two commit hashes or prefixes", a, b)}
	}
	c, err := r.Compare(ctx, a, b)
	if err != nil {
		return "", nil, err
	}
	return "compare", &page{Title: "compare " + record.ShortHash(c.A.Commit.Hash) + " → " + record.ShortHash(c.B.Commit.Hash), L: l, Data: c}, nil
}

// WriteStatic writes the dashboard r reads as static pages into dir: the
// index, a page per job, per commit measured on a night or named by a
// finding, and a comparison of each finding's two ends. It returns the
// files written, index.html first.
func WriteStatic(ctx context.Context, r Reader, dir string) ([]string, error) {
	l := linker{static: true}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("static dashboard: %w", err)
	}
	var files []string
	write := func(file, name string, p *page) error {
		var buf bytes.Buffer
		if err := pages.ExecuteTemplate(&buf, name, p); err != nil {
			return fmt.Errorf("static dashboard: render %s: %w", file, err)
		}
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("static dashboard: %w", err)
		}
		files = append(files, path)
		return nil
	}
	name, p, err := renderIndex(ctx, r, l)
	if err != nil {
		return nil, err
	}
	if err := write(l.Home(), name, p); err != nil {
		return nil, err
	}
	d := p.Data.(indexData)
	for _, j := range d.Jobs {
		name, p, err := renderJob(ctx, r, l, j.ID)
		if err != nil {
			return nil, err
		}
		if err := write(l.Job(j.ID), name, p); err != nil {
			return nil, err
		}
	}
	// Every commit a chart or a finding names gets a page, and every pair
	// of commits a page compares (a finding's ends, a change point's two
	// nights, a commit and its parent) a comparison.
	commits := map[string]bool{}
	pairs := map[[2]string]bool{}
	for _, ms := range d.Series {
		for _, pt := range ms.Points {
			commits[pt.Commit] = true
		}
		for _, c := range ms.Changes {
			pairs[[2]string{c.Good, c.Bad}] = true
		}
	}
	for _, f := range d.Findings {
		for _, c := range []record.Commit{f.Good.Commit, f.Bad.Commit} {
			if c.Hash != "" {
				commits[c.Hash] = true
			}
		}
		for _, c := range f.Culprits {
			commits[c.Commit.Hash] = true
		}
		if f.Good.Commit.Hash != "" && f.Bad.Commit.Hash != "" {
			pairs[[2]string{f.Good.Commit.Hash, f.Bad.Commit.Hash}] = true
		}
	}
	for _, h := range slices.Sorted(maps.Keys(commits)) {
		name, p, err := renderCommit(ctx, r, l, h)
		var ie *record.InputError
		if errors.As(err, &ie) {
			continue // a commit the store has no record of gets no page
		}
		if err != nil {
			return nil, err
		}
		for _, parent := range p.Data.(*views.CommitView).Commit.Parents {
			pairs[[2]string{parent, h}] = true
		}
		if err := write(l.Commit(h), name, p); err != nil {
			return nil, err
		}
	}
	for _, pr := range slices.SortedFunc(maps.Keys(pairs), func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) }) {
		name, p, err := renderCompare(ctx, r, l, pr[0], pr[1])
		var ie *record.InputError
		if errors.As(err, &ie) {
			continue // a parent perfbot never measured
		}
		if err != nil {
			return nil, err
		}
		if err := write(l.Compare(pr[0], pr[1]), name, p); err != nil {
			return nil, err
		}
	}
	return files, nil
}
