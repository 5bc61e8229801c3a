"""Speculative decoding emits exactly greedy decoding's tokens (CPU, tiny)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from model import Transformer, config_from  # noqa: E402
from runtime import ModelRunner  # noqa: E402
from speculative import DraftHead, accept, greedy, speculative  # noqa: E402


def tiny_runner(use_graphs=True):
    cfg = config_from("tiny", env={})
    model = Transformer(cfg, torch.device("cpu"), torch.float32)
    return cfg, model, ModelRunner(model, use_graphs=use_graphs)


def prompt(cfg, seed=3):
    return torch.randint(0, cfg.vocab, (cfg.prompt,), generator=torch.Generator().manual_seed(seed))


class SpeculativeTest(unittest.TestCase):
    def test_speculative_equals_greedy(self):
        cfg, model, runner = tiny_runner()
        with torch.inference_mode():
            want = greedy(runner, prompt(cfg), 10)
            got, _ = speculative(runner, DraftHead(model), prompt(cfg), 10, cfg.draft_tokens)
        self.assertEqual(got, want)

    def test_accept_counts_the_agreeing_prefix(self):
        for drafts, predictions, want in [
            ([5, 6, 7], [5, 6, 7, 8], 3),
            ([5, 6, 7], [5, 9, 7, 8], 1),
            ([5, 6, 7], [1, 6, 7, 8], 0),
        ]:
            got = accept(torch.tensor(drafts), torch.tensor(predictions))
            self.assertEqual(int(got), want, (drafts, predictions))


if __name__ == "__main__":
    unittest.main()
