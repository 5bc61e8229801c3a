"""CUDA graphs of the model's fixed-size steps.

A decode step (one token) and a verify step (the last token and k drafts)
always have the same shapes, so each is captured once into a CUDA graph and
replayed: one launch instead of a few hundred. The graph reads its tokens
and positions from static buffers and leaves its logits and hidden states
in static outputs, valid until the next replay of that graph.

On the CPU there are no graphs; StaticGraph then runs the same function
over the same static buffers at every replay, so the buffer handling is
exercised (and tested) wherever the model runs. TESTBED_CUDA_GRAPHS=0 turns
graphs off: every step runs eagerly over the caller's tensors.
"""

import os
import sys

import torch

from attention import ForwardMode

# Eager runs before a capture, on a side stream: they let lazy
# initialization (cuBLAS handles, kernel selection) happen outside the graph.
WARMUP_RUNS = 3


def graphs_enabled(env=None):
    """Whether TESTBED_CUDA_GRAPHS allows graphs (anything but 0, false, off, no)."""
    env = os.environ if env is None else env
    return env.get("TESTBED_CUDA_GRAPHS", "1").strip().lower() not in ("0", "false", "off", "no")


def capture_sizes(cfg):
    """Token counts that get a graph: a decode step (one token) and a verify
    step (the last token and cfg.draft_tokens drafts)."""
    return sorted({1, cfg.draft_tokens + 1})


class StaticGraph:
    """fn captured into a CUDA graph on a CUDA device; on the CPU, fn run
    again at every replay with its results copied into the first run's
    outputs."""

    def __init__(self, fn, device):
        self.fn = fn
        self.cuda = device.type == "cuda"
        if not self.cuda:
            self.outputs = fn()
            return
        stream = torch.cuda.Stream(device)
        stream.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(stream):
            for _ in range(WARMUP_RUNS):
                fn()
        torch.cuda.current_stream(device).wait_stream(stream)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.outputs = fn()

    def replay(self):
        if self.cuda:
            self.graph.replay()
            return
        for dst, src in zip(self.outputs, self.fn()):
            dst.copy_(src)


class GraphPool:
    """One graph per token count; a count of one is a decode step, more an
    extend step."""

    def __init__(self, model, sizes, enabled):
        self.model = model
        self.graphs = {}
        self.inputs = {}
        if not enabled:
            return
        # Capturing writes keys and values at positions 0..n-1: it happens
        # before any sequence fills the cache.
        for n in sorted(sizes, reverse=True):
            tokens = torch.zeros(n, dtype=torch.long, device=model.device)
            positions = torch.arange(n, dtype=torch.long, device=model.device)
            mode = ForwardMode.DECODE if n == 1 else ForwardMode.EXTEND
            try:
                graph = StaticGraph(lambda t=tokens, p=positions, m=mode: model.forward(t, p, m), model.device)
            except RuntimeError as err:
                # A step that cannot be captured still runs, eagerly; say so
                # where the benchmark's log shows it.
                print("graphs: capturing %d tokens failed (%s); those steps run eagerly" % (n, str(err).splitlines()[0]), file=sys.stderr)
                continue
            self.inputs[n] = (tokens, positions)
            self.graphs[n] = graph

    def can_run(self, n):
        return n in self.graphs

    def sizes(self):
        return sorted(self.graphs)

    def run(self, tokens, positions):
        """Replay the graph of len(tokens) tokens; the outputs are the
        graph's own, overwritten by its next replay."""
        n = tokens.shape[0]
        static_tokens, static_positions = self.inputs[n]
        static_tokens.copy_(tokens)
        static_positions.copy_(positions)
        self.graphs[n].replay()
        return self.graphs[n].outputs
