"""Greedy generation, plain and speculative."""

import torch

from speculative.verify import verify_step


def greedy(runner, prompt, n, keep_logits=False):
    """n tokens after prompt, [P], one decode step each. With keep_logits,
    also the logits that chose each token."""
    logits, _ = runner.prefill(prompt)
    kept = [logits[-1].float().clone()]
    token = logits[-1].argmax(-1).view(1)
    out = [int(token)]
    position = torch.tensor([prompt.shape[0]], dtype=torch.long, device=prompt.device)
    while len(out) < n:
        logits, _ = runner.decode(token, position)
        kept.append(logits[0].float().clone())
        token = logits[0].argmax(-1).view(1)
        out.append(int(token))
        position = position + 1
    return (out, kept) if keep_logits else out


def speculative(runner, draft, prompt, n, k):
    """n tokens after prompt by draft-and-verify steps of k drafts; greedy
    verification makes them exactly greedy's tokens. Also returns the
    number of verify steps."""
    device = prompt.device
    logits, hidden = runner.prefill(prompt)
    token = logits[-1].argmax(-1)
    feature = hidden[-1].clone()
    out = [int(token)]
    position = prompt.shape[0]
    steps = 0
    while len(out) < n:
        drafts = draft.propose(feature, token, k)
        tokens = torch.cat((token.view(1), drafts))
        positions = torch.arange(position, position + k + 1, dtype=torch.long, device=device)
        accepted, predictions, hidden = verify_step(runner, tokens, positions)
        a = int(accepted)
        out.extend(int(t) for t in drafts[:a])
        token = predictions[a].clone()
        out.append(int(token))
        feature = hidden[a].clone()
        position += a + 1
        steps += 1
    return out[:n], steps
