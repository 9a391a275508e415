"""PostgreSQL's in-memory keyword index (vouched.store.pg_keyword) against its SQL keyword query.

The index replaces the SQL path for versions written since migration 5, so it must return what
that path returns: the same ids in the same order with the same scores, under every filter and
limit, on the real server (tests/conftest.py `postgres_dsn`).
"""

from __future__ import annotations

import uuid
from datetime import date

import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.store.suite import TODAY, ck, write
from vouched.store import pg_keyword
from vouched.store.postgres import PostgresStore
from vouched.text import analyze
from vouched.types import Chunk, SearchFilters

WORDS = ("lantern keeper harbour winter bread flour water salt baker policy weekly quay amber pebble shore wheat "
         "field tall beads near grey light tower storm ship rope anchor tide gull net boat").split()
LANGS = ("en", "de", "fr")
TENANTS = ("default", "default", "default", "two", "two", "three")
DAYS = (None, date(2025, 1, 1), date(2025, 7, 1), date(2026, 1, 1))


def _schema() -> str:
    return "t_" + uuid.uuid4().hex[:12]


@pytest.fixture(scope="module")
def store(postgres_dsn):
    s = PostgresStore(postgres_dsn, schema=_schema(), keep_versions=2, pool_size=2)
    yield s
    s.close()


def corpus(rng: np.random.Generator, n: int) -> list[Chunk]:
    """Zipf-drawn words (common terms, many equal scores), several tenants, languages, drafts and validity dates."""
    p = 1 / np.arange(1, len(WORDS) + 1)
    p /= p.sum()
    out = []
    for i in range(n):
        words = rng.choice(WORDS, size=int(rng.integers(1, 25)), p=p)
        eff_from, eff_to = DAYS[rng.integers(0, 3)], DAYS[rng.integers(0, 4)]
        if eff_from and eff_to and eff_to < eff_from:
            eff_from, eff_to = eff_to, eff_from
        out.append(ck(f"c{i}#0", " ".join(words), lang=LANGS[rng.integers(0, 3)], tenant=TENANTS[rng.integers(0, 6)],
                      draft=bool(rng.random() < 0.15), effective_from=eff_from, effective_to=eff_to))
    return out


def write_keyword_only(s: PostgresStore, chunks: list[Chunk]) -> None:
    with s.new_version(embedding_model="none") as w:
        w.add(chunks, None)


def via_sql(s: PostgresStore, terms, f, limit):
    """keyword_search as a version without an index runs it (plan "impact")."""
    s._keyword_index = lambda conn, vid: None
    try:
        return s.keyword_search(terms, f, limit)
    finally:
        del s._keyword_index


def assert_same(s: PostgresStore, terms, f, limit) -> int:
    got, want = s.keyword_search(terms, f, limit), via_sql(s, terms, f, limit)
    assert (got.plan, want.plan) == ("index", "impact")
    assert [i for i, _ in got] == [i for i, _ in want], (terms, f, limit)
    assert [x for _, x in got] == pytest.approx([x for _, x in want], rel=1e-9, abs=0)
    return len(got)


def random_filters(rng: np.random.Generator) -> SearchFilters:
    langs = (None, ("en",), ("de", "fr"), ())[rng.integers(0, 4)]
    return SearchFilters(tenant=("default", "two", "three", "nobody")[rng.integers(0, 4)], langs=langs,
                         as_of=DAYS[rng.integers(1, 4)], include_drafts=bool(rng.random() < 0.3),
                         any_time=bool(rng.random() < 0.2))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(50, 400))
def test_index_path_returns_what_the_sql_path_returns(store, seed, n):
    """Each example writes a new version (so the index is reloaded) and asks random questions of it."""
    rng = np.random.default_rng(seed)
    write_keyword_only(store, corpus(rng, n))
    found = 0
    for _ in range(20):
        words = list(rng.choice(WORDS, size=int(rng.integers(1, 6)), replace=False))
        if rng.random() < 0.2:
            words.append("zzqxabsent")  # a term no chunk has
        terms = analyze(" ".join(words), LANGS[rng.integers(0, 3)], unique=True)
        found += assert_same(store, terms, random_filters(rng), int((1, 2, 5, 10, 50, 500)[rng.integers(0, 6)]))
    assert found  # the questions find something
    assert store._kw[0] == store.current_version().id


