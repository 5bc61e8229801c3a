package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/store"
)

const benchConfig = `repo: {url: /srv/infer.git, branch: main}
build: [{name: build, run: "go build ./..."}]
benchmarks: [{name: engine, run: "go test -bench . ./...", format: gobench}]
metrics:
  - {name: verify_tok_s, benchmark: engine, select: BenchmarkVerifyStep, unit: tok/s, better: higher, primary: true}
  - {name: decode_tok_s, benchmark: engine, select: BenchmarkDecode, unit: tok/s, better: higher}
  - {name: verify_ms, benchmark: engine, select: BenchmarkVerifyStep, unit: ms/verify, better: lower}
`

// BenchmarkHistoryAPI1M measures GET /api/history through the HTTP server
// (the store, the service's join of units and subjects, JSON, loopback
// HTTP) over a store of 1,000,000 samples: three metrics of 333,334 runs,
// one a minute, ten runs a commit. Each query reports its latency's p50
// and p99 over b.N requests.
func BenchmarkHistoryAPI1M(b *testing.B) {
	dir := b.TempDir()
	cfg, err := config.Parse([]byte(benchConfig), filepath.Join(dir, "perfbot.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "perfbot.db")
	last := fill1M(b, path)
	bot, err := service.OpenRecords(cfg, service.Options{Store: path})
	if err != nil {
		b.Fatal(err)
	}
	defer bot.Close()
	ts := httptest.NewServer(server.New(bot, server.Options{}))
	defer ts.Close()
	client := ts.Client()
	day := last.Add(-24 * time.Hour).Add(time.Minute).UTC().Format(time.RFC3339)
	for _, bc := range []struct{ name, query string }{
		{"latest100", "metric=verify_tok_s&limit=100"},
		{"limit1000", "metric=verify_tok_s&limit=1000"},
		{"since1day", "metric=verify_tok_s&since=" + day},
		{"allMetrics100", "limit=100"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				resp, err := client.Get(ts.URL + "/api/history?" + bc.query)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || n < 100 {
					b.Fatalf("%s: %s, %d bytes", bc.query, resp.Status, n)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fill1M writes the store of one million samples and returns the start of
// its newest run.
func fill1M(b *testing.B, path string) time.Time {
	db, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const samples, metrics, batch = 1_000_000, 3, 5000
	runs := (samples + metrics - 1) / metrics
	var last time.Time
	for i := 0; i < runs; i += batch {
		rs := make([]*record.Run, 0, batch)
		for j := i; j < min(i+batch, runs); j++ {
			r := &record.Run{SpecHash: "spec1", Target: record.Target{Commit: fmt.Sprintf("%040x", j/10)}, Host: "gpu1", Status: record.StatusOK,
				Started: t0.Add(time.Duration(j) * time.Minute), Duration: 90 * time.Second,
				Values: map[string]float64{"verify_tok_s": 80 + float64(j%13), "decode_tok_s": 140 + float64(j%7), "verify_ms": 12 + float64(j%5)/10}}
			r.TargetKey = r.Target.Key()
			rs = append(rs, r)
		}
		if err := db.AddRuns(rs); err != nil {
			b.Fatal(err)
		}
		last = rs[len(rs)-1].Started
	}
	for c := 0; c < runs/10+1; c += 1 {
		if c%1000 == 0 || c > runs/10-200 {
			if err := db.PutCommit(record.Commit{Hash: fmt.Sprintf("%040x", c), Subject: fmt.Sprintf("engine: change %d", c)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return last
}
