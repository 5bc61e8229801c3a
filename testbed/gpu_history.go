package testbed

// gpuRootStep is the GPU testbed's first commit: the whole engine as
// embedded.
func gpuRootStep() (step, error) {
	t, err := gpuTree()
	if err != nil {
		return step{}, err
	}
	var edits []edit
	for _, p := range t.paths() {
		edits = append(edits, write(p, t[p]))
	}
	return step{
		subject: "Import the PyTorch engine",
		body: `A decoder-only transformer with deterministic random weights, a
preallocated KV cache, CUDA graphs for the decode and verify steps,
attention through scaled_dot_product_attention with selectable kernels, an
EAGLE-style draft head, and bench/run.py, which prints Go benchmark lines.`,
		author: mei,
		edits:  edits,
	}, nil
}

// Effects on one H200 at the h200 size, in percent of the parent's value,
// each change applied alone to a's parent (bench/run.py). c's is an
// estimate: it rounds an extend batch's q, k and v through float32, two
// kernels each, at about 0.7% a kernel. c, b and d come before a, while
// the verify step still replays its CUDA graph and is steady from one
// invocation to the next; after a it runs eagerly, bound by kernel
// launches, and swings by 40% between invocations. verify_ms moves
// against verify_tok_s.
var (
	gpuEffectA = map[string]float64{VerifyTokS: -60, VerifyMs: 150, DecodeTokS: 0}
	gpuEffectB = map[string]float64{VerifyTokS: -4.9, VerifyMs: 5.2, DecodeTokS: 0}
	gpuEffectC = map[string]float64{VerifyTokS: -4.1, VerifyMs: 4.3, DecodeTokS: 0}
	gpuEffectD = map[string]float64{VerifyTokS: 7, VerifyMs: -6.5, DecodeTokS: 7.3}
)

// gpuGroundTruth returns the GPU testbed's known changes at their nominal
// positions on a chain of about 45 commits: the import break first, then
// c, b and d on the graph path, and a last.
func gpuGroundTruth() []anchor {
	return []anchor{
		{7, gpuChangeE()},
		{15, []step{gpuChangeC()}},
		{22, []step{gpuChangeB()}},
		{29, []step{gpuChangeD()}},
		{36, []step{gpuChangeA()}},
	}
}

// gpuChangeA chunks long prefills and, in passing, keeps every extend step
// out of the graphs: the verify step is an extend step.
func gpuChangeA() step {
	return step{
		subject: "runtime: split long prefills into chunks",
		body: `A prompt longer than the cache's attention window used to run as one
extend step. Prefill in chunks of prefill_chunk tokens, and leave extend
batches to the eager path, since a chunk's length varies from one request to
the next. Document the runner and test chunked prefill against a single
pass.`,
		author: tom,
		edits: []edit{
			replace("runtime/engine.py", `        """Logits and hidden states of tokens at positions."""
        if self.graphs.can_run(tokens.shape[0]):`, `        """Logits and hidden states of tokens at positions."""
        # Only decode batches replay a graph: an extend batch is a prefill
        # chunk, whose length varies from one request to the next.
        if mode is ForwardMode.DECODE and self.graphs.can_run(tokens.shape[0]):`),
			replace("runtime/engine.py", `    def prefill(self, tokens):
        """Run a prompt from position 0; returns its logits and hidden states."""
        positions = torch.arange(tokens.shape[0], dtype=torch.long, device=tokens.device)
        return self.forward(tokens, positions, ForwardMode.EXTEND)`, `    # The longest extend step a prefill runs.
    prefill_chunk = 512

    def prefill(self, tokens):
        """Run a prompt from position 0 in chunks of at most prefill_chunk
        tokens; returns the logits and hidden states of the last chunk."""
        n = tokens.shape[0]
        for start in range(0, n, self.prefill_chunk):
            end = min(n, start + self.prefill_chunk)
            positions = torch.arange(start, end, dtype=torch.long, device=tokens.device)
            out = self.forward(tokens[start:end], positions, ForwardMode.EXTEND)
        return out`),
			write("tests/test_engine.py", `"""The model runner."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from tests.test_speculative import prompt, tiny_runner  # noqa: E402


class EngineTest(unittest.TestCase):
    def test_chunked_prefill_matches_one_pass(self):
        cfg, _, runner = tiny_runner(use_graphs=False)
        with torch.inference_mode():
            whole, _ = runner.prefill(prompt(cfg))
            whole = whole[-1].clone()
            runner.prefill_chunk = 5
            chunked, _ = runner.prefill(prompt(cfg))
        self.assertTrue(torch.allclose(whole, chunked[-1], atol=1e-5))


if __name__ == "__main__":
    unittest.main()
`),
			write("docs/runtime.md", `# The runtime

ModelRunner runs every step of the model. A prompt is prefilled in chunks
of at most prefill_chunk (512) tokens, each an extend step at its positions.
Decode steps replay the CUDA graph of their token count; extend batches run
eagerly, since a chunk's length varies from one request to the next.
`),
			replace("README.md", "| `runtime/` | device choice, CUDA graphs, the model runner |", "| `runtime/` | device choice, CUDA graphs, the model runner and chunked prefill |"),
			replace("runtime/__init__.py", `and the model runner that picks between a graph and an eager forward."""`, `and the model runner that picks between a graph and an eager forward and
prefills prompts in chunks."""`),
		},
		truth: &truth{id: "a", kind: Regression, effects: gpuEffectA, effect: 0,
			note: "ModelRunner.forward replays graphs for decode batches only, so the verify step (an extend batch of k+1 tokens) runs eagerly: a few hundred launches instead of one replay"},
	}
}

