"""Scaled-dot-product attention over the KV cache, with a selectable backend.

torch.nn.functional.scaled_dot_product_attention runs the attention when
torch has it (2.0 and later); older torch gets the same computation written
out. On CUDA the kernels SDPA may choose from are restricted per forward
mode with torch.nn.attention.sdpa_kernel (torch.backends.cuda.sdp_kernel on
torch 2.0 and 2.1); on the CPU SDPA chooses alone.

Backend names: fused (flash or memory-efficient; with the position mask,
the memory-efficient kernel), flash, efficient, cudnn, math, and auto (no
restriction). TESTBED_ATTENTION picks one for every mode.
"""

import contextlib
import math
import os
import sys

import torch
import torch.nn.functional as F

from attention.mode import ForwardMode

BACKEND_SETS = {
    "fused": ("FLASH_ATTENTION", "EFFICIENT_ATTENTION"),
    "flash": ("FLASH_ATTENTION",),
    "efficient": ("EFFICIENT_ATTENTION",),
    "cudnn": ("CUDNN_ATTENTION",),
    "math": ("MATH",),
    "auto": None,
}


def has_sdpa():
    """Whether this torch has scaled_dot_product_attention."""
    return hasattr(F, "scaled_dot_product_attention")


def backends_for(mode, name):
    """The SDPA kernels that a forward mode may use under backend name."""
    if name not in BACKEND_SETS:
        raise ValueError("unknown attention backend %r (want one of %s)" % (name, ", ".join(sorted(BACKEND_SETS))))
    return BACKEND_SETS[name]


def kernel_context(kernels):
    """A context that restricts SDPA to kernels, or does nothing for None."""
    if kernels is None:
        return contextlib.nullcontext()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return torch.backends.cuda.sdp_kernel(
            enable_flash="FLASH_ATTENTION" in kernels,
            enable_mem_efficient="EFFICIENT_ATTENTION" in kernels,
            enable_math="MATH" in kernels,
        )
    chosen = [getattr(SDPBackend, k) for k in kernels if hasattr(SDPBackend, k)]
    if not chosen:
        return contextlib.nullcontext()
    return sdpa_kernel(chosen)


def manual_attention(q, k, v, mask, scale):
    """Attention written out, for torch without SDPA: q [1, H, T, D], k and v
    [1, H, L, D], mask [1, 1, T, L]."""
    scores = torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale
    scores = scores.masked_fill(~mask, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return torch.matmul(probs, v.float()).to(q.dtype)


class Attention:
    """Attention of T queries over the whole cache of one layer."""

    def __init__(self, device, name=None):
        self.name = name or os.environ.get("TESTBED_ATTENTION", "fused")
        self.sdpa = has_sdpa()
        restrict = self.sdpa and device.type == "cuda"
        self.kernels = {}
        for mode in ForwardMode:
            kernels = backends_for(mode, self.name)
            self.kernels[mode] = kernels if restrict else None

    def check(self, q, k, v, mask):
        """Run each mode's kernels once on shapes like the model's and fall
        back to auto, loudly, where torch has none that can run them."""
        for mode, kernels in self.kernels.items():
            if kernels is None:
                continue
            try:
                self.attend(q, k, v, mask, mode)
            except RuntimeError as err:
                print("attention: no %s kernel for %s (%s); using auto" % (self.name, mode.value, str(err).splitlines()[0]), file=sys.stderr)
                self.kernels[mode] = None

    def describe(self):
        """One line naming the kernels of each mode."""
        parts = []
        for mode, kernels in self.kernels.items():
            parts.append("%s=%s" % (mode.value, "+".join(k.lower() for k in kernels) if kernels else "auto"))
        return " ".join(parts)

    def attend(self, q, k, v, mask, mode):
        """q [T, H, D]; k and v [H, L, D]; mask [T, L]. Returns [T, H*D]."""
        t, h, d = q.shape
        q4 = q.transpose(0, 1).unsqueeze(0)
        k4, v4 = k.unsqueeze(0), v.unsqueeze(0)
        m4 = mask.unsqueeze(0).unsqueeze(0)
        if self.sdpa:
            with kernel_context(self.kernels[mode]):
                out = F.scaled_dot_product_attention(q4, k4, v4, attn_mask=m4)
        else:
            out = manual_attention(q4, k4, v4, m4, 1.0 / math.sqrt(d))
        return out.squeeze(0).transpose(0, 1).reshape(t, h * d)
