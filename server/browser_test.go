package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/server"
)

// chromium returns the path of a headless-capable Chromium. Without one
// the test skips, except in CI (CI set), where .ci/run installs Debian's
// chromium and its absence is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH: CI must install it (apt-get install chromium, see .ci/run)")
	}
	t.Skip("no chromium on PATH; install Debian's chromium to run the browser test")
	return ""
}

// browser starts a headless Chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1200, 900), chromedp.Flag("lang", "en-US"))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel3)
	return ctx
}

// The dashboard opened in headless Chromium shows a chart per metric with
// one point per night, the change points and the findings on it, and the
// findings table with their triage; a point leads to its commit's page.
// With DASHBOARD_SHOTS set to a directory, it saves full-page screenshots
// of every page there.
func TestDashboardInChromium(t *testing.T) {
	ctx := browser(t)
	ts := httptest.NewServer(populated(t).handler(server.Options{}))
	defer ts.Close()

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`svg.chart`))))
	const tok = `svg.chart[data-metric="verify_tok_s"] `
	for _, c := range []struct {
		sel  string
		want int
		why  string
	}{
		{`svg.chart`, 2, "one chart per metric"},
		{tok + `a.point circle`, fixtureNights, "one point per night"},
		{tok + `a.point line.ci`, fixtureNights, "each with its interval"},
		{tok + `a.point title`, fixtureNights, "and its tooltip"},
		{tok + `a.change`, 2, "the regression and the improvement are placed"},
		{tok + `a.finding-mark`, 2, "both findings are marked"},
		{`table.findings tr.finding`, 2, "the findings are listed"},
		{`table.jobs tr.job`, 3, "the jobs are listed"},
	} {
		require.Equal(t, c.want, count(t, ctx, c.sel), "%s (%s)", c.why, c.sel)
	}
	require.Equal(t, "100%", text(t, ctx, `#precision b`), "one finding triaged, not invalid")
	tip := text(t, ctx, tok+`a.point title`)
	require.Contains(t, tip, fixtureSubject(0))
	require.Contains(t, tip, fixtureCommit(0)[:10])
	shoot(t, ctx, "dashboard-index")

	// A finding's mark leads to its row, a point to its commit's page.
	mark := attr(t, ctx, `a.finding-mark.triage-untriaged`, "href")
	require.Contains(t, mark, "#finding-")
	require.Equal(t, 1, count(t, ctx, `tr[id="`+mark[len("/#"):]+`"]`), "the mark's anchor is a finding's row")
	require.Equal(t, "/compare?a="+fixtureCommit(14)+"&b="+fixtureCommit(15), attr(t, ctx, tok+`a.change.regression`, "href"),
		"a change point leads to the comparison of its two nights")
	href := attr(t, ctx, tok+`a.point[data-night="16"]`, "href")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ts.URL+href), chromedp.WaitVisible(chromedp.CSS(`h1`))))
	require.Contains(t, text(t, ctx, `h1`), fixtureSubject(15))
	require.Equal(t, 6, count(t, ctx, `table.runs tr td.num:first-child`))
	shoot(t, ctx, "dashboard-commit")

	for _, p := range []struct{ path, name string }{
		{"/compare?a=" + fixtureCommit(14) + "&b=" + fixtureCommit(15), "dashboard-compare"},
		{"/jobs/alert-1f2e3d4c5b6a", "dashboard-job"},
	} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ts.URL+p.path), chromedp.WaitVisible(chromedp.CSS(`h1`))))
		shoot(t, ctx, p.name)
	}
}

func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	require.NoError(t, err, sel)
	return n
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("document.querySelector(%q).textContent", sel)))
	require.NoError(t, err, sel)
	return s
}

func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("document.querySelector(%q).getAttribute(%q)", sel, name)))
	require.NoError(t, err, sel)
	return s
}

// shoot saves a full-page screenshot when DASHBOARD_SHOTS names a
// directory.
func shoot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("DASHBOARD_SHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}
