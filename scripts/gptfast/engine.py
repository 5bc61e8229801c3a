"""Load a gpt-fast checkout's own code and build a model with random weights.

Shared by bench.py and server.py. The checkout is the current directory
(perfbot runs each step in the commit's tree). Tokenizer packages that
gpt-fast imports at module level (sentencepiece, tiktoken) are replaced by
stubs when they are not installed: the benchmark feeds token ids and never
tokenizes, so the code under test is model.py and generate.py as committed.
"""

import contextlib
import importlib
import importlib.util
import os
import sys
import types

import torch

# Tokenizer and evaluation packages that some commits import at module
# level and that no measured path calls.
OPTIONAL_MODULES = ["sentencepiece", "tiktoken", "tiktoken.load", "lm_eval", "safetensors", "safetensors.torch"]


class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        def unavailable(*args, **kwargs):
            raise RuntimeError(f"{self.__name__}.{name} is not installed; the benchmark does not tokenize")

        return unavailable


def _stub_missing():
    for name in OPTIONAL_MODULES:
        root = name.split(".")[0]
        if root in sys.modules and not isinstance(sys.modules[root], _Stub):
            continue
        try:
            if importlib.util.find_spec(root) is not None:
                continue
        except (ImportError, ValueError):
            pass
        sys.modules[name] = _Stub(name)


class _Settings(types.ModuleType):
    """A stand-in for torch._dynamo.config and torch._inductor.config on a
    torch too old to have them: generate.py sets compiler options at import
    time, and the benchmark runs eagerly, so they are never read."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        v = types.SimpleNamespace()
        setattr(self, name, v)
        return v


def _stub_compiler_settings():
    for pkg in ("_dynamo", "_inductor"):
        try:
            importlib.import_module(f"torch.{pkg}.config")
        except ImportError:
            mod, cfg = types.ModuleType(f"torch.{pkg}"), _Settings(f"torch.{pkg}.config")
            mod.config = cfg
            setattr(torch, pkg, mod)
            sys.modules[f"torch.{pkg}"], sys.modules[f"torch.{pkg}.config"] = mod, cfg


def _shim_sdp_kernel():
    # generate.py enters torch.backends.cuda.sdp_kernel around each decode
    # step; torch releases that drop it keep the same choice as
    # torch.nn.attention.sdpa_kernel.
    if hasattr(torch.backends.cuda, "sdp_kernel"):
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
        backends = []
        if enable_flash:
            backends.append(SDPBackend.FLASH_ATTENTION)
        if enable_mem_efficient:
            backends.append(SDPBackend.EFFICIENT_ATTENTION)
        if enable_math:
            backends.append(SDPBackend.MATH)
        return sdpa_kernel(backends) if backends else contextlib.nullcontext()

    torch.backends.cuda.sdp_kernel = sdp_kernel


def load(checkout="."):
    """Import the checkout's model and generate modules."""
    checkout = os.path.abspath(checkout)
    if checkout not in sys.path:
        sys.path.insert(0, checkout)
    _stub_missing()
    _stub_compiler_settings()
    _shim_sdp_kernel()
    model = importlib.import_module("model")
    generate = importlib.import_module("generate")
    return model, generate


def build(model_mod, device, dim, layers, heads, vocab, block_size, seed, dtype=torch.bfloat16):
    """The target model, random weights, built on the device."""
    torch.manual_seed(seed)
    args = model_mod.ModelArgs(block_size=block_size, vocab_size=vocab, n_layer=layers, n_head=heads, dim=dim)
    with torch.device(device):
        m = model_mod.Transformer(args)
    return m.to(dtype=dtype).eval()


def draft_of(model_mod, target, layers):
    """A draft model that is the target's first layers: the same embedding,
    blocks and output head, so that it agrees with the target often but not
    always. The shared blocks share their KV caches too, which is sound:
    the draft's first layers compute what the target's do for the same
    tokens. Set the target's caches first, then the draft's."""
    cfg = target.config
    args = model_mod.ModelArgs(block_size=cfg.block_size, vocab_size=cfg.vocab_size, n_layer=layers,
                               n_head=cfg.n_head, dim=cfg.dim)
    with torch.device("meta"):
        d = model_mod.Transformer(args)
    d.tok_embeddings = target.tok_embeddings
    d.layers = torch.nn.ModuleList(list(target.layers)[:layers])
    d.norm = target.norm
    d.output = target.output
    return d.eval()



def facts(device):
    """Configuration lines (the Go benchmark format's "key: value") about
    the software the benchmark ran on."""
    lines = [f"torch: {torch.__version__}"]
    if torch.version.cuda:
        lines.append(f"cuda: {torch.version.cuda}")
    if torch.cuda.is_available() and str(device).startswith("cuda"):
        try:
            v = torch.cuda.nccl.version()
            lines.append("nccl: " + ".".join(str(x) for x in v) if isinstance(v, tuple) else f"nccl: {v}")
        except Exception:  # no NCCL in this build
            pass
        lines.append(f"gpu: {torch.cuda.get_device_name(device)}")
    return lines
