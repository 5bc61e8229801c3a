package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/testbed/engine/bench"
)

// newServer serves an engine with speculation on or off.
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
// chunks (one per verify step), and both count them in usage.
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
	for _, want := range []string{"vllm:spec_decode_num_drafts_total ", "vllm:generation_tokens_total 12\n", "vllm:prompt_tokens_total 3\n", "testbed:verify_seconds_total ", "testbed:verify_cpu_seconds_total "} {
		if !strings.Contains(string(data), want) {
			t.Errorf("metrics lack %q:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "vllm:spec_decode_num_drafts_total 0\n") {
		t.Errorf("no drafts counted:\n%s", data)
	}
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
