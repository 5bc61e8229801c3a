package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// benchMetrics are the metrics of every benchmark run.
var benchMetrics = []string{"verify_tok_s", "decode_tok_s", "verify_ms"}

// benchRun is run i of a history with one run a minute and ten runs per
// commit.
func benchRun(i int) *record.Run {
	return newRun(i/10, time.Duration(i)*time.Minute, record.StatusOK, map[string]float64{
		benchMetrics[0]: 80 + float64(i%13),
		benchMetrics[1]: 140 + float64(i%7),
		benchMetrics[2]: 12 + float64(i%5)/10,
	})
}

// BenchmarkAddRun measures ingestion: one transaction (and one fsync) per
// run of three metrics.
func BenchmarkAddRun(b *testing.B) {
	db, err := store.Open(filepath.Join(b.TempDir(), "perfbot.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.AddRun(benchRun(i)); err != nil {
			b.Fatal(err)
		}
	}
	runsPerSec := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(runsPerSec, "runs/s")
	b.ReportMetric(runsPerSec*float64(len(benchMetrics)), "samples/s")
}

// store1M is a store of one million samples, built once per test binary and
// removed by TestMain.
var store1M struct {
	once sync.Once
	dir  string
	path string
	last time.Time // start of the newest run
	fill time.Duration
	err  error
}

const samples1M = 1_000_000

func buildStore1M() {
	s := &store1M
	s.dir, s.err = os.MkdirTemp("", "perfbot-bench-")
	if s.err != nil {
		return
	}
	s.path = filepath.Join(s.dir, "perfbot.db")
	db, err := store.Open(s.path)
	if err != nil {
		s.err = err
		return
	}
	defer db.Close()
	start := time.Now()
	runs := (samples1M + len(benchMetrics) - 1) / len(benchMetrics)
	const batch = 5000
	for i := 0; i < runs; i += batch {
		rs := make([]*record.Run, 0, batch)
		for j := i; j < min(i+batch, runs); j++ {
			rs = append(rs, benchRun(j))
		}
		if err := db.AddRuns(rs); err != nil {
			s.err = fmt.Errorf("fill: %w", err)
			return
		}
		s.last = rs[len(rs)-1].Started
	}
	s.fill = time.Since(start)
}

func removeBenchStores() {
	if store1M.dir != "" {
		_ = os.RemoveAll(store1M.dir)
	}
}

// BenchmarkHistory1M measures History on a store of one million samples
// (three metrics, one run a minute over 231 days).
func BenchmarkHistory1M(b *testing.B) {
	store1M.once.Do(buildStore1M)
	if store1M.err != nil {
		b.Fatal(store1M.err)
	}
	if fi, err := os.Stat(store1M.path); err == nil {
		b.Logf("filled %d samples in %s (%.0f samples/s), file %d MiB", samples1M, store1M.fill.Round(time.Millisecond),
			samples1M/store1M.fill.Seconds(), fi.Size()>>20)
	}
	db, err := store.Open(store1M.path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	day := store1M.last.Add(-24 * time.Hour).Add(time.Minute)
	for _, bc := range []struct {
		name     string
		q        store.HistoryQuery
		wantRows int
	}{
		{name: "latest100", q: store.HistoryQuery{Metric: benchMetrics[0], Limit: 100}, wantRows: 100},
		{name: "since1day", q: store.HistoryQuery{Metric: benchMetrics[0], Since: day}, wantRows: 24 * 60},
		{name: "allMetrics100", q: store.HistoryQuery{Limit: 100}, wantRows: 100},
		{name: "commit", q: store.HistoryQuery{Metric: benchMetrics[0], Commit: commitHash(1000)}, wantRows: 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rows, err := db.History(bc.q)
				if err != nil {
					b.Fatal(err)
				}
				if len(rows) != bc.wantRows {
					b.Fatalf("%d rows, want %d", len(rows), bc.wantRows)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/op")
		})
	}
}

// BenchmarkOpen1M measures Open on a store of one million samples: Open
// reads every page once to refuse a damaged file.
func BenchmarkOpen1M(b *testing.B) {
	store1M.once.Do(buildStore1M)
	if store1M.err != nil {
		b.Fatal(store1M.err)
	}
	for i := 0; i < b.N; i++ {
		db, err := store.Open(store1M.path)
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/op")
}
