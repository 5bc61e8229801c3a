"""The draft head."""

import torch
import torch.nn.functional as F

from model.layers import rms_norm


class DraftHead:
    """Predicts the target's next hidden state from its current one and the
    embedding of the token it produced, as EAGLE does at the feature level,
    and reads tokens off it with the target's own LM head."""

    def __init__(self, model):
        self.model = model
        self.fc = model.w["draft.fc"]
        self.norm = model.w["draft.norm"]

    def propose(self, hidden, token, k):
        """k draft tokens, [k], following token, a 0-d tensor produced by
        the target at hidden, [hidden]."""
        w, eps = self.model.w, self.model.cfg.norm_eps
        h, t = hidden, token
        drafts = []
        for _ in range(k):
            e = F.embedding(t.view(1), w["embed"])[0]
            h = e + F.linear(torch.cat((rms_norm(h, self.norm, eps), e)), self.fc)
            t = self.model.logits(h.unsqueeze(0))[0].argmax(-1)
            drafts.append(t)
        return torch.stack(drafts)
