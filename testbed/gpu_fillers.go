package testbed

import "strings"

// gpuFillerThreads returns the GPU testbed's ordinary commits: threads
// whose commits keep their order, interleaved by the seed. None of them
// changes what the benchmarks run or how fast.
func gpuFillerThreads() [][]step {
	threads := [][]step{gpuChangelogThread(), gpuGlossaryThread()}
	for _, group := range [][]step{gpuDocSteps(), gpuTestSteps(), gpuNoteSteps()} {
		for _, s := range group {
			threads = append(threads, []step{s})
		}
	}
	return threads
}

func gpuChangelogThread() []step {
	t := []step{changelog(true)}
	for range 3 {
		t = append(t, changelog(false))
	}
	return t
}

func gpuGlossaryThread() []step {
	terms := []struct{ term, text string }{
		{"decode", "One new token through the model, attending over the cache."},
		{"extend", "Several new tokens through the model at once: a prefill chunk, or a verify step."},
		{"verify step", "The last accepted token and k drafts through the target in one extend step."},
		{"draft head", "The small network that proposes tokens for the target to verify."},
		{"acceptance length", "Tokens emitted per verify step: the accepted drafts plus the bonus token."},
		{"CUDA graph", "A recorded sequence of kernel launches that replays with one launch."},
		{"SDPA", "torch.nn.functional.scaled_dot_product_attention, which dispatches to flash, memory-efficient, cuDNN or math kernels."},
		{"KV cache", "The keys and values of every position seen so far, one tensor per layer."},
		{"prefill", "The extend steps that run a prompt before its first decode step."},
		{"allreduce", "The sum of every rank's tensor, delivered to every rank."},
	}
	t := []step{{
		subject: "docs: add a glossary",
		author:  anyone,
		edits:   []edit{write("docs/glossary.md", "# Glossary\n\nTerms as this repository uses them.\n")},
	}}
	for _, g := range terms {
		t = append(t, step{
			subject: "docs(glossary): " + g.term,
			author:  anyone,
			edits:   []edit{appendTo("docs/glossary.md", "\n**"+g.term+"**: "+g.text+"\n")},
		})
	}
	return t
}

func gpuDocSteps() []step {
	doc := func(subject string, e edit) step { return step{subject: subject, author: anyone, edits: []edit{e}} }
	return []step{
		doc("docs: describe the model's shape", write("docs/model.md", `# Model

| setting | tiny | small | h200 |
|---|---|---|---|
| vocabulary | 256 | 4096 | 32000 |
| hidden width | 64 | 256 | 1024 |
| heads | 4 | 8 | 16 |
| layers | 2 | 4 | 8 |
| MLP width | 128 | 704 | 2816 |
| context | 128 | 512 | 1024 |

Attention and MLP outputs are scaled down at initialization, which keeps
the residual stream near the token embedding.
`)),
		doc("docs: how the benchmarks time", write("docs/benchmarks.md", `# Benchmarks

bench/run.py warms each benchmark up (on CUDA for at least half a second, so
that the clocks have ramped), synchronizes the device, times its
iterations, and synchronizes again. The warm-up is not timed.

Compare two commits by alternating runs of each, not back to back: a GPU's
clocks and temperature drift over minutes.
`)),
		doc("docs: add contribution notes", write("CONTRIBUTING.md", `# Contributing

- Run python3 -m unittest discover tests before sending a change.
- Changes on the hot path (model, attention, runtime, speculative) need
  numbers from bench/run.py on a GPU: ten alternating runs of the parent
  and of the change.
- Keep the engine free of dependencies beyond torch.
`)),
		doc("docs: add a FAQ", write("docs/faq.md", `# FAQ

**Why random weights?** Only speed is studied; a seed names the weights, so
every run computes the same tokens.

**Why does the benchmark's verify step accept every draft?** Its drafts are
the target's own greedy continuation, so each step does the same work and
emits k+1 tokens.

**Does it run without a GPU?** Yes, on the CPU at the tiny size, without
CUDA graphs; that is how the tests run.
`)),
		doc("docs: add a roadmap", write("docs/roadmap.md", `# Roadmap

- Tensor parallelism over several GPUs, with the communicator's allreduce.
- Batched requests: several sequences per verify step.
- Tree drafts (topk > 1) as in EAGLE-2.
`)),
		doc("docs: describe the communicator", write("docs/communicator.md", `# Communicator

communicator.Communicator sums a tensor over the ranks of the default
process group after each row-parallel layer. On one rank the sum is the
tensor itself, and nothing is launched.
`)),
		doc("docs: add a license", write("LICENSE", `Copyright 2025 The infer-gpu authors.

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software, to deal in the software without restriction, subject to
the condition that this notice is included in all copies.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
`)),
		doc("docs: how to run the tests", appendTo("README.md", `
## Testing

`+"`python3 -m unittest discover tests`"+` runs on the CPU: speculative
decoding emits greedy decoding's tokens, and the graph path computes what
the eager path computes.
`)),
		doc("docs: profiling a step", write("docs/profiling.md", `# Profiling

`+"```"+`
python3 -m torch.utils.bottleneck bench/run.py --bench verify
nsys profile -o verify python3 bench/run.py --bench verify
`+"```"+`

In the trace, a graphed step is one cudaGraphLaunch; an eager one is a
few hundred kernel launches.
`)),
		doc("docs: note the cache's memory", appendTo("docs/attention.md", `
## Memory

The cache holds 2 × layers × heads × max_len × head width values: 32 MiB in
bfloat16 at the h200 size. It never grows; rejected drafts are overwritten
by the next step.
`)),
	}
}

