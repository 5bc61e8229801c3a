// Package bench turns benchmark output into samples.
//
// One place parses benchmark output: Go benchmark format (through
// golang.org/x/perf/benchfmt), nccl-tests, NCCL_DEBUG=INFO lines (also
// read into a run's fingerprint by NCCLDebug), SGLang, vLLM, Prometheus text
// (through prometheus/common's expfmt), JSON and regular expressions. Parsers never return a silent zero or an
// empty success: output that holds no result, or a line that cannot be
// read, is an error that quotes the offending line (*OutputError, which
// wraps ErrNoResults, ErrBenchmarkFailed or ErrSyntax). Nor do they return
// NaN or an infinity: such a result (nan, inf, 1e400, Python's NaN in
// JSON) is ErrBenchmarkFailed, so the revision counts as one whose
// benchmark failed. The exceptions are settings and "no data" markers,
// which are dropped: a serving benchmark's request rate "inf" and a
// Prometheus summary quantile that is NaN. A rate or time at or below
// zero is ErrBenchmarkFailed too (zero is kept where the output rounds to
// it or where it is true, see allPossible). A gobench line of 32 KiB or
// more (a progress bar redrawn with \r) is not read as a result.
//
// Names and units by format (each parser's comment has the details):
//
//	gobench         "VerifyStep/k=3-2"; units as benchfmt gives them (ns/op → sec/op)
//	nccl-tests      "size=134217728/out-of-place" in us, algbw-GB/s, busbw-GB/s; "avg" in busbw-GB/s
//	nccl-debug      NCCL_DEBUG=INFO lines: "ranks", "channels/coll", "AllReduce/algo=Ring/proto=LL/calls", "init" in s
//	sglang-serving  JSON result keys: "output_throughput" tok/s, "median_ttft_ms" ms, "accept_length"
//	vllm-serve      JSON result keys: "output_throughput", "p99_itl_ms", "spec_decode_acceptance_length"
//	sglang-log      "gen_throughput" tok/s, "accept_len", "accept_rate": medians over the log
//	sglang-one-batch "bs=8/median_decode_latency" s, "bs=8/prefill_throughput" tok/s (result file keys)
//	vllm-throughput "requests_per_second" req/s, "tokens_per_second", "output_tokens_per_second" tok/s
//	prometheus      `metric{label="v"}` as written (le, quantile last), by metric name
//	json, regex     names and units from the options
//
// Dimensionless values (counts, accept length) have the unit "value".
// Select picks one value out of the samples of one run.
package bench
