// Command infer generates tokens from a random prompt with speculative
// decoding and prints them with the acceptance statistics.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/perfbot/perfbot/testbed/engine/bench"
	"github.com/perfbot/perfbot/testbed/engine/model"
	"github.com/perfbot/perfbot/testbed/engine/speculative"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("infer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tokens := fs.Int("tokens", 32, "number of tokens to generate")
	k := fs.Int("k", bench.DraftTokens, "draft tokens per verify step")
	promptLen := fs.Int("prompt", 64, "prompt length")
	attn := fs.String("attention", "", "attention backend: tiled or naive")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := bench.Config()
	if err != nil {
		fmt.Fprintln(stderr, "infer:", err)
		return 2
	}
	if *attn != "" {
		cfg.Attention = *attn
	}
	if err := generate(ctx, cfg, *promptLen, *tokens, *k, stdout); err != nil {
		fmt.Fprintln(stderr, "infer:", err)
		return 1
	}
	return 0
}

func generate(ctx context.Context, cfg model.Config, promptLen, n, k int, w io.Writer) error {
	target, err := model.New(cfg)
	if err != nil {
		return err
	}
	draft, err := speculative.NewDraft(target)
	if err != nil {
		return err
	}
	dec, err := speculative.NewDecoder(target, draft, k)
	if err != nil {
		return err
	}
	start := time.Now()
	out, steps, err := dec.Generate(ctx, bench.Prompt(promptLen, cfg.Vocab, cfg.Seed), n)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	fmt.Fprintln(w, "tokens:", out)
	fmt.Fprintf(w, "allreduce: %s\n", target.Communicator().Backend(cfg.Hidden))
	fmt.Fprintf(w, "%d tokens in %d verify steps (%.2f per step), %.1f tok/s\n",
		len(out), steps, float64(len(out)-1)/float64(max(steps, 1)), float64(len(out))/elapsed.Seconds())
	return nil
}
