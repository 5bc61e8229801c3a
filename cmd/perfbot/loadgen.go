package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/loadgen"
)

func loadgenCmd(g *globals) *cobra.Command {
	var (
		c       loadgen.Config
		chat    bool
		metrics string
		ratios  []string
	)
	cmd := &cobra.Command{
		Use:   "loadgen URL",
		Short: "Drive an OpenAI-compatible streaming server with a seeded load and report tok/s, TTFT, TPOT, ITL and E2E",
		Long: `loadgen sends a seeded load to URL/v1/completions (or, with --chat,
URL/v1/chat/completions), streaming, and reports output tok/s, request
throughput, TTFT, TPOT, ITL and end-to-end latency (mean, median, p90, p99,
in ms), goodput under --ttft-limit and --itl-limit, and failed requests by
error. With --rate the sends follow gamma-distributed gaps (--burstiness 1
is Poisson) on absolute times; without it --concurrency requests are kept in
flight. When the server serves Prometheus metrics (--metrics, default
URL/metrics; "none" skips them), the speculative-decoding acceptance length
over the load is reported too, and each --server-ratio: the ratio of two
counters' increases over the load, scaled.

A summary goes to stderr, and one line of JSON to stdout: a benchmark step
that runs "perfbot loadgen …" reads it with format: openai.`,
		Example: `  perfbot loadgen http://127.0.0.1:30000 --concurrency 1 --requests 64 --warmup 4
  perfbot loadgen http://127.0.0.1:8000 --rate 8 --burstiness 1 --duration 2m --prompt-tokens 1024 --output-tokens 256 --seed 1`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			c.URL = args[0]
			if chat {
				c.Endpoint = loadgen.Chat
			}
			switch metrics {
			case "":
				c.MetricsURL = strings.TrimRight(c.URL, "/") + "/metrics"
			case "none":
			default:
				c.MetricsURL = metrics
			}
			for _, r := range ratios {
				ratio, err := loadgen.ParseRatio(r)
				if err != nil {
					return usageError{err}
				}
				c.Ratios = append(c.Ratios, ratio)
			}
			rep, err := loadgen.Run(cmd.Context(), c)
			if err != nil {
				if cmd.Context().Err() != nil {
					return err
				}
				return usageError{err}
			}
			if err := rep.WriteText(g.stderr); err != nil {
				return err
			}
			return rep.WriteJSON(g.stdout)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&chat, "chat", false, "drive /v1/chat/completions instead of /v1/completions")
	f.StringVar(&c.Model, "model", "", "model name sent with every request")
	f.IntVar(&c.Requests, "requests", 0, "measured requests (or --duration)")
	f.DurationVar(&c.Duration, "duration", 0, "send requests until this has passed (or --requests)")
	f.IntVar(&c.Warmup, "warmup", 0, "requests sent first and not counted")
	f.IntVar(&c.Concurrency, "concurrency", 0, "requests in flight (closed loop; default 1), or the cap with --rate")
	f.Float64Var(&c.Rate, "rate", 0, "requests a second, gamma arrivals (0: closed loop at --concurrency)")
	f.Float64Var(&c.Burstiness, "burstiness", 1, "gamma shape of the gaps at --rate (1: Poisson; lower: burstier)")
	f.Uint64Var(&c.Seed, "seed", 0, "seed of the prompts, their lengths and the arrivals")
	f.IntVar(&c.PromptTokens, "prompt-tokens", 128, "prompt length in words")
	f.IntVar(&c.OutputTokens, "output-tokens", 128, "output length (max_tokens, with ignore_eos)")
	f.Float64Var(&c.RangeRatio, "range-ratio", 0, "draw lengths uniformly within ±this fraction")
	f.DurationVar(&c.TTFTLimit, "ttft-limit", 0, "goodput: the largest TTFT of a good request")
	f.DurationVar(&c.ITLLimit, "itl-limit", 0, "goodput: the largest gap between chunks of a good request")
	f.DurationVar(&c.RequestTimeout, "request-timeout", 10*time.Minute, "bound on one request")
	f.StringVar(&metrics, "metrics", "", `Prometheus metrics URL (default URL/metrics; "none" skips the scrape)`)
	f.StringArrayVar(&ratios, "server-ratio", nil, "NAME=NUM/DEN[*SCALE]: a metric from the server's counters over the load (e.g. verify_ms=testbed:verify_seconds/testbed:verify_steps*1000)")
	return cmd
}
