"""Embeddings cached by content hash, so re-ingesting unchanged text costs nothing.

The cache is one SQLite file shared by every corpus on the machine (default
`~/.cache/vouched/embeddings.sqlite`, or `$VOUCHED_CACHE_DIR`). A key is
(model id, kind, sha256 of the text): a different model never reads another's vectors.
Misses are written block by block, so an interrupted run keeps what it computed. Misses go to
the model longest-last (sorted by length, in blocks of `WRITE_BATCH`), so the embedder's own
length-sorted batching sees texts of like length together across the whole run.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from vouched.embed.base import Embedder, EmbedStats, Progress, passages_counted

WRITE_BATCH = 256  # texts per model call and cache write: at ~1 passage/s a kill loses minutes, not the run


def default_cache_path() -> Path:
    root = os.environ.get("VOUCHED_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "vouched")
    return Path(root) / "embeddings.sqlite"


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, kind TEXT NOT NULL, "
                "hash BLOB NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, kind, hash)) WITHOUT ROWID"
            )
            self._conn = conn
        return self._conn

    def get_many(self, model: str, kind: str, hashes: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            db = self._db()
            for start in range(0, len(hashes), 500):
                part = list(hashes[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = db.execute(
                    f"SELECT hash, vec FROM embeddings WHERE model=? AND kind=? AND hash IN ({marks})",
                    [model, kind, *part],
                )
                for h, blob in rows:
                    found[bytes(h)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, kind: str, items: Sequence[tuple[bytes, np.ndarray]]) -> None:
        with self._lock:
            db = self._db()
            with db:
                db.executemany(
                    "INSERT OR REPLACE INTO embeddings (model, kind, hash, vec) VALUES (?, ?, ?, ?)",
                    [(model, kind, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items],
                )

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class CachedEmbedder:
    """Wraps an Embedder; passages are looked up by content hash before the model runs."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.dim = inner.dim

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_queries_counted(texts)[0]

    def embed_queries_counted(self, texts: Sequence[str]) -> tuple[np.ndarray, int]:
        """The vectors and how many texts the model had to embed (the misses)."""
        return self._cached("query", texts, lambda batch, _p: self.inner.embed_queries(batch), None)

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return self.embed_passages_counted(texts, progress)[0]

    def embed_passages_counted(self, texts: Sequence[str], progress: Progress | None = None
                               ) -> tuple[np.ndarray, EmbedStats]:
        """The vectors and the call's cost: the model's on the misses, the hits in ``cached``."""
        stats = EmbedStats()

        def embed(batch: Sequence[str], p: Progress | None) -> np.ndarray:
            vecs, inner_stats = passages_counted(self.inner, batch, p)
            stats.add(inner_stats)
            return vecs

        out, misses = self._cached("passage", texts, embed, progress)
        stats.cached = len(texts) - misses
        return out, stats

    def _cached(
        self,
        kind: str,
        texts: Sequence[str],
        embed: Callable[[Sequence[str], Progress | None], np.ndarray],
        progress: Progress | None,
    ) -> tuple[np.ndarray, int]:
        hashes = [text_hash(t) for t in texts]
        found = self.cache.get_many(self.model_id, kind, list(dict.fromkeys(hashes)))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: dict[bytes, str] = {}
        for i, h in enumerate(hashes):
            if h in found:
                out[i] = found[h]
            else:
                missing.setdefault(h, texts[i])
        if progress and len(texts) - len(missing):
            progress(len(texts) - len(missing))
        todo = sorted(missing.items(), key=lambda item: len(item[1]))  # like lengths together (see module doc)
        expect = getattr(self.inner, "expect_passages", None)
        if kind == "passage" and expect is not None and todo:
            expect(len(todo))  # the job's size, though it arrives in WRITE_BATCH parts (E5 picks its kernel by it)
        computed: dict[bytes, np.ndarray] = {}
        for start in range(0, len(todo), WRITE_BATCH):
            part = todo[start : start + WRITE_BATCH]
            vecs = embed([t for _, t in part], progress)
            self.cache.put_many(self.model_id, kind, [(h, v) for (h, _), v in zip(part, vecs)])
            computed.update({h: v for (h, _), v in zip(part, vecs)})
        if computed:
            for i, h in enumerate(hashes):
                if h in computed:
                    out[i] = computed[h]
        return out, len(missing)
