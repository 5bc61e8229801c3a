// Package loadgen drives an OpenAI-compatible streaming endpoint
// (/v1/completions or /v1/chat/completions, server-sent events) with a
// seeded load and reports what vLLM's `bench serve` and SGLang's
// bench_serving report: output tok/s, request throughput, TTFT, TPOT, ITL
// and end-to-end latency (mean, median, p90, p99, in ms), goodput under
// TTFT and ITL limits, and failed requests counted by error.
//
// The load is a fixed prompt set drawn from a seed: prompt and output
// lengths are given, or drawn uniformly around them (RangeRatio). Requests
// are sent at a fixed concurrency (a closed loop: each of Concurrency
// workers sends its next request when the last one ends), or at a request
// rate with gamma-distributed gaps (shape Burstiness; 1 is a Poisson
// process), each send at its absolute scheduled time so that lag does not
// accumulate, optionally capped at Concurrency in flight. A run ends after
// Requests requests or after Duration. Warm-up requests go first and are
// not counted, neither in the timings nor in the server's counters.
//
// Definitions (as vLLM's, with the pitfalls its users report avoided):
//
//	TTFT  from the send to the first chunk that carries generated text;
//	      a chunk with only the assistant role or empty content does not
//	      count, and neither does the trailing usage-only chunk.
//	E2E   from the send to the last chunk that carries text.
//	TPOT  (E2E − TTFT) / (output tokens − 1), for requests of more than
//	      one token.
//	ITL   the gaps between consecutive text chunks, pooled over requests.
//	      A chunk may carry several tokens (a speculative step's accepted
//	      tokens): its gap is one ITL value, as vLLM counts it.
//	queue at a Rate, from a request's scheduled send to its send: the
//	      wait for a place under the Concurrency cap, which the other
//	      times leave out (vLLM's pitfall at a max concurrency).
//
// Output tokens are the server's usage.completion_tokens when it sends
// usage (stream_options.include_usage), and otherwise the number of text
// chunks; the client runs no tokenizer, so no tokenizer cost is counted as
// server time. The HTTP client keeps at least as many connections as
// requests can be in flight.
//
// Where the server serves Prometheus metrics (MetricsURL), they are
// scraped after the warm-up and after the load. vLLM's counters
// vllm:spec_decode_num_accepted_tokens_total and
// vllm:spec_decode_num_drafts_total give the acceptance length over the
// load, 1 + Δaccepted / Δdrafts; SGLang's sglang:spec_accept_length is a
// gauge (an average the server keeps, not a count), so its value after the
// load is reported and the report says it is a gauge.
package loadgen
