"""The graph path computes what the eager path computes."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from model import config_from  # noqa: E402
from runtime import capture_sizes, graphs_enabled  # noqa: E402
from speculative import greedy  # noqa: E402
from tests.test_speculative import prompt, tiny_runner  # noqa: E402


class GraphsTest(unittest.TestCase):
    def test_graphs_match_eager(self):
        cfg, _, with_graphs = tiny_runner(use_graphs=True)
        _, _, eager = tiny_runner(use_graphs=False)
        with torch.inference_mode():
            a, la = greedy(with_graphs, prompt(cfg), 8, keep_logits=True)
            b, lb = greedy(eager, prompt(cfg), 8, keep_logits=True)
        self.assertEqual(a, b)
        for x, y in zip(la, lb):
            self.assertTrue(torch.allclose(x, y, atol=1e-5))

    def test_capture_sizes_cover_decode_and_verify(self):
        self.assertEqual(capture_sizes(config_from("tiny", env={})), [1, 4])

    def test_the_variable_turns_graphs_off(self):
        self.assertTrue(graphs_enabled({}))
        self.assertFalse(graphs_enabled({"TESTBED_CUDA_GRAPHS": "0"}))


if __name__ == "__main__":
    unittest.main()
