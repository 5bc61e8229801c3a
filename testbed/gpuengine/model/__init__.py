"""The target model: a decoder-only transformer with deterministic random
weights, rotary positions, RMSNorm and a SwiGLU feed-forward block."""

from model.config import SIZES, ModelConfig, config_from
from model.transformer import Transformer

__all__ = ["SIZES", "ModelConfig", "Transformer", "config_from"]
