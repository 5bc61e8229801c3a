package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeServer is an OpenAI-compatible streaming server: one chunk per
// token of max_tokens, a role chunk first on chat, usage at the end, and
// vLLM's speculative counters on /metrics (every request counts one draft
// of 3 tokens per 2 tokens it emits, 1 of them accepted).
type fakeServer struct {
	failEvery int64         // every Nth request answers 500; 0 never
	barrier   int           // requests wait until this many are in flight
	gauge     bool          // /metrics serves SGLang's gauge instead
	requests  atomic.Int64  // requests answered
	inFlight  atomic.Int64  // requests being answered
	peak      atomic.Int64  // most requests in flight at once
	drafts    atomic.Int64  // vLLM counters
	accepted  atomic.Int64  //
	release   chan struct{} // closed when barrier requests are in flight
	once      sync.Once
	bodies    sync.Map // endpoint → last request body
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		if f.gauge {
			fmt.Fprintf(w, "# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length{tp_rank=\"0\"} 2.5\nsglang:spec_accept_length{tp_rank=\"1\"} 3.5\n")
			return
		}
		fmt.Fprintf(w, "# TYPE vllm:spec_decode_num_drafts counter\nvllm:spec_decode_num_drafts_total{engine=\"0\"} %d\n", f.drafts.Load())
		fmt.Fprintf(w, "# TYPE vllm:spec_decode_num_draft_tokens counter\nvllm:spec_decode_num_draft_tokens_total{engine=\"0\"} %d\n", 3*f.drafts.Load())
		fmt.Fprintf(w, "# TYPE vllm:spec_decode_num_accepted_tokens counter\nvllm:spec_decode_num_accepted_tokens_total{engine=\"0\"} %d\n", f.accepted.Load())
		return
	}
	n := f.requests.Add(1)
	cur := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		p := f.peak.Load()
		if cur <= p || f.peak.CompareAndSwap(p, cur) {
			break
		}
	}
	if f.barrier > 0 {
		if cur >= int64(f.barrier) {
			f.once.Do(func() { close(f.release) })
		}
		select {
		case <-f.release:
		case <-time.After(10 * time.Second):
			http.Error(w, "barrier never reached", http.StatusServiceUnavailable)
			return
		}
	}
	var body struct {
		MaxTokens int  `json:"max_tokens"`
		Stream    bool `json:"stream"`
		Prompt    string
		Messages  []struct{ Content string }
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || !body.Stream {
		http.Error(w, "want a streaming JSON request", http.StatusBadRequest)
		return
	}
	f.bodies.Store(r.URL.Path, body)
	if f.failEvery > 0 && n%f.failEvery == 0 {
		http.Error(w, "overloaded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chat := r.URL.Path == "/v1/chat/completions"
	if chat {
		fmt.Fprint(w, roleChunk)
	}
	for i := range body.MaxTokens {
		if chat {
			fmt.Fprint(w, delta(fmt.Sprint("t", i)))
		} else {
			fmt.Fprint(w, text(fmt.Sprint("t", i)))
		}
		w.(http.Flusher).Flush()
	}
	f.drafts.Add(int64(body.MaxTokens / 2))
	f.accepted.Add(int64(body.MaxTokens / 2))
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\n", 11, body.MaxTokens)
	fmt.Fprint(w, done)
}

func newFake(t *testing.T, f *fakeServer) string {
	f.release = make(chan struct{})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRunClosedLoop(t *testing.T) {
	for _, endpoint := range []string{Completions, Chat} {
		t.Run(endpoint, func(t *testing.T) {
			f := &fakeServer{barrier: 8}
			url := newFake(t, f)
			rep, err := Run(context.Background(), Config{
				URL: url, Endpoint: endpoint, Requests: 24, Warmup: 8, Concurrency: 8,
				PromptTokens: 16, OutputTokens: 6, MetricsURL: url + "/metrics", Seed: 1,
			})
			require.NoError(t, err)
			m := rep.Metrics
			assert.Equal(t, 24.0, m["completed"])
			assert.Equal(t, 0.0, m["failed"])
			assert.Equal(t, int64(32), f.requests.Load(), "warm-up and measured requests")
			assert.Equal(t, int64(8), f.peak.Load(), "every worker had its own connection; none more")
			assert.Equal(t, 24.0*6, m["total_output_tokens"], "from usage")
			assert.NotContains(t, m, "mean_queue_ms", "a closed loop sends when a place is free")
			assert.Equal(t, 24.0*11, m["total_input_tokens"], "from usage")
			assert.Greater(t, m["output_throughput"], 0.0)
			for _, k := range []string{"ttft", "tpot", "itl", "e2el"} {
				for _, s := range []string{"mean", "median", "p90", "p99"} {
					assert.Contains(t, m, s+"_"+k+"_ms")
				}
			}
			require.NotNil(t, rep.Spec)
			// The measured 24 requests made 3 drafts each, all accepted
			// once; the warm-up's are not in the delta.
			assert.Equal(t, 72.0, m["spec_decode_num_drafts"])
			assert.Equal(t, 2.0, m["spec_decode_acceptance_length"])
			assert.InDelta(t, 100.0/3, m["spec_decode_acceptance_rate"], 1e-9)
			assert.Contains(t, rep.Spec.Source, "counters")
		})
	}
}

func TestRunCountsErrors(t *testing.T) {
	f := &fakeServer{failEvery: 4}
	url := newFake(t, f)
	rep, err := Run(context.Background(), Config{URL: url, Requests: 20, Concurrency: 2, PromptTokens: 4, OutputTokens: 3})
	require.NoError(t, err)
	assert.Equal(t, 15.0, rep.Metrics["completed"])
	assert.Equal(t, 5.0, rep.Metrics["failed"])
	assert.Equal(t, map[string]int{"HTTP 500: overloaded": 5}, rep.Errors)
	assert.Nil(t, rep.Spec, "no metrics URL")
}

func TestRunUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rep, err := Run(context.Background(), Config{URL: url, Requests: 3, PromptTokens: 4, OutputTokens: 3})
	require.NoError(t, err)
	assert.Equal(t, 3.0, rep.Metrics["failed"])
	require.Len(t, rep.Errors, 1)
	for msg := range rep.Errors {
		assert.Contains(t, msg, "connection refused")
	}
}

func TestRunOpenLoop(t *testing.T) {
	f := &fakeServer{}
	url := newFake(t, f)
	rep, err := Run(context.Background(), Config{
		URL: url, Requests: 30, Rate: 2000, Burstiness: 0.5, Concurrency: 4,
		PromptTokens: 8, OutputTokens: 4, RangeRatio: 0.5, Seed: 3, MetricsURL: url + "/metrics",
	})
	require.NoError(t, err)
	assert.Equal(t, 30.0, rep.Metrics["completed"])
	assert.LessOrEqual(t, f.peak.Load(), int64(4), "the cap on requests in flight")
	assert.Contains(t, rep.Load, "2000 req/s (burstiness 0.5, at most 4 in flight)")
	assert.Contains(t, rep.Metrics, "p99_queue_ms", "the wait for a place in flight is reported")
	assert.GreaterOrEqual(t, rep.Metrics["p99_queue_ms"], 0.0)
}

func TestRunSGLangGauge(t *testing.T) {
	f := &fakeServer{gauge: true}
	url := newFake(t, f)
	rep, err := Run(context.Background(), Config{URL: url, Requests: 2, PromptTokens: 4, OutputTokens: 3, MetricsURL: url + "/metrics"})
	require.NoError(t, err)
	require.NotNil(t, rep.Spec)
	assert.Equal(t, 3.0, rep.Metrics["spec_accept_length"], "the mean over ranks")
	assert.Contains(t, rep.Spec.Source, "gauge")
	assert.NotContains(t, rep.Metrics, "spec_decode_acceptance_length")
}

func TestRunMetricsFailure(t *testing.T) {
	f := &fakeServer{}
	url := newFake(t, f)
	rep, err := Run(context.Background(), Config{URL: url, Requests: 2, PromptTokens: 4, OutputTokens: 3, MetricsURL: url + "/nothing"})
	require.NoError(t, err)
	require.Len(t, rep.Notes, 1)
	assert.Contains(t, rep.Notes[0], "HTTP 400")
}

func TestRunDuration(t *testing.T) {
	f := &fakeServer{}
	url := newFake(t, f)
	rep, err := Run(context.Background(), Config{URL: url, Duration: 50 * time.Millisecond, Requests: 5000, Concurrency: 2, PromptTokens: 4, OutputTokens: 2})
	require.NoError(t, err)
	assert.Greater(t, rep.Metrics["completed"], 0.0)
	assert.Equal(t, 0.0, rep.Metrics["failed"])
}

func TestConfigErrors(t *testing.T) {
	ok := Config{URL: "http://127.0.0.1:8000", Requests: 1, PromptTokens: 1, OutputTokens: 1}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no url", func(c *Config) { c.URL = "" }, "url: missing"},
		{"not http", func(c *Config) { c.URL = "ftp://127.0.0.1:8000" }, "want http://HOST:PORT"},
		{"unknown endpoint", func(c *Config) { c.Endpoint = "embeddings" }, `endpoint "embeddings"`},
		{"no size", func(c *Config) { c.Requests = 0 }, "requests or duration"},
		{"negative rate", func(c *Config) { c.Rate = -1 }, "rate -1"},
		{"infinite rate", func(c *Config) { c.Rate = math.Inf(1) }, "rate +Inf"},
		{"zero-length output", func(c *Config) { c.OutputTokens = 0 }, "output tokens 0"},
		{"range ratio of 1", func(c *Config) { c.RangeRatio = 1 }, "range ratio 1"},
		{"negative burstiness", func(c *Config) { c.Burstiness = -2 }, "burstiness -2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			_, err := Run(context.Background(), c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestArrivals(t *testing.T) {
	at := arrivals(rand.New(rand.NewPCG(7, 1)), 1000, 50, 1)
	again := arrivals(rand.New(rand.NewPCG(7, 1)), 1000, 50, 1)
	other := arrivals(rand.New(rand.NewPCG(8, 1)), 1000, 50, 1)
	assert.Equal(t, at, again, "the seed fixes the schedule")
	assert.NotEqual(t, at, other)
	assert.InDelta(t, float64(20*time.Second), float64(at[len(at)-1]), float64(time.Microsecond), "scaled to n/rate")
	// Poisson gaps: the coefficient of variation is about 1; a shape of 4
	// gives about 1/2, and a burstiness of 0.25 about 2.
	for _, tt := range []struct{ shape, cv float64 }{{1, 1}, {4, 0.5}, {0.25, 2}} {
		at := arrivals(rand.New(rand.NewPCG(7, 1)), 20000, 50, tt.shape)
		var gaps []float64
		prev := time.Duration(0)
		for _, a := range at {
			gaps = append(gaps, float64(a-prev))
			prev = a
		}
		m := mean(gaps)
		var ss float64
		for _, g := range gaps {
			ss += (g - m) * (g - m)
		}
		cv := math.Sqrt(ss/float64(len(gaps))) / m
		assert.InDelta(t, tt.cv, cv, 0.06*tt.cv, "shape %g", tt.shape)
	}
	d := arrivalsFor(rand.New(rand.NewPCG(7, 1)), 10*time.Second, 50, 1, 0)
	assert.InDelta(t, 500, len(d), 70, "about rate × duration sends")
	assert.Less(t, d[len(d)-1], 10*time.Second)
}

func TestRequestsAreSeeded(t *testing.T) {
	c := Config{Seed: 5, PromptTokens: 20, OutputTokens: 10, RangeRatio: 0.5}
	a, b := c.requestAt(streamMeasured, 3), c.requestAt(streamMeasured, 3)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a.prompt, c.requestAt(streamMeasured, 4).prompt)
	assert.NotEqual(t, a.prompt, c.requestAt(streamWarmup, 3).prompt, "warm-up prompts are others")
	for i := range uint64(200) {
		r := c.requestAt(streamMeasured, i)
		assert.Len(t, strings.Fields(r.prompt), r.promptTokens)
		assert.GreaterOrEqual(t, r.promptTokens, 10)
		assert.LessOrEqual(t, r.promptTokens, 30)
		assert.GreaterOrEqual(t, r.outputTokens, 5)
		assert.LessOrEqual(t, r.outputTokens, 15)
	}
}

func TestRatios(t *testing.T) {
	f := &fakeServer{}
	url := newFake(t, f)
	per, err := ParseRatio("accepted_per_draft=vllm:spec_decode_num_accepted_tokens_total/vllm:spec_decode_num_drafts*10")
	require.NoError(t, err)
	missing, err := ParseRatio("x=nothing/vllm:spec_decode_num_drafts")
	require.NoError(t, err)
	rep, err := Run(context.Background(), Config{URL: url, Requests: 4, PromptTokens: 4, OutputTokens: 6, MetricsURL: url + "/metrics", Ratios: []Ratio{per, missing}})
	require.NoError(t, err)
	assert.Equal(t, 10.0, rep.Metrics["accepted_per_draft"], "one accepted token a draft, times 10")
	assert.NotContains(t, rep.Metrics, "x")
	assert.Equal(t, []string{"server ratio x: nothing or vllm:spec_decode_num_drafts is not in the server's metrics"}, rep.Notes)
}

func TestParseRatio(t *testing.T) {
	r, err := ParseRatio("verify_ms=testbed:verify_seconds/testbed:verify_steps*1000")
	require.NoError(t, err)
	assert.Equal(t, Ratio{Name: "verify_ms", Num: "testbed:verify_seconds", Den: "testbed:verify_steps", Scale: 1000}, r)
	for _, bad := range []string{"verify_ms", "a-b=x/y", "v=x", "v=x/", "v=x/y*0", "v=x/y*z", "v=x/y/z"} {
		_, err := ParseRatio(bad)
		assert.Error(t, err, bad)
	}
}
