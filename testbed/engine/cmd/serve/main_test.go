package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/testbed/engine/bench"
)

// newServer serves an engine with speculation on or off; with it on, a
// reference decode step follows each verify step, as serve runs it.
func newServer(t *testing.T, spec bool) *httptest.Server {
	t.Helper()
	cfg, err := bench.Config()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := newEngine(cfg, spec, bench.DraftTokens, 256)
	if err != nil {
		t.Fatal(err)
	}
	eng.reference = spec
	srv := httptest.NewServer(eng.mux())
	t.Cleanup(srv.Close)
	return srv
}

// stream posts body to path and returns the events' data.
func stream(t *testing.T, srv *httptest.Server, path, body string) (int, []string) {
	t.Helper()
	resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, d)
		}
	}
	return resp.StatusCode, events
}

type event struct {
	Choices []struct {
		Text  string
		Delta struct {
			Role    string
			Content string
		}
	}
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
}

// generated returns the text of the events, the number of chunks with
// text and the usage's completion tokens.
func generated(t *testing.T, events []string) (text string, chunks, usage int) {
	t.Helper()
	if len(events) == 0 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", events)
	}
	for _, e := range events[:len(events)-1] {
		var ev event
		if err := json.Unmarshal([]byte(e), &ev); err != nil {
			t.Fatalf("event %q: %v", e, err)
		}
		if ev.Usage != nil {
			usage = ev.Usage.CompletionTokens
		}
		for _, c := range ev.Choices {
			if s := c.Text + c.Delta.Content; s != "" {
				text += s
				chunks++
			}
		}
	}
	return text, chunks, usage
}

// Speculative decoding emits the tokens plain decoding emits, in fewer
// chunks (one per verify step), and both count them in usage; the
// reference decode steps, undone, change nothing emitted.
func TestServeSpeculativeMatchesPlain(t *testing.T) {
	body := `{"prompt": "a b c d e f g h", "max_tokens": 24, "stream": true, "stream_options": {"include_usage": true}}`
	var texts []string
	var chunks []int
	for _, spec := range []bool{true, false} {
		status, events := stream(t, newServer(t, spec), "/v1/completions", body)
		if status != http.StatusOK {
			t.Fatalf("spec %v: status %d: %q", spec, status, events)
		}
		text, n, usage := generated(t, events)
		if usage != 24 || len(strings.Fields(text)) != 24 {
			t.Fatalf("spec %v: usage %d, %d tokens in the text, want 24", spec, usage, len(strings.Fields(text)))
		}
		texts, chunks = append(texts, text), append(chunks, n)
	}
	if texts[0] != texts[1] {
		t.Errorf("speculative text %q differs from plain %q", texts[0], texts[1])
	}
	if chunks[1] != 24 || chunks[0] >= chunks[1] {
		t.Errorf("chunks: speculative %d, plain %d (want one a token, and fewer with speculation)", chunks[0], chunks[1])
	}
}

func TestServeChatStartsWithTheRole(t *testing.T) {
	status, events := stream(t, newServer(t, true), "/v1/chat/completions", `{"messages": [{"role": "user", "content": "x y z"}], "max_tokens": 4, "stream": true}`)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	var first event
	if err := json.Unmarshal([]byte(events[0]), &first); err != nil || first.Choices[0].Delta.Role != "assistant" || first.Choices[0].Delta.Content != "" {
		t.Errorf("first event %q is not the role prelude", events[0])
	}
	if _, _, usage := generated(t, events); usage != 0 {
		t.Errorf("usage sent without include_usage")
	}
}

func TestServeMetrics(t *testing.T) {
	srv := newServer(t, true)
	stream(t, srv, "/v1/completions", `{"prompt": "a b c", "max_tokens": 12, "stream": true}`)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, want := range []string{"vllm:spec_decode_num_drafts_total ", "vllm:generation_tokens_total 12\n", "vllm:prompt_tokens_total 3\n", "testbed:verify_seconds_total ", "testbed:verify_cpu_seconds_total ",
		"testbed:draft_cpu_seconds_total ", "testbed:target_verify_cpu_seconds_total ", "testbed:verify_decode_steps_total "} {
		if !strings.Contains(string(data), want) {
			t.Errorf("metrics lack %q:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "vllm:spec_decode_num_drafts_total 0\n") {
		t.Errorf("no drafts counted:\n%s", data)
	}
	c := counterValues(t, string(data))
	// Every verify step is followed by one reference decode step, and
	// emits its accepted tokens and the bonus token.
	if c["testbed:reference_decode_steps_total"] != c["testbed:verify_steps_total"] || c["testbed:verify_steps_total"] == 0 {
		t.Errorf("%v reference decode steps for %v verify steps", c["testbed:reference_decode_steps_total"], c["testbed:verify_steps_total"])
	}
	if got, want := c["testbed:verify_tokens_total"], c["testbed:verify_steps_total"]+c["vllm:spec_decode_num_accepted_tokens_total"]; got != want {
		t.Errorf("verify tokens %v, want steps plus accepted, %v", got, want)
	}
	if c["testbed:draft_cpu_seconds_total"]+c["testbed:target_verify_cpu_seconds_total"] > c["testbed:verify_cpu_seconds_total"]*1.0001 {
		t.Errorf("the draft's and the verify pass's CPU times exceed the steps': %v", c)
	}
	if c["testbed:draft_decode_steps_total"]+c["testbed:target_verify_decode_steps_total"] > c["testbed:verify_decode_steps_total"]*1.0001 {
		t.Errorf("the draft's and the verify pass's parts in decode steps exceed the steps': %v", c)
	}
}

// Without speculation there are no verify steps, so no reference steps.
func TestServeMetricsPlain(t *testing.T) {
	srv := newServer(t, false)
	stream(t, srv, "/v1/completions", `{"prompt": "a b c", "max_tokens": 6, "stream": true}`)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	c := counterValues(t, string(data))
	if c["testbed:decode_steps_total"] != 5 || c["testbed:reference_decode_steps_total"] != 0 || c["testbed:verify_decode_steps_total"] != 0 {
		t.Errorf("plain decoding: %v", c)
	}
}

// counterValues reads the sample lines of a metrics page.
func counterValues(t *testing.T, page string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(page, "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[name] = v
	}
	return out
}

func TestServeBadRequests(t *testing.T) {
	srv := newServer(t, false)
	for name, body := range map[string]string{
		"not streaming": `{"prompt": "a", "max_tokens": 2}`,
		"too long":      `{"prompt": "a", "max_tokens": 1000, "stream": true}`,
		"no prompt":     `{"max_tokens": 2, "stream": true}`,
		"zero tokens":   `{"prompt": "a", "max_tokens": 0, "stream": true}`,
		"not JSON":      `{"prompt": `,
	} {
		status, events := stream(t, srv, "/v1/completions", body)
		if status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400 (%q)", name, status, events)
		}
	}
}
