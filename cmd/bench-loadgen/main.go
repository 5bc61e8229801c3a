// Command bench-loadgen measures the load generator's own cost: the CPU
// time it spends per request, and the highest request rate it sustains,
// against a trivial OpenAI-compatible server (this command itself, run as
// a child process so that its CPU is not counted) that answers every
// request at once with the chunks asked for, a usage chunk and [DONE].
//
// Usage:
//
//	bench-loadgen [-chunks 16] [-seconds 2] [-rates 250,500,...] [-concurrency 64]
//
// For each rate it sends Poisson arrivals for -seconds (at most
// -concurrency in flight) and prints the rate reached, failed requests,
// p99 TTFT, and the client's CPU time (user and system, from getrusage)
// per completed request. A rate is sustained when at least 95% of it was
// reached without a failed request; the last line names the highest.
//
// The same per-request figure for a closed loop is printed first: -closed
// requests at -concurrency.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/perfbot/perfbot/loadgen"
)

const childEnv = "BENCH_LOADGEN_SERVER"

func main() {
	if addr := os.Getenv(childEnv); addr != "" {
		serve(addr)
		return
	}
	chunks := flag.Int("chunks", 16, "chunks (tokens) of every answer")
	seconds := flag.Float64("seconds", 2, "duration of each rate")
	rates := flag.String("rates", "250,500,1000,2000,4000,8000", "request rates to try, comma-separated")
	concurrency := flag.Int("concurrency", 64, "most requests in flight")
	closed := flag.Int("closed", 2000, "requests of the closed-loop measurement")
	flag.Parse()
	if err := run(*chunks, *seconds, *rates, *concurrency, *closed, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-loadgen:", err)
		os.Exit(1)
	}
}

func run(chunks int, seconds float64, rates string, concurrency, closed int, w io.Writer) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self)
	child.Env = append(os.Environ(), childEnv+"="+addr)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		return err
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	url := "http://" + addr
	for i := 0; ; i++ {
		resp, err := http.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i > 500 {
			return fmt.Errorf("the trivial server did not start: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	base := loadgen.Config{URL: url, PromptTokens: 32, OutputTokens: chunks, Seed: 1, Concurrency: concurrency}

	c := base
	c.Requests, c.Warmup = closed, 100
	rep, cpu, err := measure(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "closed loop, %d requests at concurrency %d, %d chunks each: %.0f req/s, CPU %.1f µs/request, %.2f µs/chunk\n\n",
		closed, concurrency, chunks, rep.Metrics["request_throughput"], micros(cpu)/rep.Metrics["completed"], micros(cpu)/rep.Metrics["completed"]/float64(chunks))

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate (req/s)\treached\tfailed\tp99 TTFT (ms)\tCPU µs/request\t")
	best := 0.0
	for _, s := range strings.Split(rates, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("rate %q: %w", s, err)
		}
		c := base
		c.Rate, c.Duration = rate, time.Duration(seconds*float64(time.Second))
		rep, cpu, err := measure(c)
		if err != nil {
			return err
		}
		m := rep.Metrics
		reached := m["completed"] / m["duration"]
		fmt.Fprintf(tw, "%.0f\t%.0f\t%.0f\t%.2f\t%.1f\t\n", rate, reached, m["failed"], m["p99_ttft_ms"], micros(cpu)/m["completed"])
		if m["failed"] == 0 && reached >= 0.95*rate {
			best = rate
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nhighest rate sustained (>= 95%% reached, no failure): %.0f req/s\n", best)
	return nil
}

// measure runs c and returns its report and the CPU time the process
// spent meanwhile.
func measure(c loadgen.Config) (*loadgen.Report, time.Duration, error) {
	before := cpuTime()
	rep, err := loadgen.Run(context.Background(), c)
	return rep, cpuTime() - before, err
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serve is the trivial server: every completion is its max_tokens chunks
// at once, flushed one by one.
func serve(addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		data, _ := io.ReadAll(r.Body)
		if i := strings.Index(string(data), `"max_tokens":`); i >= 0 {
			body.MaxTokens, _ = strconv.Atoi(strings.TrimRight(strings.SplitN(string(data[i+13:]), ",", 2)[0], "}"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for range body.MaxTokens {
			_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"text\":\" tok\"}]}\n\n")
			f.Flush()
		}
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":32,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", body.MaxTokens)
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "trivial server:", err)
		os.Exit(1)
	}
}
