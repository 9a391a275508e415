"""The SQLite store's ANN path: forced on with a tiny threshold, checked against exact search."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.suite import StoreSuite
from vouched.store import SQLiteStore
from vouched.store.ann import AnnIndex, AnnParams, index_files, index_path, plan_dense, prune_index_files
from vouched.types import Chunk, SearchFilters

DIM = 48
DAY = date(2025, 6, 1)
# exact_max_rows=0: every filtered query that CAN go through the graph does, so the tests see the ANN path.
FORCE = AnnParams(m=16, ef_construction=100, ef_search=64, threads=1, exact_max_rows=0)


# -- the plan: pure ------------------------------------------------------------------------
@given(st.integers(1, 2_000_000), st.integers(0, 2_000_000), st.integers(0, 500),
       st.integers(0, 50_000), st.floats(1.0, 8.0), st.integers(1, 20_000))
def test_plan_dense_properties(n_total, n_allowed, limit, exact_max, overfetch, max_fetch):
    n_allowed = min(n_allowed, n_total)
    p = plan_dense(n_total, n_allowed, limit, exact_max_rows=exact_max, overfetch=overfetch, max_fetch=max_fetch)
    if limit == 0 or n_allowed == 0:
        assert p.how == "none"
    elif n_allowed == n_total:
        assert p.how == "ann" and p.fetch == min(limit, n_total)
    elif n_allowed <= exact_max:
        assert p.how == "exact"
    elif p.how == "ann":
        # enough candidates expected to pass the filter, and never more than the cap
        assert p.fetch * n_allowed / n_total >= limit * overfetch - 1e-6
        assert limit <= p.fetch <= max_fetch and p.fetch < n_total
    else:
        assert p.how == "exact"
        assert limit * overfetch * n_total / n_allowed > max_fetch or limit * overfetch * n_total / n_allowed >= n_total - 1


def test_plan_dense_examples():
    assert plan_dense(1_000_000, 1_000_000, 100).how == "ann"
    assert plan_dense(1_000_000, 500_000, 100) == type(plan_dense(1, 1, 1))("ann", 400)
    assert plan_dense(1_000_000, 15_000, 100).how == "exact"  # few allowed rows: exact is cheap
    assert plan_dense(1_000_000, 30_000, 100).how == "exact"  # 1 in 33 pass: fetch 6,667 > cap


# -- files ---------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**9), st.text("0123456789abcdef", min_size=16, max_size=64))
def test_index_path_round_trips_through_index_files(tmp_path_factory, vid, h):
    d = tmp_path_factory.mktemp("names")
    db = d / "store[1].sqlite"  # glob characters in the name must not confuse the listing
    p = index_path(db, vid, h)
    p.write_bytes(b"x")
    assert index_files(db) == {p: (vid, h[:16])}


def test_index_path_rejects_a_non_hash():
    from vouched.errors import StoreError

    with pytest.raises(StoreError):
        index_path(__import__("pathlib").Path("/tmp/x.sqlite"), 1, "../../etc/passwd")


def test_prune_keeps_live_versions_and_foreign_files(tmp_path):
    db = tmp_path / "s.sqlite"
    a, b, c = (index_path(db, i, f"{i:x}" * 16) for i in (1, 2, 3))
    other = tmp_path / "other.sqlite.v1-aaaaaaaaaaaaaaaa.ann"
    for p in (a, b, c, other):
        p.write_bytes(b"x")
    gone = prune_index_files(db, [(2, "2" * 64), (3, "3" * 64)])
    assert gone == [a] and not a.exists() and b.exists() and c.exists() and other.exists()


def test_ann_index_save_load_and_search_is_near_exact(tmp_path):
    rng = np.random.default_rng(3)
    x = _unit(rng.standard_normal((600, DIM)))
    ann = AnnIndex.build(x, FORCE)
    path = tmp_path / "i.ann"
    ann.save(path)
    assert not list(tmp_path.glob("*.tmp"))
    again = AnnIndex.load(path, FORCE)
    assert (again.size, again.dim) == (600, DIM)
    q = x[17]
    assert again.search(q, 1)[0] == 17  # a stored vector finds itself


# -- the store, ANN path forced --------------------------------------------------------------
def _unit(a):
    a = np.asarray(a, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def _corpus(n=400, seed=0):
    """Chunks spread over tenants, languages, drafts, validity dates and supersession."""
    rng = np.random.default_rng(seed)
    centres = _unit(rng.standard_normal((20, DIM)))
    vecs = _unit(centres[rng.integers(0, 20, n)] + 0.35 * rng.standard_normal((n, DIM)))
    langs = ["en", "fa", "es", "zh", "hi"]
    chunks = []
    for i in range(n):
        kw = {}
        if i % 7 == 0:
            kw["draft"] = True
        if i % 11 == 0:
            kw["effective_to"] = date(2023, 12, 31)
        if i % 13 == 0:
            kw["effective_from"] = date(2026, 1, 1)
        if i == 5:
            kw["supersedes"] = "d6"  # d6 is superseded from always
        chunks.append(Chunk(id=f"d{i}#0", doc_id=f"d{i}", text=f"passage {i}", lang=langs[i % 5],
                            tenant="two" if i % 4 == 3 else "default", **kw))
    return chunks, vecs


def _write(store, chunks, vecs):
    with store.new_version(embedding_model="test", dim=DIM) as w:
        w.add(chunks, vecs)
    return w.version


@pytest.fixture
def pair(tmp_path):
    chunks, vecs = _corpus()
    ann = SQLiteStore(tmp_path / "ann.sqlite", ann_min_chunks=50, ann_params=FORCE)
    exact = SQLiteStore(tmp_path / "exact.sqlite", ann_min_chunks=0)
    _write(ann, chunks, vecs)
    _write(exact, chunks, vecs)
    return ann, exact, chunks, vecs


FILTERS = [
    SearchFilters(as_of=DAY),
    SearchFilters(as_of=DAY, include_drafts=True),
    SearchFilters(as_of=date(2023, 6, 1)),
    SearchFilters(as_of=date(2026, 6, 1), langs=("fa", "zh")),
    SearchFilters(tenant="two", as_of=DAY),
    SearchFilters(as_of=DAY, langs=("hi",)),
]


def _allowed(c: Chunk, f: SearchFilters) -> bool:
    day = f.as_of
    return (c.tenant == f.tenant and (f.langs is None or c.lang in f.langs) and (f.include_drafts or not c.draft)
            and (c.effective_from is None or c.effective_from <= day) and (c.effective_to is None or c.effective_to >= day)
            and not (c.doc_id == "d6" and c.tenant == "default"))


def test_scan_is_the_exhaustive_top_k_of_the_stored_copies_and_keeps_to_the_bitmap_with_or_without_a_graph():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3000, 48)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    for fp16, flat in ((False, False), (True, False), (False, True), (True, True)):
        p = AnnParams(m=8, ef_construction=40)
        idx = AnnIndex.build_flat(x, p, fp16=fp16) if flat else AnnIndex.build(x, p, fp16=fp16)
        assert idx.walkable is not flat
        idx = AnnIndex.from_bytes(idx.to_bytes(), p)  # as a reader gets it
        assert idx.walkable is not flat
        stored = x.astype(np.float16).astype(np.float32) if fp16 else x
        for _ in range(5):
            q = x[rng.integers(3000)] + 0.1 * rng.standard_normal(48).astype(np.float32)
            mask = rng.random(3000) < 0.3
            scores, rows = idx.scan(q, 50, allowed=np.packbits(mask, bitorder="little"))
            ref = stored @ q
            want = np.argsort(-np.where(mask, ref, -np.inf), kind="stable")[:50]
            assert mask[rows].all() and len(rows) == 50
            assert np.allclose(scores, ref[rows], atol=1e-5) and np.allclose(np.sort(ref[want])[::-1], scores, atol=1e-5)
            scores_all, rows_all = idx.scan(q, 3000)
            assert len(rows_all) == 3000 and (np.diff(scores_all) <= 1e-6).all()
            if flat:  # no graph: search is the scan
                assert idx.search(q, 50, allowed=np.packbits(mask, bitorder="little")).tolist() == rows.tolist()


def test_ann_file_is_written_beside_the_database_named_by_version(pair, tmp_path):
    ann, exact, *_ = pair
    v = ann.current_version()
    assert index_path(ann.path, v.id, v.hash).exists()
    assert not list(tmp_path.glob("*.tmp")) and not index_files(exact.path)


@pytest.mark.parametrize("f", FILTERS, ids=lambda f: f"{f.tenant}-{f.as_of}-{f.langs}-{f.include_drafts}")
def test_ann_agrees_with_exact_and_respects_filters(pair, f):
    ann, exact, chunks, vecs = pair
    rng = np.random.default_rng(7)
    by_id = {c.id: c for c in chunks}
    allowed = {c.id for c in chunks if _allowed(c, f)}
    recalls, plans = [], set()
    for _ in range(25):
        q = _unit([vecs[rng.integers(0, len(vecs))] + 0.2 * rng.standard_normal(DIM)])[0]
        got = ann.dense_search(q, f, 10)
        plans.add(got.plan)
        ref = exact.dense_search(q, f, 10)
        assert ref.plan in ("exact", "none")
        assert len(got) == len(ref) == min(10, len(allowed))
        assert {i for i, _ in got} <= allowed
        assert all(_allowed(by_id[i], f) for i, _ in got)
        # scores are exact cosines, whichever way the rows were found, and come best first
        ref_all = dict(exact.dense_search(q, f, len(chunks)))
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        assert np.allclose([s for _, s in got], [ref_all[i] for i, _ in got], atol=1e-5)
        recalls.append(len({i for i, _ in got} & {i for i, _ in ref}) / len(ref))
    assert np.mean(recalls) >= 0.95
    assert plans & {"ann", "ann+exact"}, plans  # the graph really was used


def test_selective_filter_falls_back_to_exact_search(tmp_path):
    chunks, vecs = _corpus()
    store = SQLiteStore(tmp_path / "s.sqlite", ann_min_chunks=50, ann_params=AnnParams(threads=1, max_fetch=64, exact_max_rows=0))
    ref = SQLiteStore(tmp_path / "r.sqlite", ann_min_chunks=0)
    _write(store, chunks, vecs)
    _write(ref, chunks, vecs)
    f = SearchFilters(tenant="two", langs=("hi",), as_of=DAY)  # a handful of rows out of 400
    q = vecs[3]
    hits = store.dense_search(q, f, 10)
    assert hits == ref.dense_search(q, f, 10)
    assert hits.plan == "exact"
    assert store.dense_search(q, SearchFilters(as_of=DAY), 10).plan == "ann"


def test_new_version_gets_its_own_index_and_old_ones_are_pruned(tmp_path):
    chunks, vecs = _corpus()
    writer = SQLiteStore(tmp_path / "s.sqlite", keep_versions=2, ann_min_chunks=50, ann_params=FORCE)
    reader = SQLiteStore(tmp_path / "s.sqlite", keep_versions=2, ann_min_chunks=50, ann_params=FORCE)
    v1 = _write(writer, chunks, vecs)
    f = SearchFilters(as_of=DAY, include_drafts=True)
    # version 2: same ids, the vectors shuffled — a reader still on v1's index would answer v1's row
    perm = np.random.default_rng(1).permutation(len(chunks))
    pos = np.argsort(perm)  # vecs[i] belongs to chunks[pos[i]] in version 2
    i = next(i for i in range(len(chunks)) if _allowed(chunks[i], f) and _allowed(chunks[pos[i]], f) and pos[i] != i)
    q = vecs[i]
    assert reader.dense_search(q, f, 1)[0][0] == chunks[i].id
    v2 = _write(writer, chunks, vecs[perm])
    hits = reader.dense_search(q, f, 1)
    assert hits[0][0] == chunks[pos[i]].id
    assert hits.plan == "ann"
    files = index_files(writer.path)
    assert set(files.values()) == {(v1.id, v1.hash[:16]), (v2.id, v2.hash[:16])}
    v3 = _write(writer, chunks[:100], vecs[:100])
    assert set(index_files(writer.path).values()) == {(v2.id, v2.hash[:16]), (v3.id, v3.hash[:16])}


def test_below_threshold_no_index_and_failed_write_leaves_no_file(tmp_path):
    chunks, vecs = _corpus()
    store = SQLiteStore(tmp_path / "s.sqlite", ann_min_chunks=500, ann_params=FORCE)
    _write(store, chunks, vecs)  # 400 < 500
    assert not index_files(store.path)
    assert store.dense_search(vecs[0], SearchFilters(as_of=DAY), 5).plan == "exact"
    store2 = SQLiteStore(tmp_path / "s.sqlite", ann_min_chunks=50, ann_params=FORCE)
    with pytest.raises(RuntimeError):
        with store2.new_version(embedding_model="test", dim=DIM) as w:
            w.add(chunks, vecs)
            raise RuntimeError("ingest failed")
    assert not index_files(store.path) and not list(tmp_path.glob("*.tmp"))


def test_failed_commit_removes_the_renamed_index(tmp_path, monkeypatch):
    chunks, vecs = _corpus()
    store = SQLiteStore(tmp_path / "s.sqlite", ann_min_chunks=50, ann_params=FORCE)
    real = store._drop_old

    def boom(db, vid, *rest):
        real(db, vid, *rest)
        raise OSError("disk full")

    monkeypatch.setattr(store, "_drop_old", boom)
    with pytest.raises(OSError):
        _write(store, chunks, vecs)
    assert store.current_version() is None
    assert not index_files(store.path) and not list(tmp_path.glob("*.tmp"))


def test_missing_or_wrong_index_is_rebuilt_by_the_reader(tmp_path):
    chunks, vecs = _corpus()
    small = SQLiteStore(tmp_path / "s.sqlite", ann_min_chunks=1000)
    v = _write(small, chunks, vecs)  # written with no index
    path = index_path(small.path, v.id, v.hash)
    assert not path.exists()
    big = SQLiteStore(tmp_path / "s.sqlite", ann_min_chunks=50, ann_params=FORCE)
    assert big.dense_search(vecs[1], SearchFilters(as_of=DAY), 3).plan == "ann" and path.exists()
    # an index of the wrong size under this version's name is not trusted
    AnnIndex.build(vecs[:60], FORCE).save(path)
    again = SQLiteStore(tmp_path / "s.sqlite", ann_min_chunks=50, ann_params=FORCE)
    got = again.dense_search(vecs[300], SearchFilters(as_of=DAY, include_drafts=True), 1)
    assert AnnIndex.load(path).size == len(chunks)
    assert got[0][0] == "d300#0"


class TestSQLiteStoreWithAnn(StoreSuite):
    """The whole shared suite again, with every version above the ANN threshold."""

    @pytest.fixture
    def make_store(self, tmp_path):
        n = iter(range(1000))

        def make():
            return SQLiteStore(tmp_path / "store.sqlite", ann_min_chunks=1, ann_params=FORCE)

        def fresh():
            return SQLiteStore(tmp_path / f"fresh{next(n)}.sqlite", ann_min_chunks=1, ann_params=FORCE)

        make.fresh = fresh
        return make

