"""Bounded evidence scores — the only numbers L2 ever compares with its threshold.

dense: cosine similarity clipped to [0, 1].
keyword: coverage — the share of the question's distinct content terms found as whole
words in the passage, counted only when at least two distinct terms match (one shared
word is too weak to call evidence: "Paris" alone matches any page that names Paris).
Terms are the analysed content words (normalised, stop words removed, stemmed per
language; Chinese as character bigrams), so "rates" in a question matches "rate" on a page.
"""

from __future__ import annotations

from typing import Collection, Iterable

MIN_MATCHING_TERMS = 2


def clip_cosine(cos: float) -> float:
    return 0.0 if cos <= 0.0 else (1.0 if cos >= 1.0 else float(cos))


def coverage(question_terms: Collection[str], passage_terms: Collection[str], min_matching: int = MIN_MATCHING_TERMS) -> float:
    q = set(question_terms)
    if not q:
        return 0.0
    hit = len(q.intersection(passage_terms))
    return hit / len(q) if hit >= min_matching else 0.0


def evidence(dense: float, keyword: float) -> float:
    """A passage keeps the larger of its two bounded scores."""
    return max(clip_cosine(dense), keyword)


def best_evidence(scores: Iterable[float]) -> float:
    return max(scores, default=0.0)
