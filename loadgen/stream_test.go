package loadgen

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timedReader hands out one part per Read and sets the clock to the part's
// time first: the time at which those bytes arrived.
type timedReader struct {
	parts []timedPart
	now   time.Time
}

type timedPart struct {
	at   time.Duration // after the send
	data string
}

func (r *timedReader) Read(p []byte) (int, error) {
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	part := &r.parts[0]
	r.now = time.Unix(0, 0).Add(part.at)
	n := copy(p, part.data)
	part.data = part.data[n:]
	if part.data == "" {
		r.parts = r.parts[1:]
	}
	return n, nil
}

const (
	roleChunk  = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
	usageChunk = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":5}}\n\n"
	done       = "data: [DONE]\n\n"
)

func text(s string) string { return "data: {\"choices\":[{\"text\":\"" + s + "\"}]}\n\n" }
func delta(s string) string {
	return "data: {\"choices\":[{\"delta\":{\"content\":\"" + s + "\"}}]}\n\n"
}

func TestReadStream(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		parts   []timedPart
		err     string
		ttft    time.Duration
		e2e     time.Duration
		itl     []time.Duration
		tokens  int
		prompts int
	}{
		{
			name:  "the role chunk does not end TTFT",
			parts: []timedPart{{5 * ms, roleChunk}, {40 * ms, delta("a")}, {52 * ms, delta("b")}, {60 * ms, done}},
			ttft:  40 * ms, e2e: 52 * ms, itl: []time.Duration{12 * ms}, tokens: 2, prompts: 3,
		},
		{
			name:  "the usage chunk moves neither E2E nor the count's source",
			parts: []timedPart{{10 * ms, text("a")}, {20 * ms, text("bc")}, {30 * ms, text("d")}, {90 * ms, usageChunk}, {91 * ms, done}},
			ttft:  10 * ms, e2e: 30 * ms, itl: []time.Duration{10 * ms, 10 * ms}, tokens: 5, prompts: 7,
		},
		{
			name: "an event split over reads counts when its blank line arrives",
			parts: []timedPart{{10 * ms, "data: {\"choices\":[{\"te"}, {15 * ms, "xt\":\"a\"}]}\n"}, {18 * ms, "\n"},
				{25 * ms, text("b")}, {26 * ms, done}},
			ttft: 18 * ms, e2e: 25 * ms, itl: []time.Duration{7 * ms}, tokens: 2, prompts: 3,
		},
		{
			name:  "comments and event fields are skipped; data lines join",
			parts: []timedPart{{3 * ms, ": keep-alive\n\nevent: completion\ndata: {\"choices\":\ndata: [{\"text\":\"x\"}]}\n\n"}, {4 * ms, done}},
			ttft:  3 * ms, e2e: 3 * ms, tokens: 1, prompts: 3,
		},
		{
			name:  "reasoning text is generated text",
			parts: []timedPart{{8 * ms, "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n"}, {9 * ms, done}},
			ttft:  8 * ms, e2e: 8 * ms, tokens: 1, prompts: 3,
		},
		{
			name:  "a last event without its blank line",
			parts: []timedPart{{8 * ms, text("a")}, {9 * ms, "data: [DONE]"}},
			ttft:  8 * ms, e2e: 8 * ms, tokens: 1, prompts: 3,
		},
		{name: "a stream cut before [DONE]", parts: []timedPart{{1 * ms, text("a")}}, err: "without data: [DONE]"},
		{name: "a stream with only the role chunk", parts: []timedPart{{1 * ms, roleChunk}, {2 * ms, done}}, err: "carried no text"},
		{name: "an error event", parts: []timedPart{{1 * ms, "data: {\"error\":{\"message\":\"out of memory\"}}\n\n"}}, err: "server error: out of memory"},
		{name: "an event that is not JSON", parts: []timedPart{{1 * ms, "data: {oops\n\n"}}, err: "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &timedReader{parts: tt.parts}
			res := result{sent: time.Unix(0, 0), promptTokens: 3}
			err := readStream(body, &res, func() time.Time { return body.now })
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.ttft, res.ttft, "ttft")
			assert.Equal(t, tt.e2e, res.e2e, "e2e")
			assert.Equal(t, tt.itl, res.itl, "itl")
			assert.Equal(t, tt.tokens, res.outputTokens, "output tokens")
			assert.Equal(t, tt.prompts, res.promptTokens, "prompt tokens")
		})
	}
}

func TestReport(t *testing.T) {
	ms := time.Millisecond
	results := []result{
		{ttft: 10 * ms, e2e: 40 * ms, itl: []time.Duration{10 * ms, 20 * ms}, outputTokens: 4, promptTokens: 8},
		{ttft: 30 * ms, e2e: 30 * ms, outputTokens: 1, promptTokens: 8},
		{ttft: 20 * ms, e2e: 120 * ms, itl: []time.Duration{50 * ms, 50 * ms}, outputTokens: 3, promptTokens: 8},
		{err: errNoDone}, {err: errNoDone},
	}
	c := Config{URL: "http://127.0.0.1:1", TTFTLimit: 25 * ms, ITLLimit: 30 * ms}
	rep := report(c, results, 2*time.Second)
	m := rep.Metrics
	assert.Equal(t, 3.0, m["completed"])
	assert.Equal(t, 2.0, m["failed"])
	assert.Equal(t, map[string]int{errNoDone.Error(): 2}, rep.Errors)
	assert.Equal(t, 4.0, m["total_output_tokens"]/2, "8 output tokens over 2 s")
	assert.Equal(t, 4.0, m["output_throughput"])
	assert.Equal(t, 1.5, m["request_throughput"])
	assert.Equal(t, 16.0, m["total_token_throughput"])
	assert.Equal(t, 0.5, m["request_goodput"], "only the first request is within both limits")
	assert.Equal(t, 20.0, m["mean_ttft_ms"])
	assert.Equal(t, 20.0, m["median_ttft_ms"])
	// TPOT: (40-10)/3 = 10 and (120-20)/2 = 50; the one-token request has none.
	assert.Equal(t, 30.0, m["mean_tpot_ms"])
	assert.InDelta(t, 46.0, m["p90_tpot_ms"], 1e-9)
	assert.Equal(t, 32.5, m["mean_itl_ms"])
	assert.Equal(t, 35.0, m["median_itl_ms"])
	assert.InDelta(t, 50.0, m["p99_itl_ms"], 1e-9)
	assert.InDelta(t, 118.4, m["p99_e2el_ms"], 1e-9)
}

func TestReportWithoutTPOT(t *testing.T) {
	rep := report(Config{}, []result{{ttft: time.Millisecond, e2e: time.Millisecond, outputTokens: 1}}, time.Second)
	assert.NotContains(t, rep.Metrics, "mean_tpot_ms", "no request had two tokens")
	assert.NotContains(t, rep.Metrics, "mean_itl_ms")
	assert.NotContains(t, rep.Metrics, "request_goodput", "no limits")
	assert.Equal(t, 1.0, rep.Metrics["mean_ttft_ms"])
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		v    []float64
		p    float64
		want float64
	}{
		{"one value", []float64{7}, 99, 7},
		{"median of an even count interpolates", []float64{1, 2, 3, 4}, 50, 2.5},
		{"p90 of 11 values is the tenth", []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
		{"p99 of two", []float64{0, 100}, 99, 99},
		{"p100 is the largest", []float64{1, 5, 9}, 100, 9},
		{"p0 is the smallest", []float64{1, 5, 9}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, percentile(tt.v, tt.p), 1e-12)
		})
	}
}
