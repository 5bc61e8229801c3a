"""Which cached keys a query may see."""


def visible_keys(positions, key_positions):
    """Return a [T, max_len] boolean mask: query i sees the keys at positions
    up to its own. Slots past a sequence's length hold stale keys of rejected
    drafts; they lie after every query of the next step, so they stay hidden
    until that step overwrites them."""
    return key_positions.unsqueeze(0) <= positions.unsqueeze(1)
