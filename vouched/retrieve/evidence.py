"""Bounded evidence scores — the only numbers L2 ever compares with its threshold.

dense: cosine similarity clipped to [0, 1].
keyword: coverage — the share of the question's distinct content terms found as whole
words in the passage, counted only when at least two distinct terms match (one shared
word is too weak to call evidence: "Paris" alone matches any page that names Paris).
Terms are the analysed content words (normalised, stop words removed, stemmed per
language; Chinese as character bigrams), so "rates" in a question matches "rate" on a page.

weighted_coverage: the same share with each term weighted by its rarity in the corpus
(idf = ln((N + 1) / (df + 0.5)), N chunks, df chunks holding the term), so two common words
that co-occur in a long chunk no longer score 1.0 while a rare word of the question is
missing, and a word the corpus never uses weighs most. Bounded in [0, 1]. One matching term
counts on its own when it is rare (in at most ``SINGLE_TERM_SHARE`` of the chunks): "What is
the GIL?" has one content word, and a page holding it is evidence.
"""

from __future__ import annotations

import math
from typing import Collection, Iterable

from vouched.types import DocFreq

MIN_MATCHING_TERMS = 2
SINGLE_TERM_SHARE = 0.05


def clip_cosine(cos: float) -> float:
    return 0.0 if cos <= 0.0 else (1.0 if cos >= 1.0 else float(cos))


def coverage(question_terms: Collection[str], passage_terms: Collection[str], min_matching: int = MIN_MATCHING_TERMS) -> float:
    q = set(question_terms)
    if not q:
        return 0.0
    hit = len(q.intersection(passage_terms))
    return hit / len(q) if hit >= min_matching else 0.0


def idf(df: int, n_docs: int) -> float:
    """Rarity weight of a term held by ``df`` of ``n_docs`` chunks (always > 0)."""
    return math.log((n_docs + 1) / (min(df, n_docs) + 0.5))


def weighted_coverage(question_terms: Collection[str], passage_terms: Collection[str], doc_freq: DocFreq | None,
                      min_matching: int = MIN_MATCHING_TERMS, single_share: float = SINGLE_TERM_SHARE) -> float:
    """Share of the question's terms found in the passage, each weighted by its idf (see above);
    plain ``coverage`` when no document frequencies are known."""
    if doc_freq is None or doc_freq.n_docs <= 0:
        return coverage(question_terms, passage_terms, min_matching)
    q = list(dict.fromkeys(question_terms))
    if not q:
        return 0.0
    have = passage_terms if isinstance(passage_terms, (set, frozenset)) else set(passage_terms)
    n = doc_freq.n_docs
    w = {t: idf(doc_freq.get(t), n) for t in q}
    hit = [t for t in q if t in have]
    if len(hit) < min_matching and not (len(hit) == 1 and doc_freq.get(hit[0]) <= single_share * n):
        return 0.0
    return min(1.0, sum(w[t] for t in hit) / sum(w.values()))


def evidence(dense: float, keyword: float) -> float:
    """A passage keeps the larger of its two bounded scores."""
    return max(clip_cosine(dense), keyword)


def best_evidence(scores: Iterable[float]) -> float:
    return max(scores, default=0.0)
