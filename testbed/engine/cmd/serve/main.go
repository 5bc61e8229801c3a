// Command serve serves the engine over an OpenAI-compatible streaming API,
// as inference servers do: POST /v1/completions and /v1/chat/completions
// with "stream": true answer with server-sent events, one chunk per
// decode step (with -spec, one per verify step, carrying every token the
// step emitted), then a usage chunk when stream_options.include_usage is
// set, then "data: [DONE]". GET /health answers 200 once the model is
// loaded, and GET /metrics serves Prometheus counters: vLLM's
// speculative-decoding counters (vllm:spec_decode_num_drafts_total,
// ..._num_draft_tokens_total, ..._num_accepted_tokens_total), token counts,
// and the engine's own time in verify steps (draft, verify and accept, and
// the draft's and the target's verify pass's parts of them), decode steps
// and prefills, wall and CPU.
//
// With -spec, each verify step is followed by a reference decode step: one
// plain decode step of the target at the same position, timed and undone
// (its token is not emitted). On a shared host the CPU time of one and the
// same step swings by a third between states that last seconds, but a
// verify step and the decode step just after it see the same state: the
// ratio of the two, summed over the steps (testbed:verify_decode_steps,
// and the draft's and the verify pass's parts), gives the speed-up of
// speculation over plain decoding and its terms in units of the plain
// decode step, which a load of a few seconds measures to within a few
// percent where the tok/s and the CPU times vary by a third.
// -reference=false turns the reference off.
//
// Words of the prompt are its tokens (each hashed into the vocabulary);
// max_tokens tokens are generated whatever they are (the engine has no
// end-of-sequence token). One sequence runs at a time: concurrent
// requests wait for the engine, as requests queue for a full batch.
//
// serve stops on SIGTERM or SIGINT, finishing no request.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfbot/perfbot/testbed/engine/bench"
	"github.com/perfbot/perfbot/testbed/engine/model"
	"github.com/perfbot/perfbot/testbed/engine/speculative"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8000", "address to listen on")
	spec := fs.Bool("spec", true, "speculative decoding (false: plain decode steps of the target)")
	reference := fs.Bool("reference", true, "with -spec, time a reference decode step of the target after each verify step (not emitted)")
	k := fs.Int("k", bench.DraftTokens, "draft tokens per verify step")
	maxContext := fs.Int("max-context", 1024, "longest prompt plus output served")
	attn := fs.String("attention", "", "attention backend: tiled or naive")
	procs := fs.Int("procs", 0, "GOMAXPROCS (0 keeps Go's default; 1 runs the ranks on one core, as the benchmarks do, so that CPU times are the work done)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	cfg, err := bench.Config()
	if err != nil {
		fmt.Fprintln(stderr, "serve:", err)
		return 2
	}
	if *attn != "" {
		cfg.Attention = *attn
	}
	eng, err := newEngine(cfg, *spec, *k, *maxContext)
	if err != nil {
		fmt.Fprintln(stderr, "serve:", err)
		return 1
	}
	eng.reference = *spec && *reference
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "serve:", err)
		return 1
	}
	mode := "plain decoding"
	if *spec {
		mode = fmt.Sprintf("speculative decoding, k=%d", *k)
	}
	fmt.Fprintf(stdout, "serve: allreduce %s, attention %s, %s\n", eng.target.Communicator().Backend(cfg.Hidden), cfg.Attention, mode)
	fmt.Fprintf(stdout, "serve: listening on %s\n", l.Addr())
	srv := &http.Server{Handler: eng.mux(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		fmt.Fprintln(stderr, "serve:", err)
		return 1
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	eng.stop()
	_ = srv.Shutdown(shutdown)
	fmt.Fprintln(stdout, "serve: stopped")
	return 0
}

// engine is the model, its draft and decoder, and the counters /metrics
// serves. mu is held by the request being generated.
type engine struct {
	mu         sync.Mutex
	target     *model.Model
	draft      *speculative.Draft
	dec        *speculative.Decoder
	spec       bool
	reference  bool
	k          int
	maxContext int
	stopping   chan struct{}
	stopOnce   sync.Once

	cmu sync.Mutex
	c   counters
}

// counters are what /metrics serves.
type counters struct {
	requests, promptTokens, generationTokens int64
	drafts, draftTokens, acceptedTokens      int64
	verifySteps, decodeSteps, prefills       int64
	verifySeconds, decodeSeconds             float64
	verifyCPU, decodeCPU                     float64
	prefillSeconds                           float64
	// Of the verify steps: the tokens they emitted before max_tokens cut
	// a request's last step, and the CPU time of their draft's part and of
	// the target's verify pass.
	verifyTokens              int64
	draftCPU, targetVerifyCPU float64
	// The reference decode steps, and the verify steps' CPU time each in
	// units of the reference step after it.
	referenceSteps                      int64
	referenceCPU                        float64
	verifyDecodeSteps                   float64
	draftDecodeSteps, targetDecodeSteps float64
}

func newEngine(cfg model.Config, spec bool, k, maxContext int) (*engine, error) {
	target, err := model.New(cfg)
	if err != nil {
		return nil, err
	}
	draft, err := speculative.NewDraft(target)
	if err != nil {
		return nil, err
	}
	dec, err := speculative.NewDecoder(target, draft, k)
	if err != nil {
		return nil, err
	}
	dec.SetClock(cpuTime)
	return &engine{target: target, draft: draft, dec: dec, spec: spec, k: k, maxContext: maxContext, stopping: make(chan struct{})}, nil
}

func (e *engine) stop() { e.stopOnce.Do(func() { close(e.stopping) }) }

func (e *engine) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	m.HandleFunc("GET /metrics", e.metrics)
	m.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { e.complete(w, r, false) })
	m.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { e.complete(w, r, true) })
	return m
}

