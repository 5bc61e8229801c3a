"""Numerics of the GPU testbed at checkouts, printed as one JSON object.

python3 gpu_numerics.py DIR... computes, at each DIR in turn (torch is
imported once; the engine's modules are dropped between checkouts), on the
CPU in float32 at the tiny size: greedy decoding token by token, the verify
step over the same tokens, and speculative generation with the draft head;
once as the environment says and once with TESTBED_CUDA_GRAPHS=0 set before
the runner is built. It prints {DIR: {"on": ..., "off": ...}}. The Go test
compares the numbers; this script only computes them.
"""

import importlib
import json
import os
import sys

import torch

N = 12
ROOTS = ("model", "attention", "speculative", "runtime", "communicator", "bench", "tests")


def compute():
    attention = importlib.import_module("attention")
    model_pkg = importlib.import_module("model")
    runtime = importlib.import_module("runtime")
    spec = importlib.import_module("speculative")

    device = torch.device("cpu")
    cfg = model_pkg.config_from("tiny", env={})
    k = cfg.draft_tokens
    prompt = torch.randint(0, cfg.vocab, (cfg.prompt,), generator=torch.Generator().manual_seed(7))

    model = model_pkg.Transformer(cfg, device, torch.float32)
    runner = runtime.ModelRunner(model)
    tokens, logits = spec.greedy(runner, prompt, N, keep_logits=True)

    # The verify step over the greedy tokens at the positions decode ran
    # them: the token the prompt produced, then k of its continuation.
    runner.prefill(prompt)
    positions = torch.arange(cfg.prompt, cfg.prompt + k + 1)
    verify_tokens = torch.tensor(tokens[: k + 1])
    accepted, predictions, _ = spec.verify_step(runner, verify_tokens, positions)
    verify_logits = runner.forward(verify_tokens, positions, attention.ForwardMode.EXTEND)[0].clone()

    generated, steps = spec.speculative(runner, spec.DraftHead(model), prompt, N, k)
    return {
        "torch": torch.__version__,
        "sdpa": attention.has_sdpa(),
        "graphs": runner.graphs.sizes(),
        "k": k,
        "greedy": tokens,
        "speculative": generated,
        "verify_steps": steps,
        "accepted": int(accepted),
        "verify_predictions": predictions.tolist(),
        # the decode logits that chose tokens 1..k+1, which verify predicts
        "decode_logits": [row.tolist() for row in logits[1 : k + 2]],
        "verify_logits": verify_logits.tolist(),
    }


results = {}
with torch.inference_mode():
    for root in sys.argv[1:]:
        sys.path.insert(0, root)
        try:
            results[root] = {"on": compute()}
            os.environ["TESTBED_CUDA_GRAPHS"] = "0"
            results[root]["off"] = compute()
        finally:
            os.environ.pop("TESTBED_CUDA_GRAPHS", None)
            sys.path.remove(root)
            for name in list(sys.modules):
                if name.split(".")[0] in ROOTS:
                    del sys.modules[name]
print(json.dumps(results))
