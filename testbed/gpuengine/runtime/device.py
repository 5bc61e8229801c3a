"""Device and dtype choice."""

import os

import torch


def pick_device(name=None):
    """The device named (flag, else TESTBED_DEVICE), else CUDA when there
    is one, else the CPU."""
    name = name or os.environ.get("TESTBED_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError("device %s asked for, but torch %s sees no CUDA device" % (name, torch.__version__))
    return torch.device(name)


def pick_dtype(device, name=None):
    """bfloat16 on CUDA and float32 on the CPU, unless named (TESTBED_DTYPE)."""
    name = name or os.environ.get("TESTBED_DTYPE") or ("bfloat16" if device.type == "cuda" else "float32")
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError("unknown dtype %r" % name)
    return dtype


def synchronize(device):
    """Wait for the device's queued work (nothing to wait for on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
