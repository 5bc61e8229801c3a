#!/usr/bin/env python3
"""Benchmarks of the engine, printed as Go benchmark lines.

    python3 bench/run.py [--bench verify,decode] [--size tiny|small|h200]
                         [--verify-iters N] [--decode-iters N] [--count C]

BenchmarkVerifyStep times the verify step of speculative decoding: the last
token and k drafts through the target in extend mode, then the acceptance
check. Its drafts are the target's own greedy continuation, so every step
accepts all k and emits k+1 tokens: tok/s is (k+1) per step. BenchmarkDecode
times one decode step and its greedy choice: one token per step.

Each benchmark first warms up (iterations, and on CUDA at least --warmup-s
seconds, 0.3 by default, so that the clocks have ramped), then times its
iterations between two device synchronizations. Every setting has a
variable: TESTBED_SIZE, TESTBED_VERIFY_ITERS, TESTBED_DECODE_ITERS,
TESTBED_WARMUP, TESTBED_WARMUP_S, TESTBED_COUNT, and TESTBED_<FIELD> for
each field of model.ModelConfig. The defaults take a few seconds on an H200
(the h200 size) and on a CPU (the tiny size).
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import torch  # noqa: E402

from model import Transformer, config_from  # noqa: E402
from runtime import ModelRunner, pick_device, pick_dtype, synchronize  # noqa: E402
from speculative import verify_step  # noqa: E402

DEFAULTS = {
    # device type: verify iterations, decode iterations, warm-up seconds
    "cuda": (300, 600, 0.3),
    "cpu": (100, 200, 0.0),
}


def env_int(name, default):
    raw = os.environ.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit("bench: %s=%r is not an integer" % (name, raw))


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", default=os.environ.get("TESTBED_BENCH", "verify,decode"), help="benchmarks to run: verify, decode, or both")
    p.add_argument("--device", default=None, help="cuda or cpu (default: TESTBED_DEVICE, else cuda when available)")
    p.add_argument("--size", default=os.environ.get("TESTBED_SIZE"), help="model size: tiny, small or h200 (default: h200 on CUDA, tiny on the CPU)")
    p.add_argument("--verify-iters", type=int, default=None)
    p.add_argument("--decode-iters", type=int, default=None)
    p.add_argument("--warmup", type=int, default=env_int("TESTBED_WARMUP", 20), help="warm-up iterations at least")
    p.add_argument("--warmup-s", type=float, default=None, help="warm-up seconds at least")
    p.add_argument("--count", type=int, default=env_int("TESTBED_COUNT", 1), help="timed rounds of each benchmark")
    for name in ("layers", "hidden", "heads", "mlp", "vocab", "max_len", "prompt", "draft_tokens", "seed"):
        p.add_argument("--" + name.replace("_", "-"), dest=name, type=int, default=None)
    args = p.parse_args(argv)
    args.bench = [b.strip() for b in args.bench.split(",") if b.strip()]
    for b in args.bench:
        if b not in ("verify", "decode"):
            p.error("unknown benchmark %r (want verify or decode)" % b)
    return args


def timed(step, iters, warmup, warmup_s, device):
    """Seconds for iters calls of step, after a warm-up that is not timed."""
    start = time.perf_counter()
    done = 0
    while done < warmup or time.perf_counter() - start < warmup_s:
        step()
        done += 1
        if done % 16 == 0:
            synchronize(device)
    synchronize(device)
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    synchronize(device)
    return time.perf_counter() - t0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    device = pick_device(args.device)
    dtype = pick_dtype(device)
    size = args.size or ("h200" if device.type == "cuda" else "tiny")
    overrides = {k: getattr(args, k) for k in ("layers", "hidden", "heads", "mlp", "vocab", "max_len", "prompt", "draft_tokens", "seed")}
    cfg = config_from(size, overrides=overrides)
    verify_iters, decode_iters, warmup_s = DEFAULTS["cuda" if device.type == "cuda" else "cpu"]
    verify_iters = args.verify_iters or env_int("TESTBED_VERIFY_ITERS", verify_iters)
    decode_iters = args.decode_iters or env_int("TESTBED_DECODE_ITERS", decode_iters)
    if args.warmup_s is not None:
        warmup_s = args.warmup_s
    elif os.environ.get("TESTBED_WARMUP_S"):
        warmup_s = float(os.environ["TESTBED_WARMUP_S"])
    if min(verify_iters, decode_iters, args.count) < 1 or args.warmup < 0:
        raise SystemExit("bench: iterations and --count must be positive, --warmup not negative")

    with torch.inference_mode():
        model = Transformer(cfg, device, dtype)
        runner = ModelRunner(model)
        k = cfg.draft_tokens
        g = torch.Generator(device="cpu").manual_seed(cfg.seed + 1)
        prompt = torch.randint(0, cfg.vocab, (cfg.prompt,), generator=g).to(device)
        logits, _ = runner.prefill(prompt)
        verify_tokens = torch.zeros(k + 1, dtype=torch.long, device=device)
        verify_tokens[0] = logits[-1].argmax(-1)
        verify_positions = torch.arange(cfg.prompt, cfg.prompt + k + 1, dtype=torch.long, device=device)
        # Drafts the verify step accepts in full: its own predictions. The
        # step is causal, so k rounds settle all k of them, computed the way
        # the timed steps compute them (decode steps may round differently
        # in bfloat16).
        for _ in range(k):
            _, predictions, _ = verify_step(runner, verify_tokens, verify_positions)
            verify_tokens[1:] = predictions[:-1]
        accepted, _, _ = verify_step(runner, verify_tokens, verify_positions)
        if int(accepted) != k:
            print("bench: warning: the verify step accepts %d of its %d drafts" % (int(accepted), k), file=sys.stderr)
        decode_token = verify_tokens[:1].clone()
        decode_position = verify_positions[:1].clone()

        print_config(cfg, device, dtype, model, runner)
        for _ in range(args.count):
            if "verify" in args.bench:
                secs = timed(lambda: verify_step(runner, verify_tokens, verify_positions), verify_iters, args.warmup, warmup_s, device)
                per = secs / verify_iters
                print("BenchmarkVerifyStep\t%d\t%.0f ns/op\t%.2f tok/s\t%.4f ms/verify" % (verify_iters, per * 1e9, (k + 1) / per, per * 1e3))
            if "decode" in args.bench:
                secs = timed(lambda: runner.decode(decode_token, decode_position)[0].argmax(-1), decode_iters, args.warmup, warmup_s, device)
                per = secs / decode_iters
                print("BenchmarkDecode\t%d\t%.0f ns/op\t%.2f tok/s" % (decode_iters, per * 1e9, 1 / per))
            sys.stdout.flush()


def print_config(cfg, device, dtype, model, runner):
    """Go benchmark configuration lines: what the numbers were taken with."""
    print("device: %s" % device.type)
    if device.type == "cuda":
        print("gpu: %s" % torch.cuda.get_device_name(device))
    print("torch: %s" % torch.__version__)
    print("dtype: %s" % str(dtype).replace("torch.", ""))
    sizes = runner.graphs.sizes()
    print("graphs: %s" % ("captured for %s tokens" % ",".join(str(n) for n in sizes) if sizes else "off"))
    print("attention: %s %s" % (model.attention.name, model.attention.describe()))
    print("model: layers=%d hidden=%d heads=%d mlp=%d vocab=%d max_len=%d prompt=%d draft_tokens=%d seed=%d"
          % (cfg.layers, cfg.hidden, cfg.heads, cfg.mlp, cfg.vocab, cfg.max_len, cfg.prompt, cfg.draft_tokens, cfg.seed))


if __name__ == "__main__":
    main()
