"""The decoder-only transformer over a KV cache."""

import torch
import torch.nn.functional as F

from attention import Attention, KVCache, visible_keys
from communicator import Communicator
from model.layers import Rotary, attention_block, mlp_block, rms_norm
from model.weights import init_weights


class Transformer:
    """A model of cfg's shape with its weights, its cache and its attention.

    forward runs T tokens at their positions: it writes their keys and
    values into the cache, and returns the logits and the final hidden
    states of every one of them. Nothing in it reads a tensor back to the
    host, so a CUDA graph can capture it."""

    def __init__(self, cfg, device, dtype, attention=None, comm=None):
        self.cfg, self.device, self.dtype = cfg, device, dtype
        self.w = init_weights(cfg, device, dtype)
        self.cache = KVCache(cfg.layers, cfg.heads, cfg.max_len, cfg.head_dim, device, dtype)
        self.rotary = Rotary(cfg, device)
        self.attention = attention or Attention(device)
        self.comm = comm or Communicator()
        self.key_positions = torch.arange(cfg.max_len, device=device)
        self.prefixes = ["layers.%d." % i for i in range(cfg.layers)]
        self._check_attention()

    def _check_attention(self):
        c = self.cfg
        q = torch.zeros(c.draft_tokens + 1, c.heads, c.head_dim, device=self.device, dtype=self.dtype)
        mask = visible_keys(torch.arange(c.draft_tokens + 1, device=self.device), self.key_positions)
        self.attention.check(q, self.cache.k[0], self.cache.v[0], mask)

    def forward(self, tokens, positions, mode):
        """Logits [T, vocab] and hidden states [T, hidden] of tokens [T]."""
        cfg, w = self.cfg, self.w
        x = F.embedding(tokens, w["embed"])
        mask = visible_keys(positions, self.key_positions)
        rope = self.rotary.at(positions)
        for layer, p in enumerate(self.prefixes):
            x = attention_block(x, w, p, cfg, layer, positions, mask, rope, self.cache, self.attention, self.comm, mode)
            x = mlp_block(x, w, p, cfg, self.comm)
        return self.logits(x), x

    def logits(self, hidden):
        """The LM head over the final norm of hidden states."""
        return F.linear(rms_norm(hidden, self.w["norm"], self.cfg.norm_eps), self.w["lm_head"])
