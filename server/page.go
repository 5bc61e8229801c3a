package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Every list the API answers follows one rule: a page of at most limit
// items (DefaultLimit when the request names none, never more than
// MaxLimit), the cursor of the next page in a Link header (rel="next",
// the same request with cursor=), and the page encoded item by item as it
// is written, so that no answer is held whole in memory.
const (
	DefaultLimit = 1000
	MaxLimit     = 10000
)

// pageParams reads limit and cursor; false means it answered 400.
func pageParams(w http.ResponseWriter, r *http.Request) (limit int, cursor string, ok bool) {
	q := r.URL.Query()
	limit = DefaultLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			badParam(w, "limit", fmt.Errorf("limit %q: want a number of items from 1 to %d; follow the Link header's next page for more", v, MaxLimit))
			return 0, "", false
		}
		limit = n
	}
	return limit, q.Get("cursor"), true
}

// writePage answers a page of items, with the link to the next page when
// next is not empty.
func writePage[T any](w http.ResponseWriter, r *http.Request, items []T, next string) {
	if next != "" {
		u := url.URL{Path: r.URL.Path}
		q := r.URL.Query()
		q.Set("cursor", next)
		u.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", u.String()))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 32<<10)
	enc := json.NewEncoder(bw)
	bw.WriteString("[")
	for i := range items {
		if i > 0 {
			bw.WriteString(",")
		}
		if err := enc.Encode(items[i]); err != nil {
			return // the status is sent; the client sees a cut answer
		}
	}
	bw.WriteString("]\n")
	_ = bw.Flush()
}

// NextPage returns the cursor= of a Link header's rel="next", or "" when
// there is none: for clients that follow the pages.
func NextPage(h http.Header) string {
	link := h.Get("Link")
	if link == "" {
		return ""
	}
	start, end := 0, len(link)
	for i, c := range link {
		switch c {
		case '<':
			start = i + 1
		case '>':
			end = i
		}
	}
	u, err := url.Parse(link[start:end])
	if err != nil {
		return ""
	}
	return u.Query().Get("cursor")
}
