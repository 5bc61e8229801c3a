// Command histload measures what one GET /api/history costs the server on
// a large store: it fills a store with runs of three metrics, each with a
// fingerprint, then serves the store with package server on a loopback
// port and asks it, reporting the bytes of the answer, the time it took
// and the process's peak memory. Run it under /usr/bin/time -v for the
// whole process's maximum resident set.
//
//	go run ./scripts/histload fill -store /tmp/h.db -samples 600000
//	go run ./scripts/histload get -store /tmp/h.db -query 'fingerprints=true' -parallel 4
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/views"
)

const configYAML = `repo: {url: /srv/infer.git, branch: main}
build: [{name: build, run: "go build ./..."}]
benchmarks: [{name: engine, run: "go test -bench . ./...", format: gobench}]
metrics:
  - {name: verify_tok_s, benchmark: engine, select: BenchmarkVerifyStep, unit: tok/s, better: higher, primary: true}
  - {name: decode_tok_s, benchmark: engine, select: BenchmarkDecode, unit: tok/s, better: higher}
  - {name: verify_ms, benchmark: engine, select: BenchmarkVerifyStep, unit: ms/verify, better: lower}
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: histload fill|get -store PATH ...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	path := fs.String("store", "", "store file")
	samples := fs.Int("samples", 600_000, "samples to write (fill)")
	query := fs.String("query", "", "query of GET /api/history (get)")
	parallel := fs.Int("parallel", 1, "requests at once (get)")
	_ = fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "fill":
		err = fill(*path, *samples)
	case "get":
		err = get(*path, *query, *parallel)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "histload:", err)
		os.Exit(1)
	}
}

func fill(path string, samples int) error {
	db, err := store.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	env := map[string]string{}
	for i := range 20 {
		env[fmt.Sprintf("VAR_%02d", i)] = strings.Repeat("x", 24)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const metricsPerRun, batch = 3, 5000
	runs := (samples + metricsPerRun - 1) / metricsPerRun
	for i := 0; i < runs; i += batch {
		rs := make([]*record.Run, 0, batch)
		for j := i; j < min(i+batch, runs); j++ {
			r := &record.Run{SpecHash: "spec1", Target: record.Target{Commit: fmt.Sprintf("%040x", j/10)}, Host: "gpu1", Status: record.StatusOK,
				Started: t0.Add(time.Duration(j) * time.Minute), Duration: 90 * time.Second,
				Fingerprint: record.Fingerprint{Host: "gpu1", OS: "linux", CPUModel: "AMD EPYC 9654", CPUs: 192, Env: env},
				Values:      map[string]float64{"verify_tok_s": 80 + float64(j%13), "decode_tok_s": 140 + float64(j%7), "verify_ms": 12 + float64(j%5)/10}}
			r.TargetKey = r.Target.Key()
			rs = append(rs, r)
		}
		if err := db.AddRuns(rs); err != nil {
			return err
		}
	}
	for c := 0; c <= runs/10; c++ {
		if err := db.PutCommit(record.Commit{Hash: fmt.Sprintf("%040x", c), Subject: fmt.Sprintf("engine: change %d", c)}); err != nil {
			return err
		}
	}
	fmt.Printf("filled %s: %d runs, %d samples\n", path, runs, runs*metricsPerRun)
	return nil
}

func get(path, query string, parallel int) error {
	cfg, err := config.Parse([]byte(configYAML), "histload.yaml")
	if err != nil {
		return err
	}
	db, err := store.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: server.New(views.New(cfg, db), nil, server.Options{})}
	go srv.Serve(ln)
	defer srv.Close()

	var peakHeap atomic.Uint64
	stop := make(chan struct{})
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peakHeap.Load() {
				peakHeap.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	url := "http://" + ln.Addr().String() + "/api/history?" + query
	start := time.Now()
	var wg sync.WaitGroup
	sizes := make([]int64, parallel)
	statuses := make([]string, parallel)
	errs := make([]error, parallel)
	for i := range parallel {
		wg.Go(func() {
			resp, err := http.Get(url)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			statuses[i] = resp.Status
			sizes[i], errs[i] = io.Copy(io.Discard, resp.Body)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	for i := range parallel {
		if errs[i] != nil {
			return errs[i]
		}
		fmt.Printf("request %d: %s, %d bytes\n", i, statuses[i], sizes[i])
	}
	fmt.Printf("%d request(s) in %s; peak Go heap %d MiB; peak RSS %s\n", parallel, elapsed.Round(time.Millisecond), peakHeap.Load()>>20, vmHWM())
	return nil
}

// vmHWM is the process's peak resident set, as Linux counts it.
func vmHWM() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
