"""PostgreSQL dense search from the graph held in the search process (vouched.store.pg_dense, plan "graph").

A real PostgreSQL + pgvector (tests/conftest.py `postgres_dsn`). The graph plan is checked against
the exact scan of the same version: with ef_search above the corpus size the walk reaches every
row, so the two must return the same ids and the same float32 scores; with a small max_fetch the
fallbacks (tenant share, dates, drafts) are forced.
"""

from __future__ import annotations

import random
import threading
import uuid
from datetime import date, timedelta

import numpy as np
import pytest

from tests.store.suite import EMB, TODAY, StoreSuite, ck, write
from vouched.errors import StoreError
from vouched.store import pg_dense
from vouched.store.ann import AnnParams
from vouched.store.postgres import PostgresStore
from vouched.store.rowfilter import FilterColumns
from vouched.types import SearchFilters

EXACT = 1_000_000  # exact_below: every version searched by the exact scan (in the server, with scan_in_process=False)
WIDE = AnnParams(ef_search=1024)  # walks the whole of these small graphs


@pytest.fixture
def pg(postgres_dsn, monkeypatch):
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    stores: list[PostgresStore] = []

    def make(schema: str | None = None, **kw) -> PostgresStore:
        kw.setdefault("exact_below", 0)
        s = PostgresStore(postgres_dsn, schema=schema or "g_" + uuid.uuid4().hex[:12], pool_size=4, **kw)
        stores.append(s)
        return s

    yield make
    for s in stores:
        s.close()


class TestPostgresStoreGraphPlan(StoreSuite):
    """The whole shared Store suite with every dense search on the process graph."""

    @pytest.fixture
    def make_store(self, pg):
        schema = "g_" + uuid.uuid4().hex[:12]

        def make():
            return pg(schema, ann_params=WIDE)

        make.fresh = lambda: pg(ann_params=WIDE)
        return make


WORDS = "harbour lantern keeper quay tide beacon signal rope anchor mast gull fog bell chart compass storm".split()


def corpus(seed: int, n: int, *, tenants=("default",), drafts: float = 0.0, dated: float = 0.0, langs=("en",)):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kw = {"tenant": rng.choice(tenants), "lang": rng.choice(langs)}
        if rng.random() < drafts:
            kw["draft"] = True
        if rng.random() < dated:  # out of force on TODAY
            kw["effective_to"] = date(2024, 1, 1) - timedelta(days=rng.randint(0, 500))
        out.append(ck(f"d{i}#0", " ".join(rng.choices(WORDS, k=8)) + f" item {i}", **kw))
    return out


def ids(hits):
    return [i for i, _ in hits]


def same(graph, exact):
    assert ids(graph) == ids(exact)
    assert [s for _, s in graph] == pytest.approx([s for _, s in exact], abs=1e-9)  # both from the float32 rows


def test_a_process_version_has_its_graph_in_the_database_and_no_pgvector_index(pg):
    s = pg(ann_params=WIDE)
    write(s, corpus(1, 300))
    vid = s.current_version().id
    with s._conn() as conn:
        assert conn.execute("SELECT ann_type FROM corpus_versions WHERE id = %s", (vid,)).fetchone()[0] == "process"
        assert conn.execute("SELECT count(*) FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
                            (s.schema, f"chunks_v{vid}_hnsw")).fetchone()[0] == 0
        names = {r[0] for r in conn.execute("SELECT DISTINCT name FROM dense_blobs WHERE version_id = %s", (vid,))}
        assert names == {"graph", "rowids", *FilterColumns.BLOBS}
        g = pg_dense.load(conn, vid, EMB.dim, WIDE)
        rowids = [r[0] for r in conn.execute("SELECT rowid FROM chunks WHERE version_id = %s ORDER BY rowid", (vid,))]
    assert g.size == 300 and sorted(g.rowids.tolist()) == rowids and g.tenants == {"default": 300}


@pytest.mark.parametrize("limit", [1, 5, 100])
def test_the_graph_plan_returns_the_exact_scans_list(pg, limit):
    schema = "g_" + uuid.uuid4().hex[:12]
    s, exact = pg(schema, ann_params=WIDE), pg(schema, exact_below=EXACT, scan_in_process=False)
    write(s, corpus(2, 400))
    for text in ("harbour lantern", "storm over the quay", "item 17", "compass chart fog"):
        q = EMB.embed_queries([text])[0]
        got, ref = s.dense_search(q, TODAY, limit), exact.dense_search(q, TODAY, limit)
        assert got.plan == "graph" and ref.plan == "exact"
        same(got, ref)


