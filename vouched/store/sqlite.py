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
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from vouched.errors import StoreError
from vouched.store.ann import AnnIndex, AnnParams, index_path, plan_dense, prune_index_files
from vouched.store.keyword_index import SUFFIX as KW_SUFFIX
from vouched.store.keyword_index import KeywordIndex
from vouched.store.base import (
    CorpusVersion, DocFreqCache, VersionBuffer, corpus_hash, keep_order, superseded_from, term_df, version_rollback_target,
)
from vouched.text import analyze
from vouched.types import Chunk, DocFreq, Hits, Record, SearchFilters

SCHEMA_VERSION = 1
FTS_TOKENIZE = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
_NO_DATE_LO = date.min.toordinal()
_NO_DATE_HI = date.max.toordinal()
DEFAULT_ANN_MIN_CHUNKS = 50_000
DEFAULT_KEYWORD_INDEX_MIN_CHUNKS = 50_000
log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS corpus_versions (
  id INTEGER PRIMARY KEY, hash TEXT NOT NULL, created_at TEXT NOT NULL, note TEXT NOT NULL DEFAULT '',
  embedding_model TEXT NOT NULL DEFAULT '', dim INTEGER NOT NULL DEFAULT 0,
  chunk_count INTEGER NOT NULL DEFAULT 0, record_count INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS chunks (
  rowid INTEGER PRIMARY KEY, version_id INTEGER NOT NULL, chunk_id TEXT NOT NULL, doc_id TEXT NOT NULL,
  text TEXT NOT NULL, title TEXT NOT NULL, section TEXT NOT NULL, overlap TEXT NOT NULL,
  doc_version TEXT NOT NULL, page INTEGER, position INTEGER NOT NULL, source TEXT NOT NULL, url TEXT,
  lang TEXT NOT NULL, tenant TEXT NOT NULL, updated_at TEXT, effective_from TEXT, effective_to TEXT,
  supersedes TEXT, superseded_from TEXT, authority INTEGER NOT NULL, draft INTEGER NOT NULL,
  flags TEXT NOT NULL, terms TEXT NOT NULL, vec BLOB);
CREATE UNIQUE INDEX IF NOT EXISTS chunks_id ON chunks (version_id, tenant, chunk_id);
CREATE TABLE IF NOT EXISTS records (
  version_id INTEGER NOT NULL, record_id TEXT NOT NULL, tenant TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (version_id, tenant, record_id));
"""

_CHUNK_COLS = (
    "chunk_id, doc_id, text, title, section, overlap, doc_version, page, position, source, url, lang, tenant, "
    "updated_at, effective_from, effective_to, supersedes, authority, draft, flags"
)


_INSERT_CHUNK = (
    "INSERT INTO chunks (version_id, chunk_id, doc_id, text, title, section, overlap, doc_version, page, position, "
    "source, url, lang, tenant, updated_at, effective_from, effective_to, supersedes, superseded_from, authority, "
    "draft, flags, terms, vec) VALUES (" + ",".join("?" * 24) + ")"
)


def _iso(d: date | None) -> str | None:
    return d.isoformat() if d else None


def _date(s: str | None) -> date | None:
    return date.fromisoformat(s) if s else None


def _row_to_chunk(r: sqlite3.Row) -> Chunk:
    return Chunk(
        id=r["chunk_id"], doc_id=r["doc_id"], text=r["text"], title=r["title"], section=r["section"],
        overlap=r["overlap"], version=r["doc_version"], page=r["page"], position=r["position"],
        source=r["source"], url=r["url"], lang=r["lang"], tenant=r["tenant"], updated_at=_date(r["updated_at"]),
        effective_from=_date(r["effective_from"]), effective_to=_date(r["effective_to"]),
        supersedes=r["supersedes"], authority=r["authority"], draft=bool(r["draft"]), flags=tuple(json.loads(r["flags"])),
    )


@dataclass(frozen=True)
class _Rows:
    """Chunk ids and filter columns of one version's rows (rowid order), loaded once."""

    ids: list[str]
    tenant: np.ndarray  # int codes
    tenants: dict[str, int]
    lang: np.ndarray
    langs: dict[str, int]
    draft: np.ndarray  # bool
    eff_from: np.ndarray  # int ordinals
    eff_to: np.ndarray
    sup_from: np.ndarray

    @classmethod
    def from_rows(cls, rows: Sequence) -> "_Rows":
        """From (chunk_id, tenant, lang, draft, effective_from, effective_to, superseded_from, ...) rows."""
        tenants: dict[str, int] = {}
        langs: dict[str, int] = {}
        n = len(rows)
        tenant = np.empty(n, dtype=np.int32)
        lang = np.empty(n, dtype=np.int32)
        draft = np.empty(n, dtype=bool)
        ef, et, sf = (np.empty(n, dtype=np.int64) for _ in range(3))
        for i, r in enumerate(rows):
            tenant[i] = tenants.setdefault(r[1], len(tenants))
            lang[i] = langs.setdefault(r[2], len(langs))
            draft[i] = bool(r[3])
            ef[i] = date.fromisoformat(r[4]).toordinal() if r[4] else _NO_DATE_LO
            et[i] = date.fromisoformat(r[5]).toordinal() if r[5] else _NO_DATE_HI
            sf[i] = date.fromisoformat(r[6]).toordinal() if r[6] else _NO_DATE_HI + 1
        return cls([r[0] for r in rows], tenant, tenants, lang, langs, draft, ef, et, sf)

    def mask(self, f: SearchFilters) -> np.ndarray:
        code = self.tenants.get(f.tenant)
        if code is None or not len(self.ids):
            return np.zeros(len(self.ids), dtype=bool)
        m = self.tenant == code
        if f.langs is not None:
            codes = [self.langs[x] for x in f.langs if x in self.langs]
            m &= np.isin(self.lang, codes)
        if not f.include_drafts:
            m &= ~self.draft
        if not f.any_time:
            day = (f.as_of or date.today()).toordinal()
            m &= (self.eff_from <= day) & (self.eff_to >= day) & (self.sup_from > day)
        return m


@dataclass(frozen=True)
class _DenseIndex:
    """The current version's vectors and filter columns, loaded once."""

    version_id: int
    rows: _Rows  # of the chunks that have a vector
    complete: bool  # every chunk of the version has a vector (rows are then all the version's rows)
    matrix: np.ndarray  # (n, dim) float32, unit rows
    positions: dict[tuple[int, str], int]
    ann: AnnIndex | None = None

    @property
    def ids(self) -> list[str]:
        return self.rows.ids

    @property
    def tenants(self) -> dict[str, int]:
        return self.rows.tenants

    def mask(self, f: SearchFilters) -> np.ndarray:
        return self.rows.mask(f)


class SQLiteStore:
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

    # -- filters ---------------------------------------------------------------------------
    @staticmethod
    def _filter_sql(f: SearchFilters) -> tuple[str, list]:
        day = (f.as_of or date.today()).isoformat()
        sql = " AND c.tenant = ?"
        args: list = [f.tenant]
        if not f.any_time:
            sql += " AND (c.effective_from IS NULL OR c.effective_from <= ?)" \
                   " AND (c.effective_to IS NULL OR c.effective_to >= ?) AND (c.superseded_from IS NULL OR c.superseded_from > ?)"
            args += [day, day, day]
        if not f.include_drafts:
            sql += " AND c.draft = 0"
        if f.langs is not None:
            sql += f" AND c.lang IN ({','.join('?' * len(f.langs))})" if f.langs else " AND 0"
            args.extend(f.langs)
        return sql, args

    # -- search ----------------------------------------------------------------------------
    def keyword_search(self, terms: Sequence[str], filters: SearchFilters, limit: int) -> list[tuple[str, float]]:
        terms = [t for t in dict.fromkeys(terms) if t]
        if not terms or limit <= 0:
            return []
        vid = self._require_current()
        kw = self._keyword_index(vid)
        if kw is not None:
            index, cols = kw
            return Hits([(cols.ids[r], s) for r, s in index.search(terms, cols.mask(filters), limit)], "index")
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        where, args = self._filter_sql(filters)
        rows = self._db().execute(
            f"SELECT c.chunk_id, -bm25(fts_v{vid}) AS s FROM fts_v{vid} JOIN chunks c ON c.rowid = fts_v{vid}.rowid "
            f"WHERE fts_v{vid} MATCH ? AND c.version_id = ?{where} ORDER BY bm25(fts_v{vid}) LIMIT ?",
            [match, vid, *args, limit],
        ).fetchall()
        return Hits([(r[0], float(r[1])) for r in rows], "fts5")

    def _keyword_index(self, vid: int) -> tuple[KeywordIndex, _Rows] | None:
        """The in-memory keyword index of version `vid` and its rows, or None (FTS5 then)."""
        if not self.keyword_index_min_chunks:
            return None
        kw = self._kw
        if kw is not None and kw[0] == vid:
            return kw[1], kw[2]
        with self._kw_lock:
            if self._kw is not None and self._kw[0] == vid:
                return self._kw[1], self._kw[2]
            db = self._db()
            count, chash = db.execute("SELECT chunk_count, hash FROM corpus_versions WHERE id=?", (vid,)).fetchone()
            if count < self.keyword_index_min_chunks:
                return None
            dense = self._dense
            if dense is not None and dense.version_id == vid and dense.complete:
                cols = dense.rows
            else:
                cols = _Rows.from_rows(db.execute(
                    "SELECT chunk_id, tenant, lang, draft, effective_from, effective_to, superseded_from "
                    "FROM chunks WHERE version_id=? ORDER BY rowid", (vid,)).fetchall())
            path = index_path(self.path, vid, chash, KW_SUFFIX)
            index = None
            if path.exists():
                try:
                    index = KeywordIndex.load(path)
                except (OSError, ValueError) as exc:
                    log.warning("cannot read keyword index %s (%s): rebuilding it", path, exc)
                if index is not None and index.size != len(cols.ids):
                    log.warning("keyword index %s holds %d rows, version %d has %d: rebuilding it",
                                path, index.size, vid, len(cols.ids))
                    index = None
            if index is None:
                log.warning("building the keyword index of corpus version %d (%d chunks): %s", vid, count, path)
                terms = (r[0] for r in db.execute("SELECT terms FROM chunks WHERE version_id=? ORDER BY rowid", (vid,)))
                index = KeywordIndex.build(terms, n_rows=len(cols.ids))
                index.save(path)
            self._kw = (vid, index, cols)
            return index, cols

    def _dense_index(self) -> _DenseIndex:
        vid = self._require_current()
        idx = self._dense
        if idx is not None and idx.version_id == vid:
            return idx
        with self._dense_lock:
            if self._dense is not None and self._dense.version_id == vid:
                return self._dense
            self._dense = self._load_dense(vid)
            return self._dense

    def _load_dense(self, vid: int) -> _DenseIndex:
        db = self._db()
        rows = db.execute(
            "SELECT chunk_id, tenant, lang, draft, effective_from, effective_to, superseded_from, vec "
            "FROM chunks WHERE version_id=? AND vec IS NOT NULL ORDER BY rowid", (vid,)
        ).fetchall()
        dim, count = db.execute("SELECT dim, chunk_count FROM corpus_versions WHERE id=?", (vid,)).fetchone()
        n = len(rows)
        matrix = np.empty((n, dim), dtype=np.float32)
        for i, r in enumerate(rows):
            matrix[i] = np.frombuffer(r[7], dtype=np.float32)
        cols = _Rows.from_rows(rows)
        del rows
        positions = {(int(t), cid): i for i, (t, cid) in enumerate(zip(cols.tenant, cols.ids))}
        ann = self._load_ann(vid, matrix) if self.ann_min_chunks and n >= self.ann_min_chunks else None
        return _DenseIndex(vid, cols, n == count, matrix, positions, ann)

    def _load_ann(self, vid: int, matrix: np.ndarray) -> AnnIndex:
        chash = self._db().execute("SELECT hash FROM corpus_versions WHERE id=?", (vid,)).fetchone()[0]
        path = index_path(self.path, vid, chash)
        if path.exists():
            ann = AnnIndex.load(path, self.ann_params)
            if ann.size == len(matrix) and ann.dim == matrix.shape[1]:
                return ann
            log.warning("ANN index %s holds %d x %d vectors, version %d has %d x %d: rebuilding it",
                        path, ann.size, ann.dim, vid, *matrix.shape)
        else:
            log.warning("no ANN index for corpus version %d (ingested below ann_min_chunks?): building %s", vid, path)
        ann = AnnIndex.build(matrix, self.ann_params)
        ann.save(path)
        return ann

    def dense_search(self, vector: np.ndarray, filters: SearchFilters, limit: int) -> list[tuple[str, float]]:
        idx = self._dense_index()
        if not len(idx.ids) or limit <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != idx.matrix.shape[1]:
            raise StoreError(f"query vector has {q.shape[0]} dimensions, the corpus {idx.matrix.shape[1]}: re-ingest with this embedder")
        mask = idx.mask(filters)
        n_allowed = int(mask.sum())
        if idx.ann is not None:
            ap = self.ann_params
            plan = plan_dense(len(idx.ids), n_allowed, limit, exact_max_rows=ap.exact_max_rows,
                              overfetch=ap.overfetch, max_fetch=ap.max_fetch)
            if plan.how == "ann":
                rows = idx.ann.search(q, plan.fetch)
                rows = rows[mask[rows]]
                if len(rows) >= min(limit, n_allowed):
                    return Hits(self._ranked(idx, q, rows, limit), "ann")
                plan_name = "ann+exact"  # the over-fetch came back short: search the filtered rows exactly
            else:
                plan_name = plan.how
        else:
            plan_name = "exact" if n_allowed else "none"
        if not n_allowed:
            return Hits((), plan_name)
        return Hits(self._ranked(idx, q, np.flatnonzero(mask) if n_allowed < len(idx.ids) else None, limit), plan_name)

    @staticmethod
    def _ranked(idx: _DenseIndex, q: np.ndarray, rows: np.ndarray | None, limit: int) -> list[tuple[str, float]]:
        """The `limit` best of `rows` (None: every row) by exact cosine, best first."""
        if rows is None:
            scores = idx.matrix @ q
        elif len(rows) * 8 < len(idx.ids):
            scores = idx.matrix[rows] @ q  # few rows: gather them
        else:
            # most rows: one product over the whole matrix beats copying the allowed rows out
            # of it first (a 15 MB copy per query at 10k x 384)
            scores = (idx.matrix @ q)[rows]
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(idx.ids[i if rows is None else rows[i]], float(scores[i])) for i in top]

    def score_dense(self, vector: np.ndarray, ids: Sequence[str], tenant: str = "default") -> dict[str, float]:
        idx = self._dense_index()
        code = idx.tenants.get(tenant)
        rows = [(i, idx.positions.get((code, i))) for i in ids] if code is not None else []
        rows = [(i, r) for i, r in rows if r is not None]
        if not rows:
            return {}
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        scores = idx.matrix[[r for _, r in rows]] @ q
        return {i: float(s) for (i, _), s in zip(rows, scores)}

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
