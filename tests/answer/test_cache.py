"""The semantic answer cache (vouched.answer.cache): keys, threshold, invalidation, LRU, threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.answer.cache import SemanticCache, cacheable, question_values
from vouched.answer.events import CitedSource, DoneEvent, NoticeEvent, RefusalEvent, SentenceEvent
from vouched.config import load_config
from vouched.spend.metrics import CacheMetrics

DIM = 16
SENTENCES = (SentenceEvent("Ada Lovelace wrote the first program in 1843.", (1,)),)
SOURCES = (CitedSource(1, "bio#0", "bio", "Biography", "Early work", "2024-01-02", "https://ex.org/bio"),)
KEY = dict(tenant="t", lang="en", corpus_version="v1")


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def at_cosine(base: np.ndarray, cos: float, seed: int = 99) -> np.ndarray:
    """A unit vector whose cosine with `base` is exactly `cos`."""
    r = np.random.default_rng(seed).standard_normal(DIM)
    r -= (r @ base) * base
    r /= np.linalg.norm(r)
    return (cos * base + np.sqrt(1 - cos * cos) * r).astype(np.float32)


@pytest.fixture
def cache(tmp_path):
    c = SemanticCache(tmp_path / "answers.sqlite", threshold=0.95, max_entries=100)
    yield c
    c.close()


def word(i: int) -> str:
    """A digit-free name for `i` (digits in a question are values, and values must match)."""
    return "".join(chr(97 + int(d)) for d in str(i))


def put(cache, vec, question="When did she write the first program?", **kw):
    return cache.put(vec, question=question, sentences=SENTENCES, sources=SOURCES, **{**KEY, **kw})


def test_hit_returns_the_sentences_and_cited_sources_as_stored(cache):
    v = unit(1)
    put(cache, v)
    got = cache.lookup(v * 3.0, question="When did she write her first program?", **KEY)  # scale does not matter
    assert got is not None
    assert got.sentences == SENTENCES and got.sources == SOURCES
    assert got.question == "When did she write the first program?"
    assert got.similarity == pytest.approx(1.0, abs=1e-6)
    assert cache.metrics.hits.value() == 1 and cache.metrics.misses.value() == 0


@pytest.mark.parametrize("cos, hit", [(0.999, True), (0.951, True), (0.949, False), (0.5, False), (-1.0, False)])
def test_threshold(cache, cos, hit):
    base = unit(2)
    put(cache, base)
    got = cache.lookup(at_cosine(base, cos), question="q", **KEY)
    assert (got is not None) is hit
    if hit:
        assert got.similarity == pytest.approx(cos, abs=1e-5)
    assert cache.metrics.hits.value() == int(hit) and cache.metrics.misses.value() == int(not hit)


def test_threshold_is_configurable(tmp_path):
    c = SemanticCache(tmp_path / "a.sqlite", threshold=0.8)
    base = unit(3)
    put(c, base)
    assert c.lookup(at_cosine(base, 0.85), question="q", **KEY) is not None
    assert c.lookup(at_cosine(base, 0.75), question="q", **KEY) is None


def test_closest_entry_wins(cache):
    base = unit(4)
    put(cache, at_cosine(base, 0.96, seed=1), question="far")
    put(cache, at_cosine(base, 0.99, seed=2), question="near")
    assert cache.lookup(base, question="x", **KEY).question == "near"


@pytest.mark.parametrize("other", [dict(tenant="u"), dict(lang="fa"), dict(model="other-model")])
def test_tenant_language_and_model_isolation(cache, other):
    v = unit(5)
    put(cache, v)
    key = {**KEY, **other}
    model = key.pop("model", "")
    assert cache.lookup(v, question="q", model=model, **key) is None
    assert cache.lookup(v, question="q", **KEY) is not None


def test_questions_asking_different_values_never_share_an_answer(cache):
    v = unit(6)
    put(cache, v, question="Can I get a refund after 14 days?")
    assert cache.lookup(v, question="Can I get a refund after 30 days?", **KEY) is None
    assert cache.lookup(v, question="Refund possible after 14 days?", **KEY) is not None
    # Digits of any script and separators are compared in canonical form.
    put(cache, v, question="¿Cuesta 12.000 euros?", lang="es")
    assert cache.lookup(v, question="¿cuesta 12000 euros?", **{**KEY, "lang": "es"}) is not None
    put(cache, v, question="آیا سال ۱۴۰۲ بود؟", lang="fa")
    assert cache.lookup(v, question="سال 1402 بود؟", **{**KEY, "lang": "fa"}) is not None
    assert cache.lookup(v, question="سال 1403 بود؟", **{**KEY, "lang": "fa"}) is None


def test_a_new_corpus_version_invalidates_and_prunes(cache):
    v = unit(7)
    put(cache, v)
    put(cache, unit(8), tenant="other")
    assert len(cache) == 2
    assert cache.lookup(v, question="q", **{**KEY, "corpus_version": "v2"}) is None
    assert len(cache) == 0  # both entries of v1 deleted, every tenant's
    assert cache.lookup(v, question="q", **KEY) is None  # and the old version is gone for good


def test_a_replica_still_on_the_old_version_deletes_nothing_newer(tmp_path):
    new = SemanticCache(tmp_path / "a.sqlite")
    old = SemanticCache(tmp_path / "a.sqlite")  # another replica, not yet switched
    v = unit(9)
    put(old, v, corpus_version="v1")
    put(new, v, corpus_version="v2")  # v2 seen after v1: v1's entry goes
    put(old, v, corpus_version="v1")  # a straggler's write is kept, and pruned nothing
    assert len(new) == 2
    assert new.lookup(v, question="q", **{**KEY, "corpus_version": "v2"}) is not None
    assert old.lookup(v, question="q", **KEY) is not None  # the straggler serves its own version
    put(new, unit(13), corpus_version="v2")  # the next write of the newer version removes it
    assert len(new) == 2 and old.lookup(v, question="q", **KEY) is None
    # prune: the version given becomes the newest, every other version's entries go.
    put(old, v, corpus_version="v1")
    assert new.prune("v1") == 2 and len(new) == 1
    put(new, unit(14), corpus_version="v2")  # v2 is now older than v1: it prunes nothing
    assert len(new) == 2
    new.close(), old.close()


def test_lru_bound_evicts_the_least_recently_used(tmp_path):
    c = SemanticCache(tmp_path / "a.sqlite", max_entries=3)
    vs = [unit(10 + i) for i in range(4)]
    for i in range(3):
        put(c, vs[i], question=f"q{word(i)}")
    assert c.lookup(vs[0], question="x", **KEY).question == "qa"  # q0 becomes the most recent
    put(c, vs[3], question="qd")  # evicts q1, the least recently used
    assert len(c) == 3
    assert c.lookup(vs[1], question="x", **KEY) is None
    assert [c.lookup(vs[i], question="x", **KEY).question for i in (0, 2, 3)] == ["qa", "qc", "qd"]


def test_persists_across_instances(tmp_path):
    v = unit(11)
    a = SemanticCache(tmp_path / "a.sqlite")
    put(a, v)
    a.close()
    b = SemanticCache(tmp_path / "a.sqlite")
    assert b.lookup(v, question="q", **KEY).sentences == SENTENCES
    b.close()


def test_concurrent_threads(tmp_path):
    c = SemanticCache(tmp_path / "a.sqlite", max_entries=50)
    errors: list[BaseException] = []
    hits: list[int] = []
    per_thread = 40

    def work(t: int) -> None:
        try:
            for i in range(per_thread):
                v = unit(1000 * t + i)
                put(c, v, question=f"t{word(t)} q{word(i)}")
                got = c.lookup(v, question="x", **KEY)
                # An entry may already be evicted by other threads' writes, never mixed up.
                if got is not None:
                    assert got.question == f"t{word(t)} q{word(i)}"
                    hits.append(1)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(c) == 50
    m = c.metrics
    assert m.hits.value() + m.misses.value() == 8 * per_thread
    assert m.hits.value() == len(hits) > 0


def test_rejects_bad_input(cache, tmp_path):
    with pytest.raises(ValueError):
        put(cache, np.zeros(DIM, dtype=np.float32))
    with pytest.raises(ValueError):
        cache.put(unit(1), question="q", sentences=(), sources=(), **KEY)
    with pytest.raises(ValueError):
        SemanticCache(tmp_path / "x.sqlite", threshold=0)
    with pytest.raises(ValueError):
        SemanticCache(tmp_path / "x.sqlite", max_entries=0)


def test_a_lookup_with_another_dimension_misses(cache):
    put(cache, unit(12))
    assert cache.lookup(np.ones(DIM * 2, dtype=np.float32), question="q", **KEY) is None


# -- what may be cached ----------------------------------------------------------------------------


def done(outcome="answered"):
    return DoneEvent(outcome=outcome, sources=SOURCES, trace_id="t")


def test_cacheable_only_a_whole_gate_passed_answer():
    assert cacheable([*SENTENCES, done()]) == (SENTENCES, SOURCES)
    assert cacheable([*SENTENCES, NoticeEvent("held", "…", rule="number"), done("held")]) is None
    assert cacheable([*SENTENCES, NoticeEvent("truncated", "…"), done("truncated")]) is None
    assert cacheable([RefusalEvent("L2", "no_evidence", "…"), done("refused")]) is None
    assert cacheable([*SENTENCES, done("records")]) is None
    assert cacheable([done()]) is None  # nothing released
    assert cacheable(SENTENCES) is None  # no done event: the stream did not finish


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["14", "30", "1,250", "1250", "۱۴", "https://a.example/x", "x", "días", "日"]),
                max_size=6))
def test_question_values_ignore_order_and_script(words):
    assert question_values(" ".join(words)) == question_values(" ".join(reversed(words)))
    nums = {w for w in words if w in ("14", "۱۴")}
    assert ("14" in question_values(" ".join(words)).split()) == bool(nums)


def test_config_defaults_and_from_config(tmp_path):
    cfg = load_config(None, cache={"threshold": 0.9, "max_entries": 5, "path": str(tmp_path / "c.sqlite")})
    c = SemanticCache.from_config(cfg, metrics=CacheMetrics())
    assert (c.threshold, c.max_entries, c.path) == (0.9, 5, tmp_path / "c.sqlite")
    d = load_config().cache
    assert (d.enabled, d.threshold, d.max_entries) == (False, 0.95, 10_000)
    with pytest.raises(Exception):
        load_config(None, cache={"treshold": 0.9})


def test_vectors_held_in_memory_follow_another_process_writes_and_evictions(tmp_path):
    a = SemanticCache(tmp_path / "a.sqlite", max_entries=2)
    b = SemanticCache(tmp_path / "a.sqlite", max_entries=2)
    v1, v2, v3 = unit(21), unit(22), unit(23)
    put(a, v1, question="first")
    assert a.lookup(v1, question="x", **KEY).question == "first"  # a now holds v1 in memory
    put(b, v2, question="second")
    put(b, v3, question="third")  # b evicts "first"
    assert a.lookup(v1, question="x", **KEY) is None
    assert a.lookup(v3, question="x", **KEY).question == "third"
    a.close(), b.close()
