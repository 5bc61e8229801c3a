"""Numerics of the GPU testbed at one checkout, printed as one JSON object.

Run from the checkout's root (python3 PATH/gpu_numerics.py). On the CPU, in
float32, at the tiny size: greedy decoding token by token, the verify step
over the same tokens, and speculative generation with the draft head. The
Go test compares the numbers; this script only computes them.
"""

import json
import os
import sys

sys.path.insert(0, os.getcwd())

import torch  # noqa: E402

from attention import ForwardMode, has_sdpa  # noqa: E402
from model import Transformer, config_from  # noqa: E402
from runtime import ModelRunner  # noqa: E402
from speculative import DraftHead, speculative, verify_step  # noqa: E402
from speculative import greedy  # noqa: E402

N = 12

with torch.inference_mode():
    device = torch.device("cpu")
    cfg = config_from("tiny", env={})
    k = cfg.draft_tokens
    prompt = torch.randint(0, cfg.vocab, (cfg.prompt,), generator=torch.Generator().manual_seed(7))

    model = Transformer(cfg, device, torch.float32)
    runner = ModelRunner(model)
    tokens, logits = greedy(runner, prompt, N, keep_logits=True)

    # The verify step over the greedy tokens at the positions decode ran
    # them: the last prompt-made token, then k of its continuation.
    runner.prefill(prompt)
    positions = torch.arange(cfg.prompt, cfg.prompt + k + 1)
    accepted, predictions, _ = verify_step(runner, torch.tensor(tokens[: k + 1]), positions)
    verify_logits = runner.forward(torch.tensor(tokens[: k + 1]), positions, ForwardMode.EXTEND)[0].clone()

    spec, steps = speculative(runner, DraftHead(model), prompt, N, k)

    print(json.dumps({
        "torch": torch.__version__,
        "sdpa": has_sdpa(),
        "graphs": runner.graphs.sizes(),
        "k": k,
        "greedy": tokens,
        "speculative": spec,
        "verify_steps": steps,
        "accepted": int(accepted),
        "verify_predictions": predictions.tolist(),
        # decode logits of tokens 1..k+1 (the ones verify predicts) beside verify's
        "decode_logits": [l.tolist() for l in logits[1 : k + 2]],
        "verify_logits": verify_logits.tolist(),
    }))
