"""Stores with `concurrent_reads` (PostgreSQL) get their dense search run in a worker thread
while the retriever does the keyword side: the same calls and the same results, only the waits
overlap; errors still reach the caller."""

import threading
import uuid

import numpy as np
import pytest

from vouched.config import RetrievalSettings
from vouched.embed import HashingEmbedder
from vouched.retrieve import HybridRetriever
from vouched.store import SQLiteStore
from vouched.types import Chunk

EMB = HashingEmbedder(dim=64)
DOCS = [
    Chunk(id=f"d{i}#0", doc_id=f"d{i}", lang="en", title=f"Doc {i}", text=text)
    for i, text in enumerate([
        "The primary on-call acknowledges a page within five minutes.",
        "Escalate to the database team after fifteen minutes without progress.",
        "Express delivery reaches mainland Portugal and mainland Spain only.",
        "Damage must be reported within seven days of delivery.",
        "The search engine was rebuilt with multilingual embeddings in 2023.",
        "Sourdough bread needs flour, water and salt.",
    ])
]
QUERIES = ["when must damage be reported", "who is paged first", "express delivery Spain", "bread flour"]


class Recording:
    """A store that delegates to another and records which thread ran each call."""

    def __init__(self, inner, concurrent: bool, fail: str | None = None) -> None:
        self.inner, self.concurrent_reads, self.fail = inner, concurrent, fail
        self.threads: dict[str, str] = {}

    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        if name not in ("dense_search", "keyword_search"):
            return attr

        def call(*a, **kw):
            self.threads[name] = threading.current_thread().name
            if self.fail == name:
                raise RuntimeError(f"{name} failed")
            return attr(*a, **kw)
        return call


@pytest.fixture
def sqlite_store(tmp_path):
    store = SQLiteStore(tmp_path / "c.sqlite")
    with store.new_version(embedding_model=EMB.model_id, dim=EMB.dim) as w:
        w.add(DOCS, EMB.embed_passages([c.embed_text for c in DOCS]))
    return store


def _ids(result):
    return [(p.chunk.id, round(p.evidence, 9)) for p in result.passages]


def test_the_dense_search_runs_in_a_worker_thread_only_for_concurrent_stores(postgres_dsn, monkeypatch):
    from vouched.store.postgres import PostgresStore

    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    schema = "c_" + uuid.uuid4().hex[:10]
    pg = PostgresStore(postgres_dsn, schema=schema, pool_size=4)
    try:
        with pg.new_version(embedding_model=EMB.model_id, dim=EMB.dim) as w:
            w.add(DOCS, EMB.embed_passages([c.embed_text for c in DOCS]))
        assert PostgresStore.concurrent_reads is True
        together, apart = Recording(pg, True), Recording(pg, False)
        r1 = HybridRetriever(together, EMB, RetrievalSettings(top_k=4))
        r2 = HybridRetriever(apart, EMB, RetrievalSettings(top_k=4))
        for q in QUERIES:
            a, b = r1.search(q), r2.search(q)
            assert _ids(a) == _ids(b) and a.modes_used == b.modes_used == ("dense", "keyword")
            assert a.times.dense_ms > 0 and a.times.keyword_ms > 0
        main = threading.current_thread().name
        assert together.threads["dense_search"].startswith("vouched-dense")
        assert together.threads["keyword_search"] == main
        assert apart.threads == {"dense_search": main, "keyword_search": main}
    finally:
        pg.close()
        import psycopg

        with psycopg.connect(postgres_dsn, autocommit=True) as c:
            c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.mark.parametrize("fail", ["dense_search", "keyword_search"])
def test_a_failing_side_raises_its_own_error(sqlite_store, fail):
    store = Recording(sqlite_store, False, fail=fail)
    store.concurrent_reads = True  # (only the two searches run in threads here, each on its own call)
    with pytest.raises(RuntimeError, match=fail):
        HybridRetriever(store, EMB, RetrievalSettings(top_k=3)).search("damage reported")


def test_one_list_modes_never_use_the_worker(sqlite_store):
    store = Recording(sqlite_store, True)
    r = HybridRetriever(store, EMB, RetrievalSettings(top_k=3))
    r.search("damage reported", mode="dense")
    assert store.threads == {"dense_search": threading.current_thread().name}
    store.threads.clear()
    r.search("damage reported", mode="keyword")
    assert store.threads == {"keyword_search": threading.current_thread().name}
    assert np.isfinite(r.search("damage reported").passages[0].evidence)
