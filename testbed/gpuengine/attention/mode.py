"""Forward modes, as an inference engine's scheduler names its batches."""

import enum


class ForwardMode(enum.Enum):
    """DECODE runs one new token; EXTEND runs several at once (a prefill, or
    the verify step of speculative decoding over the last token and k drafts)."""

    DECODE = "decode"
    EXTEND = "extend"
