"""Benchmark a gpt-fast checkout: prefill, decode and speculative decoding.

Run in the checkout (perfbot runs each step in the commit's tree):

    python3 /path/to/bench.py [--device cuda] [--dim 2048 --layers 12 ...]

It imports the checkout's model.py and generate.py, builds a model with
random weights on the device (no download) and times the engine's own
functions in eager mode: generate.prefill over a prompt, generate.
decode_n_tokens (the median of a few passes), and generate.speculative_decode with a draft that is the
target's first layers. The output is the Go benchmark format: configuration
lines (torch, cuda, nccl, gpu) and one result line per benchmark:

    BenchmarkPrefill     1  <tok/s> tok/s
    BenchmarkDecode      1  <tok/s> tok/s  <ms> ms/token
    BenchmarkSpeculative 1  <tok/s> tok/s  <n> accept-len  <ms> ms/verify  <ms> ms/draft  <ms> ms/decode

accept-len is the tokens a speculative cycle emits (accepted drafts plus
the target's own); ms/verify is the target's forward over k+1 tokens,
ms/draft the draft's k steps, ms/decode one plain decode step, each a
median over the run.
"""

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine  # noqa: E402


def sync(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize(device)


def timed(device, fn):
    sync(device)
    t0 = time.perf_counter()
    out = fn()
    sync(device)
    return time.perf_counter() - t0, out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--checkout", default=".")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--cache-len", type=int, default=8192, help="KV cache positions, as a server would allocate")
    p.add_argument("--prompt", type=int, default=512)
    p.add_argument("--new", type=int, default=48, help="tokens decoded in each timed pass")
    p.add_argument("--passes", type=int, default=3, help="timed decode passes; the median counts")
    p.add_argument("--spec-new", type=int, default=64, help="tokens decoded speculatively")
    p.add_argument("--spec-k", type=int, default=5)
    p.add_argument("--draft-layers", type=int, default=3)
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--seed", type=int, default=1234)
    a = p.parse_args()

    t_import = time.perf_counter()
    model_mod, generate = engine.load(a.checkout)
    dev = torch.device(a.device)
    target = engine.build(model_mod, dev, a.dim, a.layers, a.heads, a.vocab, a.cache_len, a.seed)
    draft = engine.draft_of(model_mod, target, a.draft_layers)
    with torch.device(dev):
        target.setup_caches(max_batch_size=1, max_seq_length=a.cache_len)
        draft.setup_caches(max_batch_size=1, max_seq_length=a.cache_len)
    t_built = time.perf_counter()
    sampling = dict(temperature=0.8, top_k=200)
    params = sum(p.numel() for p in target.parameters())

    for line in engine.facts(dev):
        print(line)
    print(f"model: dim={a.dim} layers={a.layers} heads={a.heads} vocab={a.vocab} params={params/1e6:.0f}M "
          f"dtype=bfloat16 cache={a.cache_len} draft_layers={a.draft_layers} k={a.spec_k}")

    g = torch.Generator(device="cpu").manual_seed(a.seed)
    prompt = torch.randint(0, a.vocab, (1, a.prompt), generator=g).to(dev)
    pos = torch.arange(0, a.prompt, device=dev)

    with torch.no_grad():
        # Prefill: the target over the prompt, a few times.
        for _ in range(2):
            generate.prefill(target, prompt, pos, **sampling)
        pre = [timed(dev, lambda: generate.prefill(target, prompt, pos, **sampling))[0] for _ in range(5)]
        first = generate.prefill(target, prompt, pos, **sampling)
        generate.prefill(draft, prompt, pos, **sampling)

        # Decode: the engine's own loop, a warm-up pass then a timed one.
        start = torch.tensor([a.prompt], device=dev, dtype=torch.int)
        generate.decode_n_tokens(target, first.view(1, -1), start.clone(), a.warmup, **sampling)
        t_dec = statistics.median(
            timed(dev, lambda: generate.decode_n_tokens(target, first.view(1, -1), start.clone(), a.new, **sampling))[0]
            for _ in range(a.passes))

        # Speculative decoding from the end of the prompt.
        cur, at, emitted, cycles = first.view(-1), a.prompt, 0, 0
        t_spec = 0.0
        while emitted < a.spec_new:
            dt, toks = timed(dev, lambda: generate.speculative_decode(target, draft, cur, at, a.spec_k, **sampling))
            if cycles >= 2:  # the first cycles warm the kernels up
                t_spec += dt
                emitted += toks.numel()
            cycles += 1
            at += toks.numel()
            cur = toks[-1].view(-1)
        accept = emitted / (cycles - 2)

        # Its parts, at the position reached: the target's verify pass,
        # the draft's k steps and one plain decode step.
        ver, dra, one = [], [], []
        verify_in = torch.randint(0, a.vocab, (1, a.spec_k + 1), generator=g).to(dev)
        verify_pos = torch.arange(at, at + a.spec_k + 1, device=dev)
        here = torch.tensor([at], device=dev, dtype=torch.int)
        for i in range(8):
            v, _ = timed(dev, lambda: generate.model_forward(target, verify_in, verify_pos))
            d, _ = timed(dev, lambda: generate.decode_n_tokens(draft, cur.view(1, -1), here.clone(), a.spec_k, **sampling))
            o, _ = timed(dev, lambda: generate.decode_n_tokens(target, cur.view(1, -1), here.clone(), 1, **sampling))
            if i >= 2:
                ver.append(v)
                dra.append(d)
                one.append(o)

    # Where a run's time goes, for whoever sizes a bisection's budget. Not
    # a configuration line ("key: value"): perfbot keeps those as facts of
    # the run, and these differ between any two runs.
    t_end = time.perf_counter()
    print(f"bench.py spent {t_import - T0:.1f} s importing, {t_built - t_import:.1f} s building the model "
          f"and {t_end - t_built:.1f} s measuring", file=sys.stderr)
    ms = lambda xs: statistics.median(xs) * 1e3
    print(f"BenchmarkPrefill 1 {a.prompt / statistics.median(pre):.2f} tok/s")
    print(f"BenchmarkDecode 1 {a.new / t_dec:.2f} tok/s {t_dec / a.new * 1e3:.4f} ms/token")
    print(f"BenchmarkSpeculative 1 {emitted / t_spec:.2f} tok/s {accept:.3f} accept-len "
          f"{ms(ver):.4f} ms/verify {ms(dra):.4f} ms/draft {ms(one):.4f} ms/decode")


if __name__ == "__main__":
    main()
