"""The in-memory BM25 keyword index (store/keyword_index.py) and its use by the SQLite store."""

from __future__ import annotations

import math
import random
from collections import Counter
from datetime import date

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.suite import StoreSuite
from vouched.store import SQLiteStore
from vouched.store.ann import index_files
from vouched.store.keyword_index import IDF_FLOOR, SUFFIX, KeywordIndex, fold
from vouched.types import Chunk, SearchFilters

DIM = 8
DAY = date(2025, 6, 1)


def _brute(docs: list[list[str]], query: list[str]) -> dict[int, float]:
    """FTS5's bm25() written out plainly, for the property test."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n if n and sum(map(len, docs)) else 1.0
    out: dict[int, float] = {}
    for t in dict.fromkeys(query):
        df = sum(1 for d in docs if t in d)
        if not df:
            continue
        idf = math.log((n - df + 0.5) / (df + 0.5))
        idf = idf if idf > 0 else IDF_FLOOR
        for i, d in enumerate(docs):
            f = Counter(d)[t]
            if f:
                out[i] = out.get(i, 0.0) + idf * f * 2.2 / (f + 1.2 * (1 - 0.75 + 0.75 * len(d) / avgdl))
    return out


_term = st.sampled_from(["a", "b", "c", "dd", "ee", "f", "gg", "h"])


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(st.lists(_term, max_size=12), min_size=1, max_size=30),
       query=st.lists(_term, min_size=1, max_size=4), limit=st.integers(1, 40))
def test_scores_are_bm25_as_fts5_computes_it(docs, query, limit):
    index = KeywordIndex.build(" ".join(d) for d in docs)
    want = _brute(docs, query)
    got = index.search(query, None, limit)
    assert len(got) == min(limit, len(want))
    for row, score in got:
        assert score == pytest.approx(want[row], rel=1e-5)
    # best first, and nothing left out that beats the last one returned
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True)
    if got:
        returned = {r for r, _ in got}
        assert all(s <= scores[-1] * (1 + 1e-5) for r, s in want.items() if r not in returned)


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.lists(_term, max_size=8), min_size=1, max_size=20), query=st.lists(_term, min_size=1, max_size=3),
       allowed=st.lists(st.booleans(), min_size=20, max_size=20))
def test_the_mask_applies_before_the_cut(docs, query, allowed):
    index = KeywordIndex.build(" ".join(d) for d in docs)
    mask = np.array(allowed[: len(docs)], dtype=bool)
    want = {r: s for r, s in _brute(docs, query).items() if mask[r]}
    got = index.search(query, mask, 5)
    assert {r for r, _ in got} <= set(want)
    assert len(got) == min(5, len(want))


def test_fts5_token_counts():
    from vouched.store.keyword_index import fts5_tokens

    assert [fts5_tokens(t) for t in ("lantern", "3.5", "o'neil", "12,5", "中文", "हिन्दी", "café", "a_b")] == [1, 2, 2, 2, 1, 1, 1, 2]


def test_fold_removes_latin_diacritics_only():
    assert fold("café") == "cafe"
    assert fold("naïv") == "naiv"
    assert fold("cafe\u0301") == "cafe"
    assert fold("straße") == "straße"
    assert fold("हिन्दी") == "हिन्दी"  # Devanagari marks are part of the word
    assert fold("مرحبا") == "مرحبا"
    assert fold("中文") == "中文"


def test_save_and_load_round_trip(tmp_path):
    index = KeywordIndex.build(["café au lait", "中文 文没", "حقوق موظف", ""])
    tmp = index.write_temp(tmp_path / "x.sqlite")
    back = KeywordIndex.load(tmp)
    assert back.size == 4
    for q in (["cafe"], ["中文"], ["موظف", "lait"], ["absent"]):
        assert back.search(q, None, 10) == index.search(q, None, 10)
    assert back.search(["cafe"], None, 10)[0][0] == 0


# -- inside the SQLite store ---------------------------------------------------------------
def _corpus(n: int, seed: int = 1) -> tuple[list[Chunk], np.ndarray]:
    rng = random.Random(seed)
    # "3.5" and "o'neil" are one stored term each but two FTS5 tokens: document lengths must
    # be counted FTS5's way for the scores to agree
    vocab = [f"w{i}x" for i in range(800)] + ["café", "cafe", "naïve", "3.5", "o'neil", "12,5"]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    chunks = []
    for i in range(n):
        text = " ".join(rng.choices(vocab, weights, k=rng.randint(3, 50)))
        chunks.append(Chunk(
            id=f"c{i}", doc_id=f"d{i}", text=text, title="", position=0, tenant="a" if i % 3 else "b",
            lang="en" if i % 5 else "es", draft=(i % 17 == 0),
            effective_from=date(2026, 1, 1) if i % 11 == 0 else None))
    vec = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return chunks, vec / np.linalg.norm(vec, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("kw")
    chunks, vec = _corpus(1500)
    fts = SQLiteStore(d / "fts.sqlite", keyword_index_min_chunks=0)
    idx = SQLiteStore(d / "idx.sqlite", keyword_index_min_chunks=100)
    for s in (fts, idx):
        with s.new_version(dim=DIM) as w:
            w.add(chunks, vec)
    yield fts, idx, chunks
    fts.close()
    idx.close()


def test_the_store_uses_the_index_above_its_threshold_and_agrees_with_fts5(pair):
    fts, idx, chunks = pair
    rng = random.Random(7)
    vocab = sorted({w for c in chunks for w in c.text.split() if w.isalnum()})  # FTS5 reads "3.5" as a phrase
    same = 0
    filters = [SearchFilters(tenant="a", as_of=DAY), SearchFilters(tenant="b", as_of=DAY),
               SearchFilters(tenant="a", as_of=DAY, include_drafts=True), SearchFilters(tenant="a", as_of=date(2026, 6, 1)),
               SearchFilters(tenant="a", as_of=DAY, langs=("es",))]
    for _ in range(200):
        q = rng.sample(vocab, rng.randint(1, 5))
        f = rng.choice(filters)
        a, b = fts.keyword_search(q, f, 10), idx.keyword_search(q, f, 10)
        assert a.plan == "fts5" and b.plan == "index"
        da = dict(a)
        for cid, s in b:
            if cid in da:
                assert s == pytest.approx(da[cid], rel=1e-5)
        same += [c for c, _ in a] == [c for c, _ in b]
        by_id = {c.id: c for c in chunks}
        for cid, _ in b:  # the filters hold
            c = by_id[cid]
            assert c.tenant == f.tenant
            assert f.include_drafts or not c.draft
            assert c.effective_from is None or c.effective_from <= f.as_of
            assert f.langs is None or c.lang in f.langs
    # the rest differ only where two chunks tie on the tenth place (float32 weights)
    assert same >= 190, same


def test_diacritics_fold_as_in_fts5(pair):
    fts, idx, _ = pair
    f = SearchFilters(tenant="a", as_of=DAY, include_drafts=True)
    assert {c for c, _ in idx.keyword_search(["cafe"], f, 2000)} == {c for c, _ in fts.keyword_search(["cafe"], f, 2000)}
    assert {c for c, _ in idx.keyword_search(["café"], f, 2000)} == {c for c, _ in idx.keyword_search(["cafe"], f, 2000)}


def test_index_file_per_version_loaded_rebuilt_and_pruned(tmp_path):
    chunks, vec = _corpus(300)
    store = SQLiteStore(tmp_path / "s.sqlite", keep_versions=1, keyword_index_min_chunks=100)
    with store.new_version(dim=DIM) as w:
        w.add(chunks, vec)
    files = index_files(tmp_path / "s.sqlite", SUFFIX)
    assert len(files) == 1
    (path, (vid, h)), = files.items()
    v = store.current_version()
    assert vid == v.id and v.hash.startswith(h)
    f = SearchFilters(tenant="a", as_of=DAY)
    want = store.keyword_search(["w3x", "w9x"], f, 10)
    # a fresh process loads the file
    again = SQLiteStore(tmp_path / "s.sqlite", keyword_index_min_chunks=100)
    assert again.keyword_search(["w3x", "w9x"], f, 10) == want
    # missing: rebuilt from the stored terms, same results, file back in place
    path.unlink()
    third = SQLiteStore(tmp_path / "s.sqlite", keyword_index_min_chunks=100)
    assert third.keyword_search(["w3x", "w9x"], f, 10) == want
    assert path.exists()
    # damaged: rebuilt, not trusted
    path.write_bytes(b"not an npz")
    fourth = SQLiteStore(tmp_path / "s.sqlite", keyword_index_min_chunks=100)
    assert fourth.keyword_search(["w3x", "w9x"], f, 10) == want
    # a new version replaces it; the old version's file goes with the old version
    with store.new_version(dim=DIM) as w:
        w.add(chunks[:200], vec[:200])
    files2 = index_files(tmp_path / "s.sqlite", SUFFIX)
    assert len(files2) == 1 and path not in files2
    assert again.keyword_search(["w3x"], f, 500) == store.keyword_search(["w3x"], f, 500)
    assert all(int(c[1:]) < 200 for c, _ in again.keyword_search(["w3x"], f, 500))


def test_below_the_threshold_no_file_and_fts5(tmp_path):
    chunks, vec = _corpus(50)
    store = SQLiteStore(tmp_path / "s.sqlite", keyword_index_min_chunks=100)
    with store.new_version(dim=DIM) as w:
        w.add(chunks, vec)
    assert not index_files(tmp_path / "s.sqlite", SUFFIX)
    assert store.keyword_search(["w1x"], SearchFilters(tenant="a", as_of=DAY), 5).plan == "fts5"


def test_a_failed_ingest_leaves_no_index_file(tmp_path, monkeypatch):
    chunks, vec = _corpus(200)
    store = SQLiteStore(tmp_path / "s.sqlite", keyword_index_min_chunks=100)

    def boom(*a):  # fails inside the write transaction, after the index was built and renamed
        raise RuntimeError("disk full")

    monkeypatch.setattr(store, "_drop_old", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        with store.new_version(dim=DIM) as w:
            w.add(chunks, vec)
    assert w.build_times.get("keyword_index_build_s") is not None
    assert not list(tmp_path.glob("*.kw*"))
    assert store.current_version() is None


class TestSQLiteStoreWithKeywordIndex(StoreSuite):
    """The whole shared store suite again, with every version above the keyword-index threshold."""

    @pytest.fixture
    def make_store(self, tmp_path):
        n = iter(range(1000))

        def make():
            return SQLiteStore(tmp_path / "store.sqlite", keyword_index_min_chunks=1)

        def fresh():
            return SQLiteStore(tmp_path / f"fresh{next(n)}.sqlite", keyword_index_min_chunks=1)

        make.fresh = fresh
        return make
