"""A minimal OpenAI-compatible server around a gpt-fast checkout.

Run in the checkout:

    python3 /path/to/server.py --port 8000 $(cat serve.args)

It builds the checkout's model with random weights (engine.py), and serves
POST /v1/completions with streaming (server-sent events, one chunk per
token, then a usage chunk), GET /health once the model is ready, and GET
/metrics with vLLM's speculative decoding counters. Generation is the
engine's own: generate.prefill, then generate.speculative_decode with a
draft that is the target's first layers (or generate.decode_n_tokens one
token at a time with --spec-k 0). Requests are served one at a time, as a
batch-1 engine does; a prompt word is one token (its hash), and the
output's text is the token ids.
"""

import argparse
import json
import os
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine  # noqa: E402


class Engine:
    def __init__(self, a):
        self.model_mod, self.generate = engine.load(".")
        self.dev = torch.device(a.device)
        self.a = a
        self.target = engine.build(self.model_mod, self.dev, a.dim, a.layers, a.heads, a.vocab, a.cache_len, a.seed)
        self.draft = engine.draft_of(self.model_mod, self.target, a.draft_layers) if a.spec_k > 0 else None
        with torch.device(self.dev):
            self.target.setup_caches(max_batch_size=1, max_seq_length=a.cache_len)
            if self.draft is not None:
                self.draft.setup_caches(max_batch_size=1, max_seq_length=a.cache_len)
        self.lock = threading.Lock()
        self.drafts = 0
        self.draft_tokens = 0
        self.accepted = 0
        self.sampling = dict(temperature=a.temperature, top_k=a.top_k)

    def tokens(self, prompt):
        ids = [zlib.crc32(w.encode()) % self.a.vocab for w in prompt.split()] or [0]
        return ids[-(self.a.cache_len // 2):]

    def stream(self, prompt, max_tokens):
        """Yields lists of new token ids as the engine emits them."""
        g = self.generate
        ids = self.tokens(prompt)
        max_tokens = max(1, min(max_tokens, self.a.cache_len - len(ids) - self.a.spec_k - 2))
        with self.lock, torch.no_grad():
            x = torch.tensor([ids], device=self.dev, dtype=torch.int)
            pos = torch.arange(0, len(ids), device=self.dev)
            cur = g.prefill(self.target, x, pos, **self.sampling).clone()
            if self.draft is not None:
                g.prefill(self.draft, x, pos, **self.sampling)
            out = [int(cur.view(-1)[0])]
            yield out
            n, at, cur = 1, len(ids), cur.view(-1)
            while n < max_tokens:
                if self.draft is None:
                    toks, _ = g.decode_n_tokens(self.target, cur.view(1, -1), torch.tensor([at], device=self.dev, dtype=torch.int), 1, **self.sampling)
                    new = torch.cat(toks).view(-1)
                else:
                    new = g.speculative_decode(self.target, self.draft, cur, at, self.a.spec_k, **self.sampling)
                    self.drafts += 1
                    self.draft_tokens += self.a.spec_k
                    self.accepted += new.numel() - 1
                new = new[: max_tokens - n]
                at += new.numel()
                n += new.numel()
                cur = new[-1].view(-1)
                yield [int(t) for t in new.tolist()]


def handler(eng):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send_text(self, code, body, ctype="text/plain"):
            b = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

        def do_GET(self):
            if self.path == "/health":
                self.send_text(200, "ok\n")
            elif self.path == "/metrics":
                self.send_text(200, "".join([
                    "# TYPE vllm:spec_decode_num_drafts counter\n",
                    f"vllm:spec_decode_num_drafts_total {eng.drafts}\n",
                    "# TYPE vllm:spec_decode_num_draft_tokens counter\n",
                    f"vllm:spec_decode_num_draft_tokens_total {eng.draft_tokens}\n",
                    "# TYPE vllm:spec_decode_num_accepted_tokens counter\n",
                    f"vllm:spec_decode_num_accepted_tokens_total {eng.accepted}\n",
                ]))
            else:
                self.send_text(404, "not found\n")

        def do_POST(self):
            if self.path != "/v1/completions":
                self.send_text(404, "not found\n")
                return
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                prompt, max_tokens = str(req["prompt"]), int(req.get("max_tokens", 16))
            except (ValueError, KeyError, TypeError) as e:
                self.send_text(400, json.dumps({"error": {"message": f"bad request: {e}"}}), "application/json")
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True

            def event(obj):
                self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
                self.wfile.flush()

            n = 0
            for toks in eng.stream(prompt, max_tokens):
                n += len(toks)
                event({"object": "text_completion", "choices": [{"index": 0, "text": "".join(f" t{t}" for t in toks), "finish_reason": None}]})
            event({"object": "text_completion", "choices": [], "usage": {"prompt_tokens": len(eng.tokens(prompt)), "completion_tokens": n, "total_tokens": n + len(eng.tokens(prompt))}})
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return H


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--cache-len", type=int, default=4096)
    p.add_argument("--spec-k", type=int, default=5)
    p.add_argument("--draft-layers", type=int, default=3)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=200)
    p.add_argument("--seed", type=int, default=1234)
    a = p.parse_args()
    for line in engine.facts(a.device):
        print(line, flush=True)
    eng = Engine(a)
    # A first request warms the kernels up before /health says ready.
    for _ in eng.stream("warm up the kernels", 8):
        pass
    srv = ThreadingHTTPServer((a.host, a.port), handler(eng))
    print(f"serving on {a.host}:{a.port}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
