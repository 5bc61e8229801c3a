package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// result is what one request measured. Times are from its send.
type result struct {
	sent         time.Time
	queued       time.Duration // from the scheduled send to the send (open loop)
	ttft         time.Duration
	e2e          time.Duration
	itl          []time.Duration
	chunks       int // chunks that carried text
	outputTokens int // usage.completion_tokens, else chunks
	promptTokens int // usage.prompt_tokens, else the words sent
	err          error
}

// chunk is the part of a streamed completion the load reads.
type chunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// hasText reports whether the chunk carries generated text: a role
// prelude ({"role":"assistant","content":""}) and a usage-only chunk do
// not. Reasoning text is generated text.
func (c *chunk) hasText() bool {
	for _, ch := range c.Choices {
		if ch.Text != "" {
			return true
		}
		if d := ch.Delta; d.Content != nil && *d.Content != "" || d.ReasoningContent != nil && *d.ReasoningContent != "" {
			return true
		}
	}
	return false
}

// body returns the JSON request of r for c's endpoint.
func (c Config) body(r request) ([]byte, error) {
	m := map[string]any{
		"model":          c.Model,
		"max_tokens":     r.outputTokens,
		"ignore_eos":     true,
		"temperature":    0,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if c.Endpoint == Chat {
		m["messages"] = []map[string]string{{"role": "user", "content": r.prompt}}
	} else {
		m["prompt"] = r.prompt
	}
	return json.Marshal(m)
}

// do sends r and reads its stream. The send time is taken just before the
// request is written; nothing but reading and decoding the stream happens
// between chunks.
func (c Config) do(ctx context.Context, client *http.Client, r request) (res result) {
	body, err := c.body(r)
	if err != nil {
		return result{err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, c.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/v1/"+c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return result{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res.sent = time.Now()
	res.promptTokens = r.promptTokens
	resp, err := client.Do(req)
	if err != nil {
		res.err = fmt.Errorf("send: %w", unwrapURL(err))
		return res
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		res.err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
		return res
	}
	res.err = readStream(resp.Body, &res, time.Now)
	return res
}

// unwrapURL drops the *url.Error wrapper, whose message repeats the URL
// for every request.
func unwrapURL(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// errNoDone ends a stream that stopped before "data: [DONE]".
var errNoDone = errors.New("stream ended without data: [DONE]")

// readStream reads server-sent events from body into res: the time of
// every chunk with text, and the usage. Events are delimited by blank
// lines and may span several data: lines, however the bytes arrive. An
// event's time is clock's when its blank line has been read.
func readStream(body io.Reader, res *result, clock func() time.Time) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4<<10), 16<<20)
	var data []byte
	var last time.Time
	var usage int
	dispatch := func() (done bool, err error) {
		if len(data) == 0 {
			return false, nil
		}
		defer func() { data = data[:0] }()
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			return true, nil
		}
		now := clock()
		var ch chunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return false, fmt.Errorf("event is not JSON: %q", clip(string(data), 120))
		}
		if ch.Error != nil {
			return false, fmt.Errorf("server error: %s", ch.Error.Message)
		}
		if ch.Usage != nil {
			usage = ch.Usage.CompletionTokens
			if ch.Usage.PromptTokens > 0 {
				res.promptTokens = ch.Usage.PromptTokens
			}
		}
		if !ch.hasText() {
			return false, nil
		}
		if res.chunks == 0 {
			res.ttft = now.Sub(res.sent)
		} else {
			res.itl = append(res.itl, now.Sub(last))
		}
		last = now
		res.chunks++
		res.e2e = now.Sub(res.sent)
		return false, nil
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			done, err := dispatch()
			if err != nil {
				return err
			}
			if done {
				return finish(res, usage)
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
		// Comments (":"), event:, id: and retry: lines say nothing the
		// load measures.
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read stream: %w", err)
	}
	done, err := dispatch() // a last event without its blank line
	if err != nil {
		return err
	}
	if !done {
		return errNoDone
	}
	return finish(res, usage)
}

// finish sets the output tokens of a complete stream.
func finish(res *result, usage int) error {
	if res.chunks == 0 {
		return errors.New("the stream carried no text")
	}
	res.outputTokens = res.chunks
	if usage > 0 {
		res.outputTokens = usage
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
