"""The model runner: a CUDA graph where one was captured, else eager."""

import torch

from attention import ForwardMode
from runtime.graphs import GraphPool, capture_sizes, graphs_enabled


class ModelRunner:
    """Runs the model's steps, replaying a graph for the token counts that
    have one.

    The logits and hidden states it returns may be a graph's static
    outputs: read or copy them before the next step."""

    def __init__(self, model, use_graphs=None):
        self.model = model
        if use_graphs is None:
            use_graphs = graphs_enabled()
        self.graphs = GraphPool(model, capture_sizes(model.cfg), use_graphs)

    def forward(self, tokens, positions, mode):
        """Logits and hidden states of tokens at positions."""
        if self.graphs.can_run(tokens.shape[0]):
            return self.graphs.run(tokens, positions)
        return self.model.forward(tokens, positions, mode)

    def prefill(self, tokens):
        """Run a prompt from position 0; returns its logits and hidden states."""
        positions = torch.arange(tokens.shape[0], dtype=torch.long, device=tokens.device)
        return self.forward(tokens, positions, ForwardMode.EXTEND)

    def decode(self, token, position):
        """One token, a 1-element tensor, at position, a 1-element tensor."""
        return self.forward(token, position, ForwardMode.DECODE)