// completionRequest is what serve reads of a request.
type completionRequest struct {
	Model    string `json:"model"`
	Prompt   any    `json:"prompt"`
	Messages []struct {
		Content string `json:"content"`
	} `json:"messages"`
	MaxTokens     *int `json:"max_tokens"`
	Stream        bool `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// errorBody is an OpenAI-style error.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": status}})
}

// prompt returns the request's prompt text.
func (req *completionRequest) prompt(chat bool) (string, error) {
	if chat {
		var parts []string
		for _, m := range req.Messages {
			parts = append(parts, m.Content)
		}
		if len(parts) == 0 {
			return "", errors.New("messages: at least one message is required")
		}
		return strings.Join(parts, "\n"), nil
	}
	switch p := req.Prompt.(type) {
	case string:
		return p, nil
	case nil:
		return "", errors.New("prompt: required")
	default:
		return "", errors.New("prompt: only a string is served")
	}
}

// tokenize maps each word of text into the vocabulary.
func tokenize(text string, vocab int) []int {
	words := strings.Fields(text)
	ids := make([]int, len(words))
	for i, w := range words {
		h := fnv.New32a()
		_, _ = h.Write([]byte(w))
		ids[i] = int(h.Sum32() % uint32(vocab))
	}
	return ids
}

func (e *engine) complete(w http.ResponseWriter, r *http.Request, chat bool) {
	var req completionRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "request is not JSON: "+err.Error())
		return
	}
	text, err := req.prompt(chat)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	prompt := tokenize(text, e.target.Config().Vocab)
	n := 16
	if req.MaxTokens != nil {
		n = *req.MaxTokens
	}
	switch {
	case !req.Stream:
		writeError(w, http.StatusBadRequest, "stream: only streaming requests (stream: true) are served")
		return
	case len(prompt) == 0:
		writeError(w, http.StatusBadRequest, "prompt: empty")
		return
	case n < 1:
		writeError(w, http.StatusBadRequest, "max_tokens: must be at least 1")
		return
	case len(prompt)+n+e.k+1 > e.maxContext:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("prompt of %d tokens plus max_tokens %d exceed the context of %d", len(prompt), n, e.maxContext))
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()

	id := "cmpl-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	object := "text_completion"
	if chat {
		object = "chat.completion.chunk"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	choice := func(tokens []int) map[string]any {
		var b strings.Builder
		for _, t := range tokens {
			fmt.Fprintf(&b, " t%d", t)
		}
		if chat {
			return map[string]any{"index": 0, "delta": map[string]any{"content": b.String()}}
		}
		return map[string]any{"index": 0, "text": b.String()}
	}
	chunk := func(choices ...map[string]any) map[string]any {
		if choices == nil {
			choices = []map[string]any{}
		}
		return map[string]any{"id": id, "object": object, "model": req.Model, "choices": choices}
	}
	if chat && !send(chunk(map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}})) {
		return
	}
	generated, err := e.generate(r.Context(), prompt, n, func(tokens []int) bool { return send(chunk(choice(tokens))) })
	if err != nil {
		// The status is sent; the error goes in the stream, as servers do.
		send(map[string]any{"error": map[string]any{"message": err.Error()}})
		return
	}
	if req.StreamOptions.IncludeUsage {
		u := chunk()
		u["usage"] = map[string]any{"prompt_tokens": len(prompt), "completion_tokens": generated, "total_tokens": len(prompt) + generated}
		send(u)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	flusher.Flush()
}

// generate runs n tokens after prompt, calling emit with the tokens of
// each step, and returns how many it emitted. It stops when emit fails
// (the client went away), ctx ends or the server stops.
func (e *engine) generate(ctx context.Context, prompt []int, n int, emit func([]int) bool) (int, error) {
	e.target.Truncate(0)
	e.draft.Truncate(0)
	start := time.Now()
	first, err := e.dec.Prefill(prompt)
	if err != nil {
		return 0, err
	}
	e.count(func(c *counters) {
		c.requests++
		c.prefills++
		c.promptTokens += int64(len(prompt))
		c.generationTokens++
		c.prefillSeconds += time.Since(start).Seconds()
	})
	out := []int{first}
	if !emit(out) {
		return 1, nil
	}
	generated := 1
	tok := first
	for generated < n {
		select {
		case <-ctx.Done():
			return generated, ctx.Err()
		case <-e.stopping:
			return generated, errors.New("server stopping")
		default:
		}
		step, stepCPU := time.Now(), cpuTime()
		var emitted []int
		if e.spec {
			if emitted, err = e.dec.Step(out[:0]); err != nil {
				return generated, err
			}
			elapsed, cpu := time.Since(step).Seconds(), (cpuTime() - stepCPU).Seconds()
			phases := e.dec.LastStep()
			var ref float64
			if e.reference {
				if ref, err = e.referenceStep(emitted[len(emitted)-1]); err != nil {
					return generated, err
				}
			}
			e.count(func(c *counters) {
				c.verifySteps++
				c.verifySeconds += elapsed
				c.verifyCPU += cpu
				c.drafts++
				c.draftTokens += int64(e.k)
				c.acceptedTokens += int64(len(emitted) - 1)
				c.verifyTokens += int64(len(emitted))
				c.draftCPU += phases.Draft.Seconds()
				c.targetVerifyCPU += phases.Verify.Seconds()
				if ref > 0 {
					c.referenceSteps++
					c.referenceCPU += ref
					c.verifyDecodeSteps += cpu / ref
					c.draftDecodeSteps += phases.Draft.Seconds() / ref
					c.targetDecodeSteps += phases.Verify.Seconds() / ref
				}
			})
		} else {
			o, err := e.target.Forward([]int{tok}, 1)
			if err != nil {
				return generated, err
			}
			tok = argmax(o.Logits)
			emitted = append(out[:0], tok)
			elapsed, cpu := time.Since(step).Seconds(), (cpuTime() - stepCPU).Seconds()
			e.count(func(c *counters) {
				c.decodeSteps++
				c.decodeSeconds += elapsed
				c.decodeCPU += cpu
			})
		}
		emitted = emitted[:min(len(emitted), n-generated)]
		generated += len(emitted)
		e.count(func(c *counters) { c.generationTokens += int64(len(emitted)) })
		if !emit(emitted) {
			return generated, nil
		}
	}
	return generated, nil
}

// referenceStep runs one plain decode step of the target on tok at the
// next position, undoes it, and returns its CPU time in seconds (0 when
// the clock did not move).
func (e *engine) referenceStep(tok int) (float64, error) {
	n := e.target.Len()
	start := cpuTime()
	_, err := e.target.Forward([]int{tok}, 1)
	cpu := (cpuTime() - start).Seconds()
	e.target.Truncate(n)
	if err != nil {
		return 0, fmt.Errorf("reference decode step: %w", err)
	}
	return cpu, nil
}

func (e *engine) count(f func(*counters)) {
	e.cmu.Lock()
	f(&e.c)
	e.cmu.Unlock()
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// metrics serves the counters in the Prometheus text format.
func (e *engine) metrics(w http.ResponseWriter, _ *http.Request) {
	e.cmu.Lock()
	c := e.c
	e.cmu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	for _, m := range []struct {
		name, help string
		value      float64
	}{
		{"vllm:request_success", "Requests served.", float64(c.requests)},
		{"vllm:prompt_tokens", "Prompt tokens prefilled.", float64(c.promptTokens)},
		{"vllm:generation_tokens", "Tokens generated.", float64(c.generationTokens)},
		{"vllm:spec_decode_num_drafts", "Verify steps, one draft each.", float64(c.drafts)},
		{"vllm:spec_decode_num_draft_tokens", "Draft tokens proposed.", float64(c.draftTokens)},
		{"vllm:spec_decode_num_accepted_tokens", "Draft tokens accepted.", float64(c.acceptedTokens)},
		{"testbed:verify_steps", "Speculative steps (draft, verify, accept).", float64(c.verifySteps)},
		{"testbed:verify_seconds", "Time in speculative steps.", c.verifySeconds},
		{"testbed:verify_cpu_seconds", "CPU time of speculative steps.", c.verifyCPU},
		{"testbed:decode_steps", "Plain decode steps of the target.", float64(c.decodeSteps)},
		{"testbed:decode_seconds", "Time in plain decode steps.", c.decodeSeconds},
		{"testbed:decode_cpu_seconds", "CPU time of plain decode steps.", c.decodeCPU},
		{"testbed:verify_tokens", "Tokens the speculative steps emitted (accepted and bonus), before max_tokens cut a request's last.", float64(c.verifyTokens)},
		{"testbed:draft_cpu_seconds", "CPU time of the draft's part of speculative steps (its proposals and its extend).", c.draftCPU},
		{"testbed:target_verify_cpu_seconds", "CPU time of the target's verify passes and acceptance in speculative steps.", c.targetVerifyCPU},
		{"testbed:reference_decode_steps", "Reference decode steps of the target, one after each speculative step (not emitted).", float64(c.referenceSteps)},
		{"testbed:reference_decode_cpu_seconds", "CPU time of the reference decode steps.", c.referenceCPU},
		{"testbed:verify_decode_steps", "CPU time of speculative steps, each in units of the reference decode step after it.", c.verifyDecodeSteps},
		{"testbed:draft_decode_steps", "CPU time of the draft's part of speculative steps, in units of the reference decode step after each.", c.draftDecodeSteps},
		{"testbed:target_verify_decode_steps", "CPU time of the target's verify passes, in units of the reference decode step after each.", c.targetDecodeSteps},
		{"testbed:prefills", "Prefills.", float64(c.prefills)},
		{"testbed:prefill_seconds", "Time in prefills.", c.prefillSeconds},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s_total %s\n", m.name, m.help, m.name, m.name, strconv.FormatFloat(m.value, 'g', -1, 64))
	}
}