def test_weights_are_the_postings_weights_exactly(store):
    write_keyword_only(store, corpus(np.random.default_rng(7), 300))
    vid = store.current_version().id
    with store._conn() as conn:
        index = pg_keyword.load(conn, vid)
        rows = conn.execute('SELECT term, chunk_row, w FROM postings WHERE version_id = %s ORDER BY term COLLATE "C", chunk_row',
                            (vid,)).fetchall()
        rowids = [r[0] for r in conn.execute("SELECT rowid FROM chunks WHERE version_id = %s ORDER BY rowid", (vid,))]
    names = sorted(index.vocab, key=index.vocab.__getitem__)
    assert names == sorted(names) and len(index.indptr) == len(names) + 1
    assert index.rowids.tolist() == rowids
    terms = np.repeat(np.arange(len(names)), np.diff(index.indptr))
    assert [(names[t], int(index.rowids[r])) for t, r in zip(terms, index.rows)] == [(t, r) for t, r, _ in rows]
    assert index.weights.tolist() == [w for _, _, w in rows]  # bit for bit


def test_shortfall_grows_candidates_until_every_matching_row_was_seen(store):
    # 300 best-scoring chunks a filter removes, a few weaker ones it keeps
    chunks = [ck(f"hot{i}#0", "lantern lantern lantern keeper " + "word " * (i % 7)) for i in range(300)]
    chunks += [ck(f"draft{i}#0", "lantern lantern keeper", draft=True) for i in range(20)]
    chunks += [ck(f"two{i}#0", "a lantern among many other words " + "filler " * i, tenant="two") for i in range(5)]
    write_keyword_only(store, chunks)
    two = SearchFilters(tenant="two", as_of=TODAY.as_of)
    for terms, f, limit in ((["lantern", "keeper"], two, 3), (["lantern"], two, 10), (["lantern"], TODAY, 50),
                            (["keeper"], SearchFilters(as_of=TODAY.as_of, include_drafts=True), 400),
                            (["lantern"], SearchFilters(tenant="nobody"), 3), (["zzqxabsent"], TODAY, 5), (["word"], two, 5)):
        assert_same(store, terms, f, limit)
    assert [i for i, _ in store.keyword_search(["lantern"], two, 10)] == [f"two{i}#0" for i in range(5)]


def test_top_breaks_ties_by_row_as_the_sql_order_does():
    rows = np.arange(10)
    scores = np.array([1.0, 3.0, 2.0, 2.0, 3.0, 2.0, 0.5, 2.0, 3.0, 1.0])
    for k in range(1, 11):
        want = sorted(range(10), key=lambda i: (-scores[i], i))[:k]
        assert sorted(pg_keyword.top(rows, scores, k).tolist()) == sorted(want)


def test_a_version_switch_by_another_store_is_followed(postgres_dsn):
    schema = _schema()
    reader, writer = (PostgresStore(postgres_dsn, schema=schema, pool_size=2) for _ in range(2))
    try:
        write(writer, [ck("old#0", "amber lantern by the quay"), ck("old2#0", "grey pebbles on the shore")])
        terms = analyze("amber lantern", "en", unique=True)
        first = reader.keyword_search(terms, TODAY, 5)
        assert first.plan == "index" and [i for i, _ in first] == ["old#0"]
        old_vid = reader._kw[0]
        write(writer, [ck("new#0", "amber lantern near the harbour"), ck("new3#0", "amber beads and a lantern")])
        got = reader.keyword_search(terms, TODAY, 5)
        assert got.plan == "index" and {i for i, _ in got} == {"new#0", "new3#0"}
        assert reader._kw[0] == writer.current_version().id != old_vid
        writer.switch_to()
        assert [i for i, _ in reader.keyword_search(terms, TODAY, 5)] == ["old#0"]
        assert reader._kw[0] == old_vid
    finally:
        reader.close()
        writer.close()


def test_a_version_without_blobs_is_searched_by_sql(postgres_dsn):
    """A version written before migration 5 has no keyword_blobs rows: the SQL path answers, alike."""
    schema = _schema()
    s = PostgresStore(postgres_dsn, schema=schema, pool_size=2)
    chunks = corpus(np.random.default_rng(3), 200)
    try:
        write_keyword_only(s, chunks)
        terms = analyze("lantern keeper winter", "en", unique=True)
        indexed = s.keyword_search(terms, TODAY, 20)
        assert indexed.plan == "index" and len(indexed) > 0
    finally:
        s.close()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {schema}.keyword_blobs")
    old = PostgresStore(postgres_dsn, schema=schema, pool_size=2)  # a fresh process: nothing cached
    try:
        plain = old.keyword_search(terms, TODAY, 20)
        assert plain.plan == "impact" and plain == indexed
        assert old._kw == (old.current_version().id, None)  # looked up once, then remembered
    finally:
        old.close()


def test_old_versions_blobs_are_dropped_with_them(store):
    for i in range(3):
        write_keyword_only(store, [ck(f"d{i}#0", f"version {i} text")])
    with store._conn() as conn:
        kept = {r[0] for r in conn.execute("SELECT DISTINCT version_id FROM keyword_blobs")}
    assert kept == {v.id for v in store.versions()} and len(kept) == 2
