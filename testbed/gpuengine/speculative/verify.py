"""The verify step: the target runs the last token and k drafts at once."""

import torch

from attention import ForwardMode


def accept(drafts, predictions):
    """The number of drafts accepted, a 0-d tensor: the length of the
    longest prefix of drafts, [k], that the target's own predictions, [k+1],
    agree with. The target's prediction after the last accepted draft is the
    bonus token."""
    matches = (drafts == predictions[:-1]).to(torch.long)
    return torch.cumprod(matches, 0).sum()


def verify_step(runner, tokens, positions):
    """Run tokens, [k+1] (the last accepted token, then the drafts), at
    positions in extend mode. Returns the accepted count, the predictions
    [k+1] and the hidden states [k+1, hidden]; nothing is read back to the
    host."""
    logits, hidden = runner.forward(tokens, positions, ForwardMode.EXTEND)
    predictions = logits.argmax(-1)
    return accept(tokens[1:], predictions), predictions, hidden
