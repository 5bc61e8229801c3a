"""Deterministic random weights: one seed, one set of tensors per device."""

import math

import torch


def init_weights(cfg, device, dtype):
    """Draw every weight from a generator seeded with cfg.seed on device, in
    a fixed order, so that a seed names the model. Attention and MLP outputs
    are scaled down, which keeps the residual stream near the embedding."""
    g = torch.Generator(device=device)
    g.manual_seed(cfg.seed)

    def normal(*shape, std):
        return (torch.randn(shape, generator=g, device=device) * std).to(dtype)

    d, m = cfg.hidden, cfg.mlp
    out_scale = 0.5 / math.sqrt(cfg.layers)
    w = {"embed": normal(cfg.vocab, d, std=1.0)}
    for i in range(cfg.layers):
        p = "layers.%d." % i
        w[p + "norm1"] = torch.ones(d, device=device, dtype=dtype)
        w[p + "wq"] = normal(d, d, std=1 / math.sqrt(d))
        w[p + "wk"] = normal(d, d, std=1 / math.sqrt(d))
        w[p + "wv"] = normal(d, d, std=1 / math.sqrt(d))
        w[p + "wo"] = normal(d, d, std=out_scale / math.sqrt(d))
        w[p + "norm2"] = torch.ones(d, device=device, dtype=dtype)
        w[p + "w_gate"] = normal(m, d, std=1 / math.sqrt(d))
        w[p + "w_up"] = normal(m, d, std=1 / math.sqrt(d))
        w[p + "w_down"] = normal(d, m, std=out_scale / math.sqrt(m))
    w["norm"] = torch.ones(d, device=device, dtype=dtype)
    w["lm_head"] = normal(cfg.vocab, d, std=1 / math.sqrt(d))
    w["draft.fc"] = normal(d, 2 * d, std=0.5 / math.sqrt(2 * d))
    w["draft.norm"] = torch.ones(d, device=device, dtype=dtype)
    return w
