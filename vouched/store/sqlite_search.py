"""The SQLite store's searches: keyword (FTS5 or the in-memory BM25 index) and dense (numpy or HNSW).

A mixin of vouched.store.sqlite.SQLiteStore: it uses the store's `_db()`, `_require_current()`,
`path`, `ann_min_chunks`, `ann_params`, `keyword_index_min_chunks` and the caches and locks
`SQLiteStore.__init__` sets (`_kw`, `_kw_lock`, `_dense`, `_dense_lock`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date
from typing import Sequence

import numpy as np

from vouched.errors import StoreError
from vouched.store.ann import AnnIndex, index_path, plan_dense
from vouched.store.keyword_index import SUFFIX as KW_SUFFIX
from vouched.store.keyword_index import KeywordIndex
from vouched.store.rowfilter import FilterColumns
from vouched.types import Hits, SearchFilters

log = logging.getLogger("vouched.store.sqlite")  # one logger for the whole store, as before it was split


@dataclass(frozen=True)
class _Rows(FilterColumns):
    """Chunk ids and filter columns of one version's rows (rowid order), loaded once."""

    ids: list[str]

    @classmethod
    def from_rows(cls, rows: Sequence) -> "_Rows":
        """From (chunk_id, tenant, lang, draft, effective_from, effective_to, superseded_from, ...) rows."""
        return cls(ids=[r[0] for r in rows], **FilterColumns.columns((r[1:7] for r in rows), len(rows)))


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


class _Searches:
    """Keyword and dense search over the current version (the SQLiteStore methods of that name)."""

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
