"""PostgreSQL + pgvector store: the shared Store suite, and SQLite ↔ PostgreSQL agreement.

A real PostgreSQL 18 + pgvector (tests/conftest.py `postgres_dsn`); every test gets its own
schema. Tests parametrized over `backend` run the same assertions on both stores.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.store.suite import BASE, EMB, TODAY, StoreSuite, ck, write
from vouched.errors import StoreError
from vouched.store import SQLiteStore
from vouched.store.postgres import MIGRATIONS, PostgresStore, tsquery_any
from vouched.text import analyze
from vouched.types import Chunk


def _schema() -> str:
    return "t_" + uuid.uuid4().hex[:12]


@pytest.fixture
def pg_factory(postgres_dsn, monkeypatch):
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    stores: list[PostgresStore] = []

    def make(schema: str | None = None, **kw) -> PostgresStore:
        s = PostgresStore(postgres_dsn, schema=schema or _schema(), pool_size=4, **kw)
        stores.append(s)
        return s

    yield make
    for s in stores:
        s.close()


class TestPostgresStore(StoreSuite):
    @pytest.fixture
    def make_store(self, pg_factory):
        schema = _schema()

        def make():
            return pg_factory(schema)

        make.fresh = lambda: pg_factory()
        return make


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    """A factory `(**kw) -> Store` over one fresh database of either backend."""
    if request.param == "sqlite":
        return lambda **kw: SQLiteStore(tmp_path / f"{uuid.uuid4().hex}.sqlite", **kw)
    return request.getfixturevalue("pg_factory")


def test_old_versions_are_dropped_beyond_keep(backend):
    s = backend(keep_versions=2)
    for i in range(4):
        write(s, [ck(f"d{i}#0", f"version {i} text words here")])
    assert [v.chunk_count for v in s.versions()] == [1, 1]
    assert [i for i, _ in s.keyword_search(["version"], TODAY, 5)] == ["d3#0"]


def test_keyword_only_chunks_are_searchable_but_not_dense(backend):
    s = backend()
    with s.new_version(embedding_model="none") as w:
        w.add([ck("k#0", "keyword only lantern chunk")], None)
    assert [i for i, _ in s.keyword_search(["lantern"], TODAY, 5)] == ["k#0"]


# -- PostgreSQL only ---------------------------------------------------------------------------

def test_migrations_are_recorded_once_and_a_newer_schema_is_refused(pg_factory, postgres_dsn):
    schema = _schema()
    a = pg_factory(schema)
    assert a.current_version() is None
    b = pg_factory(schema)  # a second process/replica starting on the same schema
    assert b.migrations() == [(v, n) for v, n, _ in MIGRATIONS]
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"INSERT INTO {schema}.schema_migrations (version, name) VALUES (999, 'from the future')")
    with pytest.raises(StoreError, match="upgrade vouched"):
        pg_factory(schema).current_version()


def test_unreachable_server_says_how_to_fix(monkeypatch):
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    s = PostgresStore(f"postgresql://postgres@127.0.0.1:{port}/postgres?connect_timeout=2")
    with pytest.raises(StoreError, match="VOUCHED_PG_DSN"):
        s.current_version()


def test_env_dsn_overrides_config(monkeypatch, postgres_dsn):
    monkeypatch.setenv("VOUCHED_PG_DSN", postgres_dsn)
    assert PostgresStore("postgresql://nobody@192.0.2.1/none").dsn == postgres_dsn
    monkeypatch.delenv("VOUCHED_PG_DSN")
    with pytest.raises(StoreError, match="dsn"):
        PostgresStore("")


@pytest.mark.parametrize("hnsw_type", ["halfvec", "vector"])
def test_dense_search_uses_the_versions_hnsw_index(pg_factory, hnsw_type):
    schema = _schema()
    s = pg_factory(schema, exact_below=0, hnsw_type=hnsw_type, dense_graph="server")
    write(s, [ck(f"n{i}#0", f"note {i} about lantern number {i}") for i in range(300)])
    vid = s.current_version().id
    q = EMB.embed_queries(["lantern 7"])[0]
    with s._conn() as conn:
        assert conn.execute("SELECT ann_type FROM corpus_versions WHERE id = %s", (vid,)).fetchone()[0] == hnsw_type
        conn.execute("SET enable_seqscan = off")  # and no sort: only an index matching the query can order
        conn.execute("SET enable_sort = off")
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT chunk_id FROM chunks c WHERE c.version_id = {vid} AND c.vec IS NOT NULL AND c.tenant = 'default' "
            f"ORDER BY c.vec::{hnsw_type}(64) <=> %s::{hnsw_type}(64) LIMIT 5", ["[" + ",".join(map(str, q)) + "]"]))
        conn.execute("RESET enable_seqscan")
        conn.execute("RESET enable_sort")
    assert f"chunks_v{vid}_hnsw" in plan
    got = s.dense_search(q, TODAY, 5)
    assert len(got) == 5 and got == sorted(got, key=lambda x: -x[1]) and got.plan == "hnsw"
    s.exact_below = 10_000  # the same version searched exactly: HNSW found the true top 5 here
    exact = s.dense_search(q, TODAY, 5)
    assert exact.plan == "exact" and [i for i, _ in exact] == [i for i, _ in got]
    assert [x for _, x in got] == pytest.approx([x for _, x in exact], abs=1e-9)  # scores from the float32 rows
    # a store configured for the other graph type (and the process graph) searches this version by the graph it has
    other = pg_factory(schema, exact_below=0, hnsw_type="vector" if hnsw_type == "halfvec" else "halfvec")
    assert other.dense_graph == "process"
    assert other.dense_search(q, TODAY, 5) == got


def test_hnsw_type_is_checked(postgres_dsn):
    with pytest.raises(StoreError, match="hnsw_type"):
        PostgresStore(postgres_dsn, hnsw_type="float16")


@given(st.integers(10, 2000), st.integers(1, 5000))
def test_dense_ef_search_grows_with_the_limit_within_pgvectors_bound(ef, limit):
    from vouched.store.postgres import EF_PER_RESULT, EF_SEARCH_MAX, dense_ef_search

    got = dense_ef_search(ef, limit)
    assert got >= ef and (got == ef or got <= EF_SEARCH_MAX)
    assert got >= min(EF_SEARCH_MAX, EF_PER_RESULT * limit)
    assert dense_ef_search(ef, limit + 1) >= got


def test_hnsw_search_with_a_raised_ef_search_returns_the_exact_list(pg_factory):
    s = pg_factory(exact_below=0, ef_search=40, dense_graph="server")
    write(s, [ck(f"m{i}#0", f"entry {i} on harbour light {i % 17}") for i in range(120)])
    q = EMB.embed_queries(["harbour light 3"])[0]
    got = s.dense_search(q, TODAY, 100)  # ef_search 400 for this query, set on the connection once
    assert len(got) == 100  # exact_below=0: the HNSW plan
    with s._conn() as conn:  # what the store believes a connection has is what the server has
        assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == str(s._conn_ef.get(conn, 40)) == "400"
    assert len(s.dense_search(q, TODAY, 5)) == 5  # back to the configured 40 for a small limit
    with s._conn() as conn:
        assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == str(s._conn_ef.get(conn, 40)) == "40"
    s.exact_below = 10_000
    assert [i for i, _ in s.dense_search(q, TODAY, 100)] == [i for i, _ in got]


@pytest.mark.parametrize("term", ["it's", "back\\slash", "a'b\\'c", "中文", "کتاب‌ها", "naïve", "x|y", "(a)", "!:*"])
def test_tsquery_quoting_matches_exact_lexemes(postgres_dsn, term):
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        hit = conn.execute("SELECT array_to_tsvector(ARRAY[%s]) @@ %s::tsquery, array_to_tsvector(ARRAY['other']) @@ %s::tsquery",
                           [term, tsquery_any([term]), tsquery_any([term])]).fetchone()
    assert hit == (True, False)


def test_killed_ingest_leaves_previous_version_serving(pg_factory, postgres_dsn):
    """SIGKILL a writer mid-COPY: the server rolls its transaction back; the previous version serves."""
    schema = _schema()
    s = pg_factory(schema)
    v1 = write(s, BASE)
    script = textwrap.dedent(f"""
        import time, numpy as np
        from vouched.store.postgres import PostgresStore
        from vouched.types import Chunk
        s = PostgresStore({postgres_dsn!r}, schema={schema!r})
        chunks = [Chunk(id=f"big{{i}}#0", doc_id=f"big{{i}}", text=f"replacement text number {{i}} lantern") for i in range(2000)]
        def progress(n):
            print("WRITING", flush=True)
            time.sleep(60)
        with s.new_version(embedding_model="hashing-64", dim=64, progress=progress) as w:
            w.add(chunks, np.ones((len(chunks), 64), dtype=np.float32) / 8)
    """)
    env = {k: v for k, v in os.environ.items() if k != "VOUCHED_PG_DSN"}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "WRITING"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close()
    cur = s.current_version()
    assert cur.id == v1.id and cur.hash == v1.hash
    assert s.keyword_search(["replacement"], TODAY, 5) == []
    v3 = write(s, [ck("after#0", "after the crash lantern keeper")])
    assert s.current_version().id == v3.id


# -- SQLite ↔ PostgreSQL agreement ------------------------------------------------------------

WORDS = {
    "en": "lighthouse keeper lantern winter repaired bread flour water salt baker policy weekly",
    "es": "faro linterna invierno pan harina agua sal panadero política semanal guardián",
    "pt": "farol lanterna inverno pão farinha água sal padeiro política semanal guarda",
    "fr": "phare lanterne hiver pain farine eau sel boulanger politique hebdomadaire gardien",
    "de": "Leuchtturm Laterne Winter Brot Mehl Wasser Salz Bäcker Richtlinie wöchentlich Wärter",
    "fa": "فانوس دریایی نگهبان زمستان نان آرد آب نمک نانوا سیاست هفتگی کتاب‌ها",
    "ar": "منارة فانوس شتاء خبز دقيق ماء ملح خباز سياسة أسبوعي حارس",
    "ru": "маяк фонарь зима хлеб мука вода соль пекарь политика еженедельно смотритель",
    "zh": "灯塔 看守人 灯笼 冬天 面包 面粉 水 盐 面包师 政策 每周",
    "hi": "प्रकाशस्तंभ रक्षक लालटेन सर्दी रोटी आटा पानी नमक बेकर नीति साप्ताहिक",
}
LANGS = sorted(WORDS)


@st.composite
def corpora(draw):
    n = draw(st.integers(1, 12))
    chunks = []
    for i in range(n):
        lang = draw(st.sampled_from(LANGS))
        words = draw(st.lists(st.sampled_from(WORDS[lang].split()), min_size=1, max_size=15))
        sep = "" if lang == "zh" and draw(st.booleans()) else " "
        chunks.append(Chunk(id=f"c{i}#0", doc_id=f"c{i}", text=sep.join(words), lang=lang,
                            tenant=draw(st.sampled_from(["default", "default", "two"]))))
    lang = draw(st.sampled_from(LANGS))
    query = " ".join(draw(st.lists(st.sampled_from(WORDS[lang].split()), min_size=1, max_size=5)))
    return chunks, query, lang


@pytest.fixture(scope="module")
def pair(tmp_path_factory, postgres_dsn):
    """One SQLite and one PostgreSQL store reused across hypothesis examples (each example writes a new version)."""
    lite = SQLiteStore(tmp_path_factory.mktemp("pair") / "s.sqlite", keep_versions=1)
    pg = PostgresStore(postgres_dsn, schema=_schema(), keep_versions=1, pool_size=2)
    yield lite, pg
    pg.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=corpora())
def test_keyword_search_agrees_with_sqlite_bm25(pair, case):
    """Same analysed terms, same BM25 (FTS5's k1, b, idf): same candidates, same scores, same order (ties aside)."""
    chunks, query, lang = case
    lite, pg = pair
    for s in (lite, pg):
        write(s, chunks)
    terms = analyze(query, lang, unique=True)
    for tenant in ("default", "two"):
        f = TODAY.__class__(tenant=tenant, as_of=TODAY.as_of)
        a, b = lite.keyword_search(terms, f, 50), pg.keyword_search(terms, f, 50)
        assert dict(b) == pytest.approx(dict(a), rel=1e-6, abs=1e-9)
        assert [s for _, s in b] == sorted((s for _, s in b), reverse=True)
        top_a, top_b = lite.keyword_search(terms, f, 3), pg.keyword_search(terms, f, 3)
        assert [round(s, 6) for _, s in top_b] == [round(s, 6) for _, s in top_a]
        ids = [i for i, _ in a]
        assert pg.get_terms(ids, tenant) == lite.get_terms(ids, tenant)


# -- migration 2: impact-scored postings, inline vectors ---------------------------------------

def _crowded() -> list[Chunk]:
    """Many best-scoring chunks a filter removes, a few weaker ones it keeps: candidates must widen."""
    out = [ck(f"hot{i}#0", "lantern lantern lantern keeper " + "word " * (i % 7)) for i in range(300)]
    out += [ck(f"draft{i}#0", "lantern lantern keeper", draft=True) for i in range(20)]
    out += [ck(f"two{i}#0", "a lantern among many other words " + "filler " * i, tenant="two") for i in range(5)]
    return out


@pytest.mark.parametrize("plan", ["index", "impact"])  # the in-memory index (migration 5), or postings in SQL
def test_keyword_search_widens_past_filtered_candidates(pg_factory, tmp_path, plan):
    pg = pg_factory()
    if plan == "impact":  # as a version written before migration 5 (no keyword_blobs) is searched
        pg._keyword_index = lambda conn, vid: None
    lite = SQLiteStore(tmp_path / "s.sqlite")
    chunks = _crowded()
    for s in (pg, lite):
        write(s, chunks)
    for f, limit in ((TODAY.__class__(tenant="two", as_of=TODAY.as_of), 3), (TODAY, 50), (TODAY, 5)):
        got = pg.keyword_search(["lantern", "keeper"], f, limit)
        assert got.plan == plan
        want = lite.keyword_search(["lantern", "keeper"], f, limit)
        assert [i for i, _ in got] == [i for i, _ in want]
        assert dict(got) == pytest.approx(dict(want), rel=1e-6)
    assert pg.keyword_search(["lantern"], TODAY.__class__(tenant="nobody", as_of=TODAY.as_of), 3) == []
    with pg.new_version(embedding_model=EMB.model_id, dim=EMB.dim) as w:  # the write's phases come back on its writer
        w.add(chunks, EMB.embed_passages([c.embed_text for c in chunks]))
    assert set(w.build_times) >= {"prepare_s", "copy_chunks_s", "copy_postings_s", "hnsw_build_s", "total_s"}


def test_a_version_written_before_migration_2_is_still_searched(pg_factory, monkeypatch, tmp_path):
    import vouched.store.postgres as pgmod

    schema = _schema()
    monkeypatch.setattr(pgmod, "MIGRATIONS", MIGRATIONS[:1])
    monkeypatch.setattr(pgmod, "SCHEMA_VERSION", 1)
    old = pg_factory(schema)
    assert [v for v, _ in old.migrations()] == [1]
    monkeypatch.undo()
    new = pg_factory(schema)  # migrates the v1 schema to the latest
    assert [v for v, _ in new.migrations()] == [v for v, _, _ in MIGRATIONS]
    write(new, _crowded())
    with new._conn() as conn:  # the version as a v1 writer left it: no weights, no flag
        conn.execute("UPDATE corpus_versions SET impact = FALSE")
        conn.execute("UPDATE postings SET w = NULL")
    lite = SQLiteStore(tmp_path / "s.sqlite")
    write(lite, _crowded())
    for f in (TODAY.__class__(tenant="two", as_of=TODAY.as_of), TODAY):
        joined = new.keyword_search(["lantern", "keeper"], f, 3)
        assert joined.plan == "join"
        assert [i for i, _ in joined] == [i for i, _ in lite.keyword_search(["lantern", "keeper"], f, 3)]


def test_vectors_stay_in_the_heap_row(pg_factory):
    s = pg_factory()
    write(s, [ck(f"d{i}#0", "long text " * 300 + str(i)) for i in range(3)])
    with s._conn() as conn:
        storage = conn.execute("SELECT attstorage FROM pg_attribute WHERE attrelid = 'chunks'::regclass AND attname = 'vec'").fetchone()[0]
    assert storage == "m"
    hits = s.dense_search(EMB.embed_queries(["long text 1"])[0], TODAY, 3)
    assert len(hits) == 3 and hits.plan == "exact"


@pytest.mark.parametrize("exact_below", [10_000, 0])  # exact scan and HNSW plans
def test_a_search_never_reads_a_version_another_replica_replaced(pg_factory, exact_below):
    """Searches reuse the current version's metadata as last read; a statement gated on it returns
    nothing once another process moved the pointer, and the store then re-reads and retries."""
    schema = _schema()
    reader, writer = pg_factory(schema, exact_below=exact_below), pg_factory(schema)
    write(writer, [ck("old#0", "amber lantern by the quay"), ck("old2#0", "grey pebbles on the shore")])
    q = EMB.embed_queries(["amber lantern"])[0]
    terms = analyze("amber lantern", "en", unique=True)
    assert [i for i, _ in reader.keyword_search(terms, TODAY, 5)] == ["old#0"]
    assert {i for i, _ in reader.dense_search(q, TODAY, 5)} == {"old#0", "old2#0"}
    # another replica writes a new version (the old one is kept: keep_versions 2) and switches to it
    write(writer, [ck("new#0", "amber lantern near the harbour"), ck("new2#0", "a field of tall wheat"),
                   ck("new3#0", "amber beads and a lantern")])
    assert {i for i, _ in reader.keyword_search(terms, TODAY, 5)} == {"new#0", "new3#0"}
    assert {i for i, _ in reader.dense_search(q, TODAY, 5)} == {"new#0", "new2#0", "new3#0"}
    writer.switch_to()  # back to the first version, from the other store again
    assert [i for i, _ in reader.keyword_search(terms, TODAY, 5)] == ["old#0"]
    assert {i for i, _ in reader.dense_search(q, TODAY, 5)} == {"old#0", "old2#0"}
    with psycopg.connect(reader.dsn, autocommit=True) as conn:  # a search with nothing to find still re-checks
        conn.execute(f"UPDATE {schema}.store_state SET current_version = NULL")
    with pytest.raises(StoreError, match="no corpus"):
        reader.keyword_search(terms, TODAY, 5)