// gpuChangeB sends extend attention to the math kernel.
func gpuChangeB() step {
	return step{
		subject: "attention: give extend batches the math kernel",
		body:    `Extend batches mask keys by position, which the flash kernel cannot take. Restrict them to the math kernel, which takes any mask.`,
		author:  sofia,
		edits: []edit{
			replace("attention/backend.py", `        raise ValueError("unknown attention backend %r (want one of %s)" % (name, ", ".join(sorted(BACKEND_SETS))))
    return BACKEND_SETS[name]`, `        raise ValueError("unknown attention backend %r (want one of %s)" % (name, ", ".join(sorted(BACKEND_SETS))))
    # Extend batches mask keys by position, which the flash kernel cannot
    # take: the math kernel takes any mask.
    if mode is ForwardMode.EXTEND and name != "auto":
        return BACKEND_SETS["math"]
    return BACKEND_SETS[name]`),
		},
		truth: &truth{id: "b", kind: Regression, effects: gpuEffectB, effect: 0,
			note: "extend attention (the verify step) runs SDPA's math backend instead of the memory-efficient kernel; decode is untouched; no effect on a CPU"},
	}
}

// gpuChangeC rounds an extend batch's q, k and v through float32 in every
// layer: six small kernels a layer in the verify step, the same values.
func gpuChangeC() step {
	return step{
		subject: "model: round an extend batch's q, k and v through float32",
		body:    `An extend batch's keys and values outlive the layer in the cache, and its queries are read after the next projection: give the three their own storage, rounded through float32 like the reference implementation, so that nothing aliases the projection's output.`,
		author:  yuki,
		edits: []edit{
			replace("model/layers.py", "import torch.nn.functional as F\n", "import torch.nn.functional as F\n\nfrom attention import ForwardMode\n"),
			insertAfter("model/layers.py", `    v = F.linear(h, w[p + "wv"]).view(t, cfg.heads, cfg.head_dim)
`, `    if mode is ForwardMode.EXTEND:
        # Their own storage, not views of the projection's output.
        q, k, v = (a.float().to(a.dtype) for a in (q, k, v))
`),
		},
		truth: &truth{id: "c", kind: Regression, effects: gpuEffectC, effect: 1,
			note: "every layer rounds an extend batch's q, k and v through float32: six more kernels per layer in the verify step, decode untouched; estimated from three copies, which cost 2.1% on the H200"},
	}
}

// gpuChangeD rotates queries and keys in one call.
func gpuChangeD() step {
	return step{
		subject: "model: rotate queries and keys together",
		body:    `One rotary call over the concatenated queries and keys launches half the elementwise kernels of two.`,
		author:  arjun,
		edits: []edit{
			replace("model/layers.py", `    q, k = Rotary.apply(q, cos, sin), Rotary.apply(k, cos, sin)
`, `    # One rotation for the queries and keys together: half the kernels.
    qk = Rotary.apply(torch.cat((q, k), dim=1), cos, sin)
    q, k = qk[:, : cfg.heads], qk[:, cfg.heads :]
`),
		},
		truth: &truth{id: "d", kind: Improvement, effects: gpuEffectD, effect: 0,
			note: "queries and keys go through one rotary call instead of two: about six fewer kernels per layer in every step"},
	}
}

// gpuChangeE renames the mask function without its importers, and fixes
// the import check in the next commit.
func gpuChangeE() []step {
	return []step{{
		subject: "attention: rename visible_keys to key_visibility",
		body:    `visible_keys read like a list of keys; the function returns a mask.`,
		author:  dana,
		edits: []edit{
			replace("attention/mask.py", "def visible_keys(positions, key_positions):", "def key_visibility(positions, key_positions):"),
		},
		truth: &truth{id: "e", kind: BuildBreak, effect: -1,
			note: "the function is renamed but attention/__init__.py still imports the old name, so import attention (and import model) fails; the next commit fixes it"},
	}, {
		subject: "attention: finish the key_visibility rename",
		body:    `The previous commit renamed the function but not its importers, so nothing imported.`,
		author:  dana,
		edits: []edit{
			replace("attention/__init__.py", "from attention.mask import visible_keys\n", "from attention.mask import key_visibility\n"),
			replace("attention/__init__.py", `"has_sdpa", "visible_keys"]`, `"has_sdpa", "key_visibility"]`),
			replace("model/transformer.py", "from attention import Attention, KVCache, visible_keys\n", "from attention import Attention, KVCache, key_visibility\n"),
			replace("model/transformer.py", "        mask = visible_keys(torch.arange(", "        mask = key_visibility(torch.arange("),
			replace("model/transformer.py", "        mask = visible_keys(positions, self.key_positions)", "        mask = key_visibility(positions, self.key_positions)"),
		},
	}}
}
