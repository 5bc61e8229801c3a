"""Model sizes by name, and their overrides from the environment and flags."""

import dataclasses
import os


@dataclasses.dataclass
class ModelConfig:
    """The model's shape and the speculative step's length. The defaults are
    the h200 size: about 170M parameters, a decode step of a few hundred
    microseconds in a CUDA graph on an H200."""

    vocab: int = 32000
    hidden: int = 1024
    layers: int = 8
    heads: int = 16
    mlp: int = 2816
    max_len: int = 1024
    prompt: int = 256
    draft_tokens: int = 3
    seed: int = 1234
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5

    @property
    def head_dim(self):
        return self.hidden // self.heads

    def validate(self):
        """Raise ValueError naming the first setting that cannot work."""
        for f in dataclasses.fields(self):
            if getattr(self, f.name) <= 0 and f.name != "seed":
                raise ValueError("%s must be positive, got %r" % (f.name, getattr(self, f.name)))
        if self.hidden % self.heads:
            raise ValueError("hidden (%d) must be a multiple of heads (%d)" % (self.hidden, self.heads))
        if self.head_dim % 2:
            raise ValueError("the head width (%d) must be even for rotary positions" % self.head_dim)
        if self.max_len % 16:
            raise ValueError("max_len (%d) must be a multiple of 16: the fused kernels align masks to 16 keys" % self.max_len)
        if self.prompt + self.draft_tokens + 1 > self.max_len:
            raise ValueError("prompt (%d) and a verify step (%d tokens) do not fit in max_len (%d)" % (self.prompt, self.draft_tokens + 1, self.max_len))


SIZES = {
    # The CPU's size: the numerics tests and CI.
    "tiny": dict(vocab=256, hidden=64, layers=2, heads=4, mlp=128, max_len=128, prompt=16),
    "small": dict(vocab=4096, hidden=256, layers=4, heads=8, mlp=704, max_len=512, prompt=64),
    "h200": dict(),
}


def config_from(size, env=None, overrides=None):
    """The config of a named size, with every field overridden first by the
    variable TESTBED_<FIELD> and then by overrides (flags), then validated."""
    if size not in SIZES:
        raise ValueError("unknown size %r (want one of %s)" % (size, ", ".join(sorted(SIZES))))
    env = os.environ if env is None else env
    cfg = ModelConfig(**SIZES[size])
    for f in dataclasses.fields(cfg):
        kind = type(getattr(cfg, f.name))
        raw = env.get("TESTBED_" + f.name.upper())
        if raw not in (None, ""):
            try:
                setattr(cfg, f.name, kind(raw))
            except ValueError:
                raise ValueError("TESTBED_%s=%r is not a %s" % (f.name.upper(), raw, kind.__name__)) from None
        if overrides and overrides.get(f.name) is not None:
            setattr(cfg, f.name, kind(overrides[f.name]))
    cfg.validate()
    return cfg
