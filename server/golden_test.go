package server_test

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/server"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./server/ -update to create it")
	require.Equal(t, string(want), string(got), "%s differs (go test ./server/ -update rewrites it)", path)
}

// The dashboard's pages over the fixture are rendered byte for byte as
// their golden files (the SVG of the charts included).
func TestDashboardGolden(t *testing.T) {
	ts := httptest.NewServer(populated(t).handler(server.Options{}))
	defer ts.Close()
	for _, p := range []struct{ name, path string }{
		{"index.html", "/"},
		{"commit.html", "/commits/" + fixtureCommit(15)},
		{"compare.html", "/compare?a=" + fixtureCommit(14) + "&b=" + fixtureCommit(15)},
		{"job.html", "/jobs/alert-1f2e3d4c5b6a"},
	} {
		t.Run(p.name, func(t *testing.T) {
			resp, err := http.Get(ts.URL + p.path)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			golden(t, p.name, body)
		})
	}
}

// Pages that cannot be shown say why, as HTML, with 404.
func TestDashboardNotFound(t *testing.T) {
	ts := httptest.NewServer(populated(t).handler(server.Options{}))
	defer ts.Close()
	for _, path := range []string{"/commits/abcdef0", "/commits/not-a-hash", "/jobs/none", "/compare?a=" + fixtureCommit(1)} {
		resp, err := http.Get(ts.URL + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		require.Contains(t, string(body), "<h1>Not Found</h1>", path)
	}
}

// The static copy holds the index and a page for every link it makes,
// and links only to files beside it (or to issues and anchors).
func TestWriteStatic(t *testing.T) {
	dir := t.TempDir()
	files, err := server.WriteStatic(t.Context(), populated(t).Views, dir)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "index.html"), files[0])
	// 3 jobs, 30 nights' tips (the findings' commits among them) and 29
	// comparisons of a commit with its parent (the findings' ends and the
	// change points' nights among them).
	require.Len(t, files, 1+3+30+29)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, href := range hrefs(string(data)) {
			switch {
			case href[0] == '#', len(href) > 8 && href[:8] == "https://":
				continue
			}
			file, _, _ := strings.Cut(href, "#")
			_, err := os.Stat(filepath.Join(dir, file))
			require.NoError(t, err, "%s links to %s", filepath.Base(f), href)
		}
	}
}

func hrefs(html string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(html, `href="`)
		if !ok {
			return out
		}
		href, after, _ := strings.Cut(rest, `"`)
		out = append(out, href)
		html = after
	}
}