func gpuTestSteps() []step {
	test := func(subject, path, content string) step {
		return step{subject: subject, author: anyone, edits: []edit{write(path, content)}}
	}
	header := `import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

`
	footer := `

if __name__ == "__main__":
    unittest.main()
`
	return []step{
		test("tests: the config rejects shapes that cannot work", "tests/test_config.py", `"""Config validation."""

`+strings.Replace(header, "import torch  # noqa: E402\n\n", "", 1)+`from model import config_from  # noqa: E402


class ConfigTest(unittest.TestCase):
    def test_sizes_validate(self):
        for size in ("tiny", "small", "h200"):
            config_from(size, env={})

    def test_bad_shapes(self):
        for env in ({"TESTBED_HEADS": "5"}, {"TESTBED_MAX_LEN": "100"}, {"TESTBED_LAYERS": "0"}, {"TESTBED_PROMPT": "200"}):
            with self.assertRaises(ValueError, msg=env):
                config_from("tiny", env=env)

    def test_environment_overrides(self):
        self.assertEqual(config_from("tiny", env={"TESTBED_LAYERS": "3"}).layers, 3)
        self.assertEqual(config_from("tiny", env={"TESTBED_LAYERS": "3"}, overrides={"layers": 1}).layers, 1)
`+footer),
		test("tests: weights depend on the seed only", "tests/test_weights.py", `"""Deterministic weights."""

`+header+`from model import config_from  # noqa: E402
from model.weights import init_weights  # noqa: E402


class WeightsTest(unittest.TestCase):
    def test_same_seed_same_weights(self):
        cfg = config_from("tiny", env={})
        a = init_weights(cfg, torch.device("cpu"), torch.float32)
        b = init_weights(cfg, torch.device("cpu"), torch.float32)
        for name in a:
            self.assertTrue(torch.equal(a[name], b[name]), name)

    def test_other_seed_other_weights(self):
        a = init_weights(config_from("tiny", env={}), torch.device("cpu"), torch.float32)
        b = init_weights(config_from("tiny", env={"TESTBED_SEED": "9"}), torch.device("cpu"), torch.float32)
        self.assertFalse(torch.equal(a["embed"], b["embed"]))
`+footer),
		test("tests: the cache writes at positions", "tests/test_kv_cache.py", `"""The KV cache."""

`+header+`from attention import KVCache  # noqa: E402


class KVCacheTest(unittest.TestCase):
    def test_write_at_positions(self):
        c = KVCache(1, 2, 16, 4, torch.device("cpu"), torch.float32)
        k = torch.ones(2, 2, 4)
        c.write(0, torch.tensor([3, 5]), k, 2 * k)
        self.assertEqual(float(c.k[0, :, 3].sum()), 8.0)
        self.assertEqual(float(c.v[0, :, 5].sum()), 16.0)
        self.assertEqual(float(c.k[0, :, 4].sum()), 0.0)
`+footer),
		test("tests: rotary positions keep norms", "tests/test_rotary.py", `"""Rotary position embeddings."""

`+header+`from model import config_from  # noqa: E402
from model.layers import Rotary  # noqa: E402


class RotaryTest(unittest.TestCase):
    def test_rotation_keeps_the_norm(self):
        cfg = config_from("tiny", env={})
        rope = Rotary(cfg, torch.device("cpu"))
        x = torch.randn(3, cfg.heads, cfg.head_dim, generator=torch.Generator().manual_seed(1))
        cos, sin = rope.at(torch.tensor([0, 7, 40]))
        y = Rotary.apply(x, cos, sin)
        self.assertTrue(torch.allclose(x.norm(dim=-1), y.norm(dim=-1), atol=1e-5))
        self.assertTrue(torch.equal(x[0], y[0]), "position 0 is not rotated")
`+footer),
		test("tests: the draft head proposes k tokens", "tests/test_draft.py", `"""The draft head."""

`+header+`from speculative import DraftHead  # noqa: E402
from tests.test_speculative import tiny_runner  # noqa: E402


class DraftTest(unittest.TestCase):
    def test_proposes_k_tokens_in_the_vocabulary(self):
        cfg, model, _ = tiny_runner(use_graphs=False)
        with torch.inference_mode():
            drafts = DraftHead(model).propose(torch.zeros(cfg.hidden), torch.tensor(5), 4)
        self.assertEqual(tuple(drafts.shape), (4,))
        self.assertTrue(bool(((drafts >= 0) & (drafts < cfg.vocab)).all()))
`+footer),
		test("tests: one rank's allreduce is the identity", "tests/test_communicator.py", `"""The communicator."""

`+header+`from communicator import Communicator  # noqa: E402


class CommunicatorTest(unittest.TestCase):
    def test_one_rank(self):
        x = torch.arange(4.0)
        self.assertTrue(torch.equal(Communicator().all_reduce(x), torch.arange(4.0)))
`+footer),
	}
}

