import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.store.suite import EMB, BASE, StoreSuite, ck, write
from vouched.store import SQLiteStore


class TestSQLiteStore(StoreSuite):
    @pytest.fixture
    def make_store(self, tmp_path):
        n = iter(range(1000))

        def make():
            return SQLiteStore(tmp_path / "store.sqlite")

        def fresh():
            return SQLiteStore(tmp_path / f"fresh{next(n)}.sqlite")

        make.fresh = fresh
        return make


def test_old_versions_are_dropped_beyond_keep(tmp_path):
    s = SQLiteStore(tmp_path / "s.sqlite", keep_versions=2)
    for i in range(4):
        write(s, [ck(f"d{i}#0", f"version {i} text words here")])
    assert [v.chunk_count for v in s.versions()] == [1, 1]
    assert len(s.versions()) == 2


def test_killed_ingest_leaves_previous_version_serving(tmp_path):
    """SIGKILL a writer mid-transaction: the reader still sees the previous version, whole."""
    path = tmp_path / "k.sqlite"
    s = SQLiteStore(path)
    v1 = write(s, BASE)
    s.close()
    script = textwrap.dedent(f"""
        import sys, time, numpy as np
        from vouched.store import SQLiteStore
        from vouched.types import Chunk
        s = SQLiteStore({str(path)!r})
        chunks = [Chunk(id=f"big{{i}}#0", doc_id=f"big{{i}}", text=f"replacement text number {{i}} lantern") for i in range(5000)]
        def progress(n):
            print("WRITING", flush=True)
            time.sleep(60)
        with s.new_version(embedding_model="hashing-64", dim=64, progress=progress) as w:
            w.add(chunks, np.ones((len(chunks), 64), dtype=np.float32) / 8)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "WRITING"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    s2 = SQLiteStore(path)
    cur = s2.current_version()
    assert cur.id == v1.id and cur.hash == v1.hash
    from tests.store.suite import TODAY
    assert [i for i, _ in s2.keyword_search(["replacement"], TODAY, 5)] == []
    assert "alpha#0" in [i for i, _ in s2.keyword_search(["lighthous", "lantern"], TODAY, 5)]
    assert len(s2.dense_search(EMB.embed_queries(["lantern"])[0], TODAY, 3)) == 3
    # and the next ingest works
    v3 = write(s2, [ck("after#0", "after the crash lantern keeper")])
    assert s2.current_version().id == v3.id


def test_doc_freq_same_from_fts5_and_from_the_in_memory_index(tmp_path):
    fts = SQLiteStore(tmp_path / "f.sqlite", keyword_index_min_chunks=0)
    idx = SQLiteStore(tmp_path / "i.sqlite", keyword_index_min_chunks=1)
    for s in (fts, idx):
        write(s, BASE)
    terms = ["lighthous", "lantern", "keeper", "polici", "2024", "faro", "nothing"]
    a, b = fts.doc_freq(terms), idx.doc_freq(terms)
    assert a == b and a.get("keeper") == 7
