"""Attention: the forward modes, the KV cache, the visibility mask and the
scaled-dot-product attention with its selectable backends."""

from attention.backend import Attention, backends_for, has_sdpa
from attention.kv_cache import KVCache
from attention.mask import visible_keys
from attention.mode import ForwardMode

__all__ = ["Attention", "ForwardMode", "KVCache", "backends_for", "has_sdpa", "visible_keys"]
