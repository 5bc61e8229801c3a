"""A preallocated key-value cache for one sequence."""

import torch


class KVCache:
    """Keys and values of every layer, [layers, heads, max_len, head_dim].

    The cache never grows: a step writes its tokens' keys at their positions,
    so the shapes stay fixed and a CUDA graph can replay the write. Rolling
    back rejected drafts costs nothing; the next step overwrites them."""

    def __init__(self, layers, heads, max_len, head_dim, device, dtype):
        shape = (layers, heads, max_len, head_dim)
        self.k = torch.zeros(shape, device=device, dtype=dtype)
        self.v = torch.zeros(shape, device=device, dtype=dtype)

    def write(self, layer, positions, k, v):
        """Store k and v, [T, heads, head_dim], at positions, [T]."""
        self.k[layer].index_copy_(1, positions, k.transpose(0, 1))
        self.v[layer].index_copy_(1, positions, v.transpose(0, 1))