def test_a_tenant_with_few_rows_is_scanned_exactly_and_an_unknown_one_finds_nothing(pg):
    schema = "g_" + uuid.uuid4().hex[:12]
    params = AnnParams(ef_search=1024, exact_max_rows=50)
    s, exact = pg(schema, ann_params=params), pg(schema, exact_below=EXACT, scan_in_process=False)
    chunks = corpus(3, 400) + [ck(f"t{i}#0", f"small tenant note {i} about the harbour", tenant="small") for i in range(30)]
    write(s, chunks)
    q = EMB.embed_queries(["harbour note"])[0]
    small = SearchFilters(tenant="small", as_of=TODAY.as_of)
    got = s.dense_search(q, small, 10)
    assert got.plan == "exact" and set(ids(got)) <= {c.id for c in chunks if c.tenant == "small"}
    same(got, exact.dense_search(q, small, 10))
    big = s.dense_search(q, TODAY, 10)  # 400 of 430 rows: the graph, over-fetched for the other tenant's share
    assert big.plan == "graph" and not set(ids(big)) & {c.id for c in chunks if c.tenant == "small"}
    same(big, exact.dense_search(q, TODAY, 10))
    assert list(s.dense_search(q, SearchFilters(tenant="nobody"), 10)) == []


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_dates_drafts_languages_and_tenants_apply_inside_the_walk(pg, seed):
    schema = "g_" + uuid.uuid4().hex[:12]
    s = pg(schema, ann_params=AnnParams(ef_search=1024, max_fetch=400, exact_max_rows=10))
    exact = pg(schema, exact_below=EXACT, scan_in_process=False)
    write(s, corpus(seed, 500, tenants=("default", "b"), drafts=0.3, dated=0.3, langs=("en", "fa", "zh")))
    rng = random.Random(seed)
    plans = set()
    sent: list[str] = []
    filters = (TODAY, SearchFilters(tenant="b", as_of=TODAY.as_of, include_drafts=True), SearchFilters(any_time=True),
               SearchFilters(as_of=TODAY.as_of, langs=("fa", "zh")), SearchFilters(langs=()))
    for _ in range(6):
        q = EMB.embed_queries([" ".join(rng.choices(WORDS, k=3))])[0]
        for limit in (3, 40, 150):
            for f in filters:
                got, ref = s.dense_search(q, f, limit), exact.dense_search(q, f, limit)
                plans.add(got.plan)
                same(got, ref)
    assert plans == {"graph", "exact"}  # both paths were taken (150 of ~90 allowed rows: the exact scan)
    # one statement per graph search: the walk returns only allowed rows, so no second round
    with s._conn() as conn:
        real = conn.execute

        def counting(query, *a, **k):
            sent.append(str(query))
            return real(query, *a, **k)

        conn.execute = counting
        graph = s._dense_graph(conn, s.current_version().id, EMB.dim)
        from vouched.store.pg_dense import search
        from vouched.store.postgres import _vec_text

        q = EMB.embed_queries(["harbour"])[0]
        where, args = s._filter_sql(TODAY)
        vid = s.current_version().id
        hits = search(conn, graph, q, _vec_text(q), EMB.dim, f"c.version_id = {vid} AND c.vec IS NOT NULL{where}", args, 40, TODAY)
    assert hits.plan == "graph" and len(hits) == 40 and len(sent) == 1


