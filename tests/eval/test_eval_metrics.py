"""Metrics against hand-computed values and a slow, literal reference implementation."""

from __future__ import annotations

import math
from itertools import permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.eval.metrics import evaluate, hit_at_k, ndcg_at_k, parse_metric, percentile, recall_at_k


# -- slow reference: the trec_eval definitions written out longhand -------------------------
def ref_ndcg(ranked, qrels, k):
    seen, top = set(), []
    for d in ranked:
        if d not in seen:
            seen.add(d)
            top.append(d)
    top = top[:k]
    dcg = 0.0
    for rank, d in enumerate(top, start=1):
        g = qrels.get(d, 0)
        if g > 0:
            dcg += g / (math.log(rank + 1) / math.log(2))
    # ideal: the best DCG any ordering of the judged documents could reach (brute force)
    judged = [g for g in qrels.values() if g > 0]
    best = 0.0
    for perm in set(permutations(judged)) if len(judged) <= 6 else [sorted(judged, reverse=True)]:
        best = max(best, sum(g / (math.log(r + 1) / math.log(2)) for r, g in enumerate(perm[:k], start=1)))
    return dcg / best if best else 0.0


def ref_recall(ranked, qrels, k):
    rel = [d for d, g in qrels.items() if g > 0]
    if not rel:
        return 0.0
    top = list(dict.fromkeys(ranked))[:k]
    return sum(1 for d in rel if d in top) / len(rel)


# -- hand-computed values -------------------------------------------------------------------
def test_ndcg_hand_computed_graded():
    # DCG = 1/log2(2) + 2/log2(4) = 2; IDCG = 2/1 + 1/log2(3)
    got = ndcg_at_k(["a", "b", "c"], {"a": 1, "c": 2}, 3)
    assert got == pytest.approx(2 / (2 + 1 / math.log2(3)))


def test_ndcg_perfect_and_empty():
    assert ndcg_at_k(["a", "b"], {"a": 2, "b": 1}, 10) == pytest.approx(1.0)
    assert ndcg_at_k([], {"a": 1}, 10) == 0.0
    assert ndcg_at_k(["a"], {}, 10) == 0.0
    assert ndcg_at_k(["a"], {"a": 0, "b": -1}, 10) == 0.0


def test_ndcg_ideal_comes_from_qrels_not_the_ranking():
    # the only retrieved document is relevant, but two more exist: not a perfect score
    assert ndcg_at_k(["a"], {"a": 1, "b": 1, "c": 1}, 10) == pytest.approx(1 / (1 + 1 / math.log2(3) + 0.5))


def test_ndcg_cut_applies_to_the_ideal_too():
    qrels = {d: 1 for d in "abcdefghijkl"}  # 12 relevant, cut at 10
    assert ndcg_at_k(list("abcdefghij"), qrels, 10) == pytest.approx(1.0)


def test_duplicates_count_once():
    assert ndcg_at_k(["a", "a", "b"], {"a": 1, "b": 1}, 2) == pytest.approx(1.0)
    assert recall_at_k(["a", "a", "b"], {"a": 1, "b": 1}, 2) == 1.0
    assert ndcg_at_k(["a", "a"], {"a": 1, "b": 1}, 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_recall_and_hit():
    qrels = {"a": 1, "b": 1, "z": 0}
    assert recall_at_k(["x", "a", "y", "b"], qrels, 2) == 0.5
    assert recall_at_k(["x", "a", "y", "b"], qrels, 4) == 1.0
    assert hit_at_k(["x", "a"], qrels, 1) == 0.0
    assert hit_at_k(["x", "a"], qrels, 2) == 1.0
    assert hit_at_k(["z"], qrels, 1) == 0.0  # grade 0 is not relevant
    assert recall_at_k(["a"], {}, 5) == 0.0


def test_k_must_be_positive():
    with pytest.raises(ValueError):
        ndcg_at_k(["a"], {"a": 1}, 0)


# -- property: equal to the reference on random inputs ---------------------------------------
docs = st.sampled_from([f"d{i}" for i in range(12)])


@settings(max_examples=300, deadline=None)
@given(
    ranked=st.lists(docs, max_size=15),
    qrels=st.dictionaries(docs, st.integers(min_value=-1, max_value=3), max_size=6),
    k=st.integers(min_value=1, max_value=12),
)
def test_matches_reference(ranked, qrels, k):
    assert ndcg_at_k(ranked, qrels, k) == pytest.approx(ref_ndcg(ranked, qrels, k))
    assert recall_at_k(ranked, qrels, k) == pytest.approx(ref_recall(ranked, qrels, k))
    assert hit_at_k(ranked, qrels, k) == (1.0 if ref_recall(ranked, qrels, k) > 0 else 0.0)
    assert 0.0 <= ndcg_at_k(ranked, qrels, k) <= 1.0 + 1e-12


# -- percentile ------------------------------------------------------------------------------
def test_percentile_hand_values():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 95) == 5
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert percentile([3, 1, 2], 0) == 1 and percentile([3, 1, 2], 100) == 3


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1e4), min_size=1, max_size=50), st.floats(min_value=0, max_value=100))
def test_percentile_matches_closest_ranks_interpolation(values, p):
    s = sorted(values)
    pos = (len(s) - 1) * p / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    want = s[lo] + (s[hi] - s[lo]) * (pos - lo)
    assert percentile(values, p) == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_percentile_rejects_nonsense():
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


# -- evaluate / names ------------------------------------------------------------------------
def test_evaluate_averages_over_judged_queries():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    out = evaluate({"q1": ["a"]}, qrels, ["ndcg@10", "recall@100", "hit@1"])  # q2 unanswered scores 0
    assert out == {"ndcg@10": 0.5, "recall@100": 0.5, "hit@1": 0.5}


def test_parse_metric():
    assert parse_metric("ndcg@10") == ("ndcg", 10)
    for bad in ("map@10", "ndcg", "recall@0", "recall@x"):
        with pytest.raises(ValueError):
            parse_metric(bad)


def test_numpy_agrees_on_a_big_sample():
    rng = np.random.default_rng(0)
    values = rng.exponential(10, 1000).tolist()
    assert percentile(values, 95) == pytest.approx(float(np.quantile(values, 0.95)))
