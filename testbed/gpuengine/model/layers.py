"""The layers of the transformer, as functions over a layer's weights."""

import torch
import torch.nn.functional as F


def rms_norm(x, weight, eps):
    """RMSNorm computed in float32."""
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return xf.to(x.dtype) * weight


class Rotary:
    """Rotary position embeddings from tables of every position."""

    def __init__(self, cfg, device):
        half = cfg.head_dim // 2
        inv = 1.0 / (cfg.rope_theta ** (torch.arange(half, device=device, dtype=torch.float32) / half))
        angles = torch.arange(cfg.max_len, device=device, dtype=torch.float32).unsqueeze(1) * inv.unsqueeze(0)
        self.cos, self.sin = angles.cos(), angles.sin()

    def at(self, positions):
        """The cos and sin rows of positions, [T, 1, D/2] each."""
        return self.cos.index_select(0, positions).unsqueeze(1), self.sin.index_select(0, positions).unsqueeze(1)

    @staticmethod
    def apply(x, cos, sin):
        """Rotate x, [T, H, D], by the angles of its positions."""
        half = x.shape[-1] // 2
        xf = x.float()
        x1, x2 = xf[..., :half], xf[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).to(x.dtype)


def attention_block(x, w, p, cfg, layer, positions, mask, rope, cache, attention, comm, mode):
    """x + attention(norm(x)) for the layer whose weights start with p."""
    t = x.shape[0]
    h = rms_norm(x, w[p + "norm1"], cfg.norm_eps)
    q = F.linear(h, w[p + "wq"]).view(t, cfg.heads, cfg.head_dim)
    k = F.linear(h, w[p + "wk"]).view(t, cfg.heads, cfg.head_dim)
    v = F.linear(h, w[p + "wv"]).view(t, cfg.heads, cfg.head_dim)
    cos, sin = rope
    q, k = Rotary.apply(q, cos, sin), Rotary.apply(k, cos, sin)
    cache.write(layer, positions, k, v)
    out = attention.attend(q, cache.k[layer], cache.v[layer], mask, mode)
    return x + comm.all_reduce(F.linear(out, w[p + "wo"]))


def mlp_block(x, w, p, cfg, comm):
    """x + SwiGLU(norm(x))."""
    h = rms_norm(x, w[p + "norm2"], cfg.norm_eps)
    gated = F.silu(F.linear(h, w[p + "w_gate"])) * F.linear(h, w[p + "w_up"])
    return x + comm.all_reduce(F.linear(gated, w[p + "w_down"]))