@pytest.mark.parametrize("seed", [21, 22])
def test_a_small_version_is_scanned_in_process_with_the_servers_list(pg, monkeypatch, seed):
    """exact_below: the float16 copies are scanned in process, one statement rescoring the best;
    the list (ids, order, float32 scores) is the server scan's, for every filter and limit."""
    schema = "g_" + uuid.uuid4().hex[:12]
    s = pg(schema, exact_below=EXACT)
    server = pg(schema, exact_below=EXACT, scan_in_process=False)
    write(s, corpus(seed, 600, tenants=("default", "b"), drafts=0.2, dated=0.2, langs=("en", "fa")))
    with s._conn() as conn:  # a version of at most exact_below rows gets the float16 copies, no graph
        assert not s._dense_graph(conn, s.current_version().id, EMB.dim).ann.walkable
    scans: list[object] = []
    real = pg_dense.scan
    monkeypatch.setattr(pg_dense, "scan", lambda *a, **k: scans.append(got := real(*a, **k)) or got)
    rng = random.Random(seed)
    filters = (TODAY, SearchFilters(tenant="b", as_of=TODAY.as_of, include_drafts=True), SearchFilters(any_time=True),
               SearchFilters(as_of=TODAY.as_of, langs=("fa",)), SearchFilters(tenant="nobody"))
    for _ in range(5):
        q = EMB.embed_queries([" ".join(rng.choices(WORDS, k=3))])[0]
        for limit in (1, 7, 100, 700):
            for f in filters:
                got, ref = s.dense_search(q, f, limit), server.dense_search(q, f, limit)
                assert got.plan == ref.plan == "exact"
                same(got, ref)
    assert len(scans) == 5 * 4 * (len(filters) - 1)  # not for a tenant with no rows
    assert sum(x is not None for x in scans) > 0.9 * len(scans)


def test_the_scan_gives_way_to_the_server_when_float16_cannot_decide(pg):
    """Rows within the float16 error of each other across the cut (duplicates), and a query that
    is not of unit length (its float16 and float32 scores disagree), are left to the server."""
    from vouched.store.postgres import _vec_text

    s = pg(exact_below=EXACT)
    chunks = corpus(23, 200) + [ck(f"dup{i}#0", "lantern keeper harbour tide") for i in range(40)]
    write(s, chunks)
    vid = s.current_version().id
    where, args = s._filter_sql(TODAY)
    w = f"c.version_id = {vid} AND c.vec IS NOT NULL{where}"
    with s._conn() as conn:
        graph = s._dense_graph(conn, vid, EMB.dim)
        q = EMB.embed_queries(["lantern keeper harbour tide"])[0]
        assert pg_dense.scan(conn, graph, q, _vec_text(q), EMB.dim, w, args, 10, TODAY) is None  # 40 ties at the top
        assert len(pg_dense.scan(conn, graph, q, _vec_text(q), EMB.dim, w, args, 60, TODAY)) == 60  # past them
        other = EMB.embed_queries(["compass chart"])[0]
        assert len(pg_dense.scan(conn, graph, other, _vec_text(other), EMB.dim, w, args, 5, TODAY)) == 5
        assert pg_dense.scan(conn, graph, 2 * other, _vec_text(2 * other), EMB.dim, w, args, 5, TODAY) is None
    assert ids(s.dense_search(q, TODAY, 10)) == ids(pg(s.schema, exact_below=EXACT, scan_in_process=False).dense_search(q, TODAY, 10))


def test_filter_columns_mask_matches_the_sql_filters():
    from vouched.store.rowfilter import FilterColumns

    day = TODAY.as_of
    rows = [("a", "en", False, None, None, None), ("a", "fa", True, None, None, None),
            ("b", "en", False, None, None, None), ("a", "en", False, day + timedelta(days=1), None, None),
            ("a", "en", False, None, day - timedelta(days=1), None), ("a", "en", False, None, None, day),
            ("a", "en", False, day.isoformat(), day.isoformat(), (day + timedelta(days=1)).isoformat())]
    cols = FilterColumns.build(rows, len(rows))
    assert cols.mask(SearchFilters(tenant="a", as_of=day)).tolist() == [1, 0, 0, 0, 0, 0, 1]
    assert cols.mask(SearchFilters(tenant="a", as_of=day, include_drafts=True, langs=("fa",))).tolist() == [0, 1, 0, 0, 0, 0, 0]
    assert cols.mask(SearchFilters(tenant="a", any_time=True)).tolist() == [1, 0, 0, 1, 1, 1, 1]
    assert not cols.mask(SearchFilters(tenant="c")).any() and not cols.mask(SearchFilters(tenant="a", langs=())).any()
    back = FilterColumns.from_blobs(cols.to_blobs(), len(rows))
    for f in (SearchFilters(tenant="a", as_of=day), SearchFilters(tenant="b", any_time=True, include_drafts=True)):
        assert back.mask(f).tolist() == cols.mask(f).tolist()
    with pytest.raises(ValueError, match="rows"):
        FilterColumns.from_blobs(cols.to_blobs(), len(rows) + 1)


