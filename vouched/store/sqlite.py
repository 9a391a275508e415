"""The embedded store: one SQLite file, FTS5 for keyword search, numpy for dense search.

Layout: `chunks` holds every chunk of every live corpus version with its metadata, its
analysed keyword terms and its float32 vector; each version has its own contentless FTS5
table `fts_v<id>` (unicode61, remove_diacritics 2, marks kept inside words so Devanagari
stays whole). A new version is written in ONE transaction that also moves the `current`
pointer, so an ingest killed at any point leaves the previous version serving (WAL rolls
the partial transaction back). Old versions beyond `keep_versions` are dropped in that
same transaction.

Dense search loads the current version's vectors once into one float32 matrix (plus
metadata arrays for the filters), masks by the filters, then matrix product + argpartition.
A version of `ann_min_chunks` vectors or more also gets an HNSW index (vouched.store.ann):
built to a temp file before the write transaction (so the write lock is not held for the
build), renamed inside it to a name carrying the version's id and hash, and so in place
before the version can be seen. Dense search then over-fetches from the graph and filters,
or searches the filtered rows exactly when the filter is selective.

Keyword search likewise: below `keyword_index_min_chunks` chunks, FTS5's bm25(); at or
above it, an in-memory BM25 index with the same scores (vouched.store.keyword_index),
built at ingest and persisted beside the file the same way, because FTS5 scores every
matching row before sorting (~500 ms per query at 1M chunks).

The code is split by concern: sqlite_schema (tables, columns, row conversions),
sqlite_write (the write transaction and the index files), sqlite_search (keyword and dense
search); this module holds the store itself: connections, versions and reads.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Sequence

from vouched.errors import StoreError
from vouched.store.ann import AnnParams
from vouched.store.base import CorpusVersion, DocFreqCache, VersionBuffer, term_df, version_rollback_target
from vouched.store.keyword_index import KeywordIndex
from vouched.store.sqlite_schema import (  # noqa: F401  (re-exported: the names this module has always offered)
    _CHUNK_COLS, _INSERT_CHUNK, _NO_DATE_HI, _NO_DATE_LO, _SCHEMA, DEFAULT_ANN_MIN_CHUNKS, DEFAULT_KEYWORD_INDEX_MIN_CHUNKS,
    FTS_TOKENIZE, SCHEMA_VERSION, _date, _iso, _row_to_chunk,
)
from vouched.store.sqlite_search import _DenseIndex, _Rows, _Searches
from vouched.store.sqlite_write import _Writes, log  # noqa: F401  (log: re-exported)
from vouched.types import Chunk, DocFreq, Record


class SQLiteStore(_Writes, _Searches):
    """Embedded store in one SQLite file. Safe to share across threads (one connection each)."""

    def __init__(self, path: str | Path, *, keep_versions: int = 2, ann_min_chunks: int = DEFAULT_ANN_MIN_CHUNKS,
                 ann_params: AnnParams = AnnParams(),
                 keyword_index_min_chunks: int = DEFAULT_KEYWORD_INDEX_MIN_CHUNKS) -> None:
        self.path = Path(path)
        self.keep_versions = max(1, keep_versions)
        self.ann_min_chunks = ann_min_chunks  # 0: never build or use an ANN index
        self.ann_params = ann_params
        self.keyword_index_min_chunks = keyword_index_min_chunks  # 0: always FTS5
        self._kw: tuple[int, KeywordIndex, _Rows] | None = None
        self._kw_lock = threading.Lock()
        self._local = threading.local()
        self._dense: _DenseIndex | None = None
        self._dense_lock = threading.Lock()
        self._init_lock = threading.Lock()
        self._initialised = False
        self._df_cache = DocFreqCache()

    # -- connections ---------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            with self._init_lock:
                if not self._initialised:
                    conn.executescript(_SCHEMA)
                    got = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                    if got is None:
                        conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                    elif int(got[0]) != SCHEMA_VERSION:
                        raise StoreError(f"{self.path} has schema version {got[0]}, this vouched expects {SCHEMA_VERSION}; re-ingest into a new file")
                    self._initialised = True
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- versions --------------------------------------------------------------------------
    def new_version(self, *, note: str = "", embedding_model: str = "", dim: int = 0,
                    progress: Callable[[int], None] | None = None, max_shrink: float | None = None) -> VersionBuffer:
        return VersionBuffer(self, note, embedding_model, dim, progress, max_shrink)

    def switch_to(self, version_id: int | None = None) -> CorpusVersion:
        """Point `current` at a kept version in one transaction (None: the newest older than current)."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            target = version_rollback_target(self.versions(), self._current_id(), version_id)
            db.execute("INSERT INTO meta (key, value) VALUES ('current', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                       (str(target.id),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return target

    def _current_id(self) -> int | None:
        row = self._db().execute("SELECT value FROM meta WHERE key='current'").fetchone()
        return int(row[0]) if row else None

    def current_version(self) -> CorpusVersion | None:
        vid = self._current_id()
        if vid is None:
            return None
        return next((v for v in self.versions() if v.id == vid), None)

    def versions(self) -> list[CorpusVersion]:
        rows = self._db().execute(
            "SELECT id, hash, created_at, chunk_count, record_count, embedding_model, dim, note FROM corpus_versions ORDER BY id"
        ).fetchall()
        return [CorpusVersion(*tuple(r)) for r in rows]

    def _require_current(self) -> int:
        vid = self._current_id()
        if vid is None:
            raise StoreError(f"{self.path} holds no corpus yet: run `vouched ingest` first")
        return vid

    # -- reads -----------------------------------------------------------------------------
    def _in_current(self, sql_cols: str, ids: Sequence[str], tenant: str):
        vid = self._require_current()
        out = []
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            out.extend(self._db().execute(
                f"SELECT {sql_cols} FROM chunks WHERE version_id=? AND tenant=? AND chunk_id IN ({','.join('?' * len(part))})",
                [vid, tenant, *part],
            ).fetchall())
        return out

    def get_chunks(self, ids: Sequence[str], tenant: str = "default") -> dict[str, Chunk]:
        return {r["chunk_id"]: _row_to_chunk(r) for r in self._in_current(_CHUNK_COLS, ids, tenant)}

    def get_terms(self, ids: Sequence[str], tenant: str = "default") -> dict[str, frozenset[str]]:
        return {r[0]: frozenset(r[1].split()) for r in self._in_current("chunk_id, terms", ids, tenant)}

    def doc_freq(self, terms: Sequence[str]) -> DocFreq:
        """From the in-memory keyword index's posting lists when it is in use, else from FTS5's
        own statistics (an `fts5vocab` 'row' table over the version's FTS table)."""
        from vouched.store.pg_schema import fts_tokens

        vid = self._current_id()
        if vid is None:
            return DocFreq(0, {})
        n = self._db().execute("SELECT chunk_count FROM corpus_versions WHERE id=?", (vid,)).fetchone()[0]

        def fetch(want: list[str]) -> dict[str, int]:
            toks = sorted({x for t in want for x in fts_tokens(t)})
            kw = self._keyword_index(vid)
            if kw is not None:
                index = kw[0]
                ids = {x: index.vocab.get(x) for x in toks}
                tok_df = {x: int(index.indptr[i + 1] - index.indptr[i]) for x, i in ids.items() if i is not None}
            else:
                db = self._db()
                db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab_v{vid} USING fts5vocab(main, 'fts_v{vid}', 'row')")
                tok_df = {}
                for start in range(0, len(toks), 500):
                    part = toks[start:start + 500]
                    tok_df.update(db.execute(f"SELECT term, doc FROM temp.vocab_v{vid} WHERE term IN "
                                             f"({','.join('?' * len(part))})", part).fetchall())
            return {t: term_df(t, tok_df, fts_tokens) for t in want}

        return self._df_cache.lookup(vid, int(n), terms, fetch)

    def records(self, tenant: str = "default") -> list[Record]:
        vid = self._current_id()
        if vid is None:
            return []
        rows = self._db().execute(
            "SELECT body FROM records WHERE version_id=? AND tenant=? ORDER BY record_id", (vid, tenant)
        ).fetchall()
        return [Record(**json.loads(r[0])) for r in rows]
