"""The runtime: which device and dtype, CUDA graphs of the fixed-size steps,
and the model runner that picks between a graph and an eager forward."""

from runtime.device import pick_device, pick_dtype, synchronize
from runtime.engine import ModelRunner
from runtime.graphs import GraphPool, StaticGraph, capture_sizes, graphs_enabled

__all__ = ["GraphPool", "ModelRunner", "StaticGraph", "capture_sizes", "graphs_enabled", "pick_device", "pick_dtype", "synchronize"]
