"""EAGLE-style speculative decoding: a draft head proposes k tokens from the
target's hidden state, and one verify step runs the last token and the k
drafts through the target in extend mode."""

from speculative.draft import DraftHead
from speculative.generate import greedy, speculative
from speculative.verify import accept, verify_step

__all__ = ["DraftHead", "accept", "greedy", "speculative", "verify_step"]
