from hypothesis import given, settings, strategies as st

from vouched.retrieve import clip_cosine, coverage, evidence, fused_order, rrf

ids = st.lists(st.sampled_from([f"d{i}" for i in range(30)]), unique=True, max_size=20)


def slow_rrf(lists, weights, k):
    out = {}
    for name, items in lists.items():
        if weights.get(name, 1.0) == 0:
            continue
        for r, i in enumerate(items):
            out[i] = out.get(i, 0) + weights.get(name, 1.0) / (k + r + 1)
    return out


@given(ids, ids, st.floats(0, 5), st.floats(0, 5), st.integers(1, 100))
def test_rrf_matches_reference(a, b, wa, wb, k):
    got = rrf({"a": a, "b": b}, {"a": wa, "b": wb}, k)
    ref = slow_rrf({"a": a, "b": b}, {"a": wa, "b": wb}, k)
    assert set(got) == set(ref)
    for i in ref:
        assert abs(got[i] - ref[i]) < 1e-12


@given(ids, st.integers(1, 100))
def test_single_list_order_is_kept(a, k):
    assert fused_order(rrf({"a": a}, {}, k)) == a


@given(ids, ids)
def test_zero_weight_list_cannot_change_order(a, b):
    assert fused_order(rrf({"a": a, "b": b}, {"b": 0}, 60)) == a


def test_fused_order_is_deterministic_on_ties():
    f = rrf({"a": ["x", "y"], "b": ["y", "x"]}, {}, 60)
    assert fused_order(f) == fused_order(dict(reversed(list(f.items())))) == ["x", "y"]


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_clip_cosine_bounded(x):
    assert 0.0 <= clip_cosine(x) <= 1.0


@given(st.sets(st.text(min_size=1, max_size=4), max_size=8), st.sets(st.text(min_size=1, max_size=4), max_size=8))
def test_coverage_bounded_and_needs_two_matches(q, p):
    c = coverage(q, p)
    assert 0.0 <= c <= 1.0
    hit = len(q & p)
    assert (c == 0.0) == (hit < 2)
    if hit >= 2:
        assert c == hit / len(q)


def test_coverage_examples():
    assert coverage({"lantern", "keeper", "winter"}, {"lantern", "keeper"}) == 2 / 3
    assert coverage({"paris", "weather"}, {"paris", "museum"}) == 0.0
    assert coverage(set(), {"x"}) == 0.0


@given(st.floats(-2, 2), st.floats(0, 1))
def test_evidence_is_max_of_bounded(d, k):
    assert evidence(d, k) == max(clip_cosine(d), k)


def test_weighted_coverage_by_rarity():
    from vouched.retrieve.evidence import idf, weighted_coverage
    from vouched.types import DocFreq

    df = DocFreq(1000, {"python": 400, "declar": 30, "interfac": 25, "java": 2, "gil": 3})
    q = ["declar", "interfac", "java"]
    # the two common words co-occur; the rare one is missing: far from 1.0
    part = weighted_coverage(q, {"declar", "interfac", "python"}, df)
    assert 0.0 < part < 0.6 and part < coverage(q, {"declar", "interfac"}) == 2 / 3
    assert weighted_coverage(q, {"declar", "interfac", "java"}, df) == 1.0
    # one rare matching term counts on its own; one common one does not
    assert weighted_coverage(["gil"], {"gil", "lock"}, df) == 1.0
    assert weighted_coverage(["python"], {"python"}, df) == 0.0
    # without frequencies it is the plain coverage
    assert weighted_coverage(q, {"declar", "interfac"}, None) == coverage(q, {"declar", "interfac"})
    assert idf(0, 1000) > idf(2, 1000) > idf(400, 1000) > 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcdefgh"), max_size=8), st.lists(st.sampled_from("abcdefgh"), max_size=8),
       st.dictionaries(st.sampled_from("abcdefgh"), st.integers(0, 50)))
def test_weighted_coverage_bounded_and_monotone(q, p, dfs):
    from vouched.retrieve.evidence import weighted_coverage
    from vouched.types import DocFreq

    df = DocFreq(50, dfs)
    c = weighted_coverage(q, set(p), df)
    assert 0.0 <= c <= 1.0
    assert weighted_coverage(q, set(p) | set(q), df) >= c  # more matches never lower it