// gpuNoteSteps change comments and help texts only.
func gpuNoteSteps() []step {
	note := func(subject string, e edit) step { return step{subject: subject, author: anyone, edits: []edit{e}} }
	return []step{
		note("runtime: say why bfloat16 on CUDA", replace("runtime/device.py", `    """bfloat16 on CUDA and float32 on the CPU, unless named (TESTBED_DTYPE)."""`,
			`    """bfloat16 on CUDA and float32 on the CPU, unless named (TESTBED_DTYPE).
    bfloat16 keeps float32's range, so the random model needs no scaling."""`)),
		note("communicator: note what a multi-rank run needs", replace("communicator/allreduce.py", `sum goes through torch.distributed.all_reduce."""`,
			`sum goes through torch.distributed.all_reduce. Inside a CUDA graph that
needs NCCL's graph support (NCCL 2.9 and later)."""`)),
		note("model: document the config's units", replace("model/config.py", `    vocab: int = 32000
`, `    # Widths are in elements, lengths in tokens.
    vocab: int = 32000
`)),
		note("attention: explain the cache's layout", replace("attention/kv_cache.py", `    """Keys and values of every layer, [layers, heads, max_len, head_dim].
`, `    """Keys and values of every layer, [layers, heads, max_len, head_dim]:
    heads before positions, as SDPA reads them.
`)),
		note("bench: mention the variables in --help", replace("bench/run.py", `    p = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n\n")[0])`,
			`    p = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n\n")[0],
                                epilog="Every setting also has a TESTBED_ variable; see the module's docstring.")`)),
		note("speculative: say where the bonus token comes from", replace("speculative/generate.py", `    """n tokens after prompt by draft-and-verify steps of k drafts; greedy
    verification makes them exactly greedy's tokens. Also returns the
    number of verify steps."""`, `    """n tokens after prompt by draft-and-verify steps of k drafts; greedy
    verification makes them exactly greedy's tokens. Also returns the
    number of verify steps. Each step ends with the target's own next
    token (the bonus), so it emits at least one."""`)),
	}
}
