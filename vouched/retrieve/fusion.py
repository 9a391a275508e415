"""Weighted reciprocal rank fusion — it decides ORDER only.

RRF (Cormack, Clarke & Büttcher, SIGIR 2009) scores an item by the sum over ranked lists of
w / (k + rank), rank starting at 1. The constant k damps the weight of the very top ranks so
that no single list dominates; 60 is the paper's value. The fused number has no absolute
meaning (it depends on k, the weights and the list lengths), which is why vouched never
compares it with a threshold: L2 uses the bounded scores in `evidence.py`.
"""

from __future__ import annotations

from typing import Mapping, Sequence


def rrf(ranked: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int = 60) -> dict[str, float]:
    """Fuse ranked id lists: {list name: ids best first} → {id: fused score}.

    A list whose weight is missing counts with weight 1; an id repeated within one list
    counts once, at its best rank.
    """
    if k < 1:
        raise ValueError("rrf k must be ≥ 1")
    fused: dict[str, float] = {}
    for name, ids in ranked.items():
        w = float(weights.get(name, 1.0))
        if w == 0:
            continue
        seen: set[str] = set()
        for rank, item in enumerate(ids, start=1):
            if item in seen:
                continue
            seen.add(item)
            fused[item] = fused.get(item, 0.0) + w / (k + rank)
    return fused


def fused_order(fused: Mapping[str, float], tiebreak: Mapping[str, int] | None = None) -> list[str]:
    """Ids by fused score, ties broken by `tiebreak` (lower first), then by id for determinism."""
    tb = tiebreak or {}
    return sorted(fused, key=lambda i: (-fused[i], tb.get(i, 1 << 30), i))
