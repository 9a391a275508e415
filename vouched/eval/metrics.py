"""Ranking metrics, as trec_eval / pytrec_eval compute them, so our figures compare with BEIR's.

Every function is pure: a ranked list of document ids and one query's qrels in, a number out.
Conventions (the ones BEIR's published tables use, through pytrec_eval):

* relevance is graded; a grade <= 0 counts as not relevant;
* nDCG gain is the grade itself (linear, not 2^grade - 1), discounted by log2(rank + 1);
* the ideal DCG is built from the qrels (the best possible ordering of the judged
  documents), not from the retrieved list, so missing relevant documents cost score;
* a document id repeated in a ranking counts once, at its first rank (trec_eval drops
  duplicates; counting them would let a system score twice for one document).
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np

Qrels = Mapping[str, int]


def _unique(ranked_ids: Iterable[str], k: int) -> list[str]:
    """The first k distinct ids, in order."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    seen: dict[str, None] = {}
    for doc_id in ranked_ids:
        if doc_id not in seen:
            seen[doc_id] = None
            if len(seen) == k:
                break
    return list(seen)


def _relevant(qrels: Qrels) -> set[str]:
    return {doc_id for doc_id, grade in qrels.items() if grade > 0}


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain of gains listed from rank 1 down."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)


def ndcg_at_k(ranked_ids: Sequence[str], qrels: Qrels, k: int) -> float:
    """nDCG@k with graded relevance; 0.0 when the query has no relevant document."""
    top = _unique(ranked_ids, k)
    ideal = dcg(sorted((g for g in qrels.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([max(qrels.get(doc_id, 0), 0) for doc_id in top]) / ideal


def recall_at_k(ranked_ids: Sequence[str], qrels: Qrels, k: int) -> float:
    """Share of the relevant documents found in the top k; 0.0 when none is relevant."""
    relevant = _relevant(qrels)
    if not relevant:
        return 0.0
    return len(relevant.intersection(_unique(ranked_ids, k))) / len(relevant)


def hit_at_k(ranked_ids: Sequence[str], qrels: Qrels, k: int) -> float:
    """1.0 if any relevant document is in the top k (success@k), else 0.0."""
    relevant = _relevant(qrels)
    return 1.0 if relevant.intersection(_unique(ranked_ids, k)) else 0.0


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100) with linear interpolation between closest ranks.

    Same definition as numpy's default, so p50 of an even-length list is the mean of the
    two middle values. Raises on an empty list: a latency figure from no samples is a bug.
    """
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within 0..100, got {p}")
    if len(values) == 0:
        raise ValueError("percentile of no values")
    return float(np.percentile(np.asarray(values, dtype=np.float64), p))


METRICS = {"ndcg": ndcg_at_k, "recall": recall_at_k, "hit": hit_at_k}


def parse_metric(name: str) -> tuple[str, int]:
    """'ndcg@10' -> ('ndcg', 10); the names used in condition files and JSON output."""
    kind, sep, cut = name.partition("@")
    if kind not in METRICS or not sep or not cut.isdigit() or int(cut) < 1:
        raise ValueError(f"unknown metric {name!r}; use one of ndcg@K, recall@K, hit@K (K >= 1)")
    return kind, int(cut)


def evaluate(
    runs: Mapping[str, Sequence[str]], qrels: Mapping[str, Qrels], metrics: Sequence[str]
) -> dict[str, float]:
    """Mean of each metric over the queries in `qrels` (a query missing from `runs` scores 0).

    Averaging over the judged queries, not the answered ones, is what keeps a system from
    looking better by returning nothing for hard queries.
    """
    if not qrels:
        raise ValueError("no judged queries to evaluate")
    out: dict[str, float] = {}
    for name in metrics:
        kind, k = parse_metric(name)
        fn = METRICS[kind]
        out[name] = sum(fn(runs.get(qid, ()), q, k) for qid, q in qrels.items()) / len(qrels)
    return out
