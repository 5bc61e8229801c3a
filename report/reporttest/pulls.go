package reporttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Routes of pull requests.
const (
	RouteCreatePull = "POST /pulls"
	RouteListPulls  = "GET /pulls"
)

// PullRequest is a pull request the fake holds: the request as it came.
type PullRequest struct {
	Number int
	Title  string
	Body   string
	// Head and Base are as the request gave them.
	Head, Base string
	Draft      bool
	State      string
}

// Pulls returns copies of the pull requests opened, oldest first.
func (f *GitHub) Pulls() []PullRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]PullRequest, len(f.pulls))
	for i, p := range f.pulls {
		out[i] = *p
	}
	return out
}

func pullJSON(p *PullRequest) map[string]any {
	return map[string]any{
		"number":   p.Number,
		"html_url": fmt.Sprintf("https://github.example.com/%s/pull/%d", Repo, p.Number),
		"state":    p.State,
		"title":    p.Title,
		"body":     p.Body,
		"draft":    p.Draft,
		"head":     map[string]any{"ref": p.Head},
		"base":     map[string]any{"ref": p.Base},
	}
}

// createPull answers as GitHub does; a head or base that is missing, or
// equal to each other, is a 422.
func (f *GitHub) createPull(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Title string `json:"title"`
		Body  string `json:"body"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Draft bool   `json:"draft"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Title == "" || req.Head == "" || req.Base == "" || req.Head == req.Base {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": []map[string]string{{"resource": "PullRequest", "code": "invalid"}}})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// Issues and pull requests share their numbers on GitHub.
	p := &PullRequest{Number: len(f.issues) + len(f.pulls) + 1, Title: req.Title, Body: req.Body, Head: req.Head, Base: req.Base, Draft: req.Draft, State: stateOpen}
	f.pulls = append(f.pulls, p)
	writeJSON(w, http.StatusCreated, pullJSON(p))
}

// listPulls lists the open pull requests, filtered by head
// ("owner:branch") and base.
func (f *GitHub) listPulls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	owner, _, _ := strings.Cut(Repo, "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	match := []map[string]any{}
	for _, p := range f.pulls {
		head := p.Head
		if !strings.Contains(head, ":") {
			head = owner + ":" + head
		}
		if (q.Get("head") == "" || q.Get("head") == head) && (q.Get("base") == "" || q.Get("base") == p.Base) && p.State == stateOpen {
			match = append(match, pullJSON(p))
		}
	}
	writeJSON(w, http.StatusOK, match)
}
