"""The SQLite store's write path: one corpus version in one transaction, its ANN and keyword index files.

A mixin of vouched.store.sqlite.SQLiteStore: it uses the store's `_db()`, `current_version()`,
`versions()`, `path`, `keep_versions`, `ann_min_chunks`, `ann_params` and
`keyword_index_min_chunks`. VersionBuffer (vouched.store.base) calls `_write_version`.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from vouched.errors import StoreError
from vouched.store.ann import AnnIndex, index_path, prune_index_files
from vouched.store.base import CorpusVersion, VersionBuffer, corpus_hash, keep_order, superseded_from
from vouched.store.keyword_index import SUFFIX as KW_SUFFIX
from vouched.store.keyword_index import KeywordIndex
from vouched.store.sqlite_schema import _INSERT_CHUNK, FTS_TOKENIZE, _iso
from vouched.text import analyze

log = logging.getLogger("vouched.store.sqlite")  # one logger for the whole store, as before it was split


class _Writes:
    """Writing a version, building its index files, dropping old versions (the SQLiteStore methods of that name)."""

    def _write_version(self, w: VersionBuffer) -> CorpusVersion:
        chunks = w._chunks
        ids = [(c.tenant, c.id) for c in chunks]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise StoreError(f"duplicate chunk id {dup[1]!r} in tenant {dup[0]!r}")
        vectors = np.concatenate(w._vectors) if w._vectors else np.zeros((0, 0), dtype=np.float32)
        has_vec = vectors.shape[1] > 0 if vectors.ndim == 2 else False
        sup = superseded_from(chunks)
        chash = corpus_hash(chunks, w._records)
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        pending = self._build_pending_ann(vectors, w.build_times) if has_vec else None
        # the keyword index is built from the terms analysed for the rows below, inside the
        # write transaction (readers are not blocked: WAL), before the version can be seen
        kw_terms: list[str] | None = [] if self._wants_keyword_index(len(chunks)) else None
        pending_kw: Path | None = None
        final: Path | None = None
        final_kw: Path | None = None
        db = self._db()
        try:
            db.execute("BEGIN IMMEDIATE")
        except BaseException:
            if pending is not None:
                pending.unlink(missing_ok=True)
            raise
        try:
            previous = self.current_version()
            w.check_shrink(previous)
            cur = db.execute(
                "INSERT INTO corpus_versions (hash, created_at, note, embedding_model, dim, chunk_count, record_count) VALUES (?,?,?,?,?,?,?)",
                (chash, created, w._note, w._model, int(vectors.shape[1]) if has_vec else 0, len(chunks), len(w._records)),
            )
            vid = int(cur.lastrowid)
            db.execute(f"CREATE VIRTUAL TABLE fts_v{vid} USING fts5(terms, content='', tokenize=\"{FTS_TOKENIZE}\")")
            batch = 500
            for start in range(0, len(chunks), batch):
                part = chunks[start : start + batch]
                rows = []
                for i, c in enumerate(part, start):
                    terms = " ".join(analyze(c.embed_text, c.lang))
                    if kw_terms is not None:
                        kw_terms.append(terms)
                    vec = vectors[i].tobytes() if has_vec else None
                    s = sup.get((c.tenant, c.doc_id))
                    rows.append((vid, c.id, c.doc_id, c.text, c.title, c.section, c.overlap, c.version, c.page, c.position,
                                 c.source, c.url, c.lang, c.tenant, _iso(c.updated_at), _iso(c.effective_from),
                                 _iso(c.effective_to), c.supersedes, _iso(s), c.authority, int(c.draft),
                                 json.dumps(list(c.flags)), terms, vec))
                db.executemany(_INSERT_CHUNK, rows)
                if w._progress:
                    w._progress(len(part))
            db.execute(f"INSERT INTO fts_v{vid} (rowid, terms) SELECT rowid, terms FROM chunks WHERE version_id=?", (vid,))
            if kw_terms is not None:
                pending_kw = self._build_pending_keyword(kw_terms, w.build_times)
                kw_terms = None
            db.executemany(
                "INSERT INTO records (version_id, record_id, tenant, body) VALUES (?,?,?,?)",
                [(vid, r.id, r.tenant, json.dumps(asdict(r), ensure_ascii=False)) for r in w._records],
            )
            db.execute("INSERT INTO meta (key, value) VALUES ('current', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value", (str(vid),))
            self._drop_old(db, vid, previous.id if previous else None)
            if pending is not None:
                # In place before the version can be seen: a reader of v finds v's index.
                final = index_path(self.path, vid, chash)
                os.replace(pending, final)
            if pending_kw is not None:
                final_kw = index_path(self.path, vid, chash, KW_SUFFIX)
                os.replace(pending_kw, final_kw)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            for p in (pending, final, pending_kw, final_kw):
                if p is not None:
                    p.unlink(missing_ok=True)
            raise
        self._prune_ann()
        return self.current_version()  # type: ignore[return-value]

    def _build_pending_ann(self, vectors: np.ndarray, times: dict[str, float]) -> Path | None:
        if not self.ann_min_chunks or len(vectors) < self.ann_min_chunks:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        tmp = AnnIndex.build(vectors, self.ann_params).write_temp(self.path)
        times["ann_build_s"] = time.perf_counter() - t0
        return tmp

    def _wants_keyword_index(self, n_chunks: int) -> bool:
        return bool(self.keyword_index_min_chunks) and n_chunks >= self.keyword_index_min_chunks

    def _build_pending_keyword(self, terms: list[str], times: dict[str, float]) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        tmp = KeywordIndex.build(terms).write_temp(self.path)
        times["keyword_index_build_s"] = time.perf_counter() - t0
        return tmp

    def _prune_ann(self) -> None:
        live = [(v.id, v.hash) for v in self.versions()]
        try:
            prune_index_files(self.path, live)
            prune_index_files(self.path, live, KW_SUFFIX)
        except OSError as exc:  # a stale file costs disk, never correctness: its name says whose it is
            log.warning("could not delete old ANN index files beside %s: %s", self.path, exc)

    def _drop_old(self, db: sqlite3.Connection, current: int, previous: int | None = None) -> None:
        old = keep_order([r[0] for r in db.execute("SELECT id FROM corpus_versions WHERE id < ?", (current,))], previous)
        for vid in old[self.keep_versions - 1 :]:
            db.execute(f"DROP TABLE IF EXISTS fts_v{vid}")
            db.execute("DELETE FROM chunks WHERE version_id=?", (vid,))
            db.execute("DELETE FROM records WHERE version_id=?", (vid,))
            db.execute("DELETE FROM corpus_versions WHERE id=?", (vid,))