def test_the_graph_follows_version_switches_and_dropped_versions_lose_their_blobs(pg):
    schema = "g_" + uuid.uuid4().hex[:12]
    reader, writer = pg(schema, ann_params=WIDE), pg(schema, keep_versions=2)
    v1 = write(writer, corpus(7, 200))
    q = EMB.embed_queries(["lantern keeper"])[0]
    assert set(ids(reader.dense_search(q, TODAY, 300))) == {f"d{i}#0" for i in range(200)}
    write(writer, [ck(f"n{i}#0", f"new lantern {i}") for i in range(50)])
    assert set(ids(reader.dense_search(q, TODAY, 300))) == {f"n{i}#0" for i in range(50)}  # the new graph, loaded
    writer.switch_to(v1.id)
    assert len(reader.dense_search(q, TODAY, 300)) == 200
    write(writer, corpus(8, 60))  # v2 is dropped (keep 2: v1 was current before)
    with reader._conn() as conn:
        live = {r[0] for r in conn.execute("SELECT id FROM corpus_versions")}
        blobs = {r[0] for r in conn.execute("SELECT DISTINCT version_id FROM dense_blobs")}
    assert blobs == live and len(live) == 2


def test_a_failed_write_stops_the_graph_thread_and_the_old_version_serves(pg, monkeypatch):
    s = pg(ann_params=WIDE)
    write(s, corpus(9, 100))
    before = s.current_version()

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr("vouched.store.pg_keyword.write", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        write(s, corpus(10, 30_000))
    assert not [t for t in threading.enumerate() if t.name == "vouched-dense-graph"]
    assert s.current_version() == before
    assert len(s.dense_search(EMB.embed_queries(["rope"])[0], TODAY, 5)) == 5


def test_the_build_reports_progress_to_the_end(pg):
    s = pg()
    seen: list[tuple[int, int]] = []
    s.on_index_progress = lambda done, total: seen.append((done, total))
    vids = write(s, corpus(11, 25_000))
    assert seen and seen[-1] == (25_000, 25_000) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert vids.chunk_count == 25_000


def test_a_process_store_reads_a_server_version_and_back(pg):
    schema = "g_" + uuid.uuid4().hex[:12]
    server, process = pg(schema, dense_graph="server"), pg(schema, ann_params=WIDE)
    write(server, corpus(12, 300))
    q = EMB.embed_queries(["beacon"])[0]
    assert process.dense_search(q, TODAY, 5).plan == "hnsw"
    write(process, corpus(13, 300))
    assert server.dense_search(q, TODAY, 5).plan == "graph"


def test_dense_graph_is_checked(postgres_dsn):
    with pytest.raises(StoreError, match="dense_graph"):
        PostgresStore(postgres_dsn, dense_graph="gpu")


def test_config_reaches_the_store(tmp_path):
    from vouched.config import Config
    from vouched.store import make_store

    cfg = Config.model_validate({"store": {"backend": "postgres", "dsn": "postgresql://u@127.0.0.1/x",
                                           "pg_dense_graph": "server", "ann_ef_search": 300}})
    st = make_store(cfg)
    assert st.dense_graph == "server" and st.ann_params.ef_search == 300
    with pytest.raises(ValueError, match="pg_dense_graph"):
        Config.model_validate({"store": {"pg_dense_graph": "disk"}})


def test_a_graph_blob_that_does_not_fit_its_rows_is_refused(pg):
    s = pg()
    vid = write(s, corpus(14, 50)).id
    with s._conn() as conn:
        conn.execute("UPDATE dense_blobs SET data = substring(data from 1 for 8) WHERE version_id = %s AND name = 'rowids'", (vid,))
        with pytest.raises(ValueError, match="dense_blobs"):
            pg_dense.load(conn, vid, EMB.dim, AnnParams())


def test_build_and_serialise_round_trip_without_a_server():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((500, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    cols = FilterColumns.build([("a" if i < 400 else "b", "en", False, None, None, None) for i in range(500)], 500)
    g = pg_dense.build(x, range(1000, 1500), cols, AnnParams(ef_search=600))
    assert g.tenants == {"a": 400, "b": 100} and g.ann.dim == 32
    from vouched.store.ann import AnnIndex

    back = AnnIndex.from_bytes(g.ann.to_bytes(), g.ann.params)
    for q in x[:20]:
        assert back.search(q, 10).tolist() == g.ann.search(q, 10).tolist()
    exact = np.argsort(-(x @ x[3]))[:10]
    assert sorted(g.ann.search(x[3], 10).tolist()) == sorted(exact.tolist())
