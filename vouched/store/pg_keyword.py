"""PostgreSQL keyword search from an in-memory BM25 index that the database itself keeps.

Why. The SQL keyword query (`PostgresStore._keyword_in`, plan "impact") sums every posting of
the question's terms in a hash aggregate before it can sort: at 1M synthetic chunks that was
80 of a hybrid search's 87 ms (docs/scale-out.md). This is the SQLite store's answer
(vouched.store.keyword_index, after bm25s) moved to PostgreSQL: one posting list per term
(CSC: row positions + weights), summed with one `np.bincount`, the best `cand` rows taken with
`argpartition`; only those rows go to the server, which applies the filters and the
current-version gate and maps them to chunk ids in one statement.

Same scores as the SQL path, to the bit where it can be. The weights are the postings' `w`,
computed in float64 from the same integers with the same IEEE operations in the same order
(tf, the chunk's lexeme count, the version's avgdl: `postings_weights`); idf is PostgreSQL's
GREATEST(ln((n - df + 0.5) / (df + 0.5)), 1e-6), df being a term's posting count (= term_df)
and n the version's chunk count. float64, not float32: float32 weights move scores by ~1e-7
relative, enough to reorder near-ties against the SQL path, and the index is the SQL path's
replacement, not an approximation of it. Terms are numbered in code-point order (= COLLATE
"C", the postings' order), so a query's per-row sum adds its terms in that order.

Persistence. `keyword_blobs` (migration 5) holds a version's arrays as bytea, each split into
parts of `pg_blobs.PART_BYTES` (a bytea value is at most 1 GB), written in the version's own transaction:
a visible version either has its index or was written before migration 5 (no rows: the SQL
path answers). Loaded once per process on the first keyword query of a version.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from vouched.store import pg_blobs
from vouched.store.keyword_index import B, IDF_FLOOR, K1, sum_postings  # FTS5's bm25() constants, as postgres.BM25_K1 / BM25_B
from vouched.types import Hits

_ARRAYS = {"vocab": np.uint8, "indptr": np.int64, "rows": np.int32, "weights": np.float64, "rowids": np.int64}


@dataclass(frozen=True)
class PgKeywordIndex:
    """One version's posting lists; rows are positions in `rowids` (the version's chunks.rowid, ascending)."""

    vocab: dict[str, int]  # term -> id, ids in code-point order of the terms
    indptr: np.ndarray  # (V + 1,) int64: postings of term t are [indptr[t], indptr[t+1])
    rows: np.ndarray  # int32 row positions, ascending within each term
    weights: np.ndarray  # float64: the posting's `w`
    rowids: np.ndarray  # int64 chunks.rowid of each position, ascending

    @property
    def nbytes(self) -> int:
        return self.indptr.nbytes + self.rows.nbytes + self.weights.nbytes + self.rowids.nbytes

    def scores(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(positions ascending, BM25 scores) of every row holding at least one of `terms`."""
        n = len(self.rowids)
        tids = sorted({self.vocab[t] for t in terms if t in self.vocab})
        if not tids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        parts = []
        for t in tids:
            a, b = int(self.indptr[t]), int(self.indptr[t + 1])
            df = b - a
            idf = max(math.log((float(n) - df + 0.5) / (df + 0.5)), IDF_FLOOR)  # as the SQL path's ln (libm log)
            parts.append((self.rows[a:b], idf * self.weights[a:b]))
        return sum_postings(parts, n)


def top(rows: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Indices into `rows` of the best k by (score desc, row asc): the SQL path's ORDER BY s DESC, rowid LIMIT k."""
    if k >= len(rows):
        return np.arange(len(rows))
    thr = scores[np.argpartition(-scores, k - 1)[:k]].min()
    above = np.flatnonzero(scores > thr)
    ties = np.flatnonzero(scores == thr)[: k - len(above)]  # rows ascending: the lowest rowids win a tie
    return np.concatenate([above, ties])


def index_search(conn, index: PgKeywordIndex, vid: int, terms: Sequence[str], where: str, args: list,
                 limit: int, first_cand: int, allowed: np.ndarray | None = None) -> Hits:
    """The filtered top `limit` of version `vid` (`where` holds its gate and the filters), plan "index".

    The best `cand` rows go to the server, which keeps those passing `where`, best first. Exact
    as the SQL path is: when `limit` of them pass they are the filtered top; otherwise cand
    grows x4 until every matching row was sent. `allowed` (a bool per position: the version's
    filter columns, vouched.store.rowfilter): the filters apply here first, so the best `limit`
    allowed rows are the answer and one statement (which keeps `where` as a guard) maps them.
    """
    rows, sc = index.scores(terms)
    cand = first_cand
    if allowed is not None:
        keep = allowed[rows]
        rows, sc = rows[keep], sc[keep]
        cand = limit
    while len(rows):
        sel = top(rows, sc, cand)
        got = conn.execute(
            f"""SELECT c.chunk_id, t.s, c.terms, c.lang FROM unnest(%s::int8[], %s::float8[]) AS t(r, s)
                JOIN chunks c ON c.rowid = t.r WHERE c.version_id = {int(vid)}{where} ORDER BY t.s DESC, c.rowid LIMIT %s""",
            [index.rowids[rows[sel]].tolist(), sc[sel].tolist(), *args, limit]).fetchall()
        if len(got) >= limit or len(sel) == len(rows):
            # the rows' terms and languages come along: the retriever's coverage and language
            # checks need them, and they are on the heap pages just read (one round trip fewer)
            return Hits([(r[0], float(r[1])) for r in got], "index",
                        terms={r[0]: frozenset(r[2]) for r in got}, langs={r[0]: r[3] for r in got})
        if not got and conn.execute("SELECT 1 FROM store_state WHERE current_version = %s", (vid,)).fetchone() is None:
            break  # the version was replaced: nothing, and the caller re-reads the pointer
        cand *= 4
    return Hits((), "index")


# -- the SQL paths: versions written before migration 5 ("impact") and before migration 2 ("join") --
def impact_search(conn, vid: int, n: int, terms: Sequence[str], where: str, args: list, limit: int,
                  cand: int, gate: str) -> Hits:
    """BM25 from postings alone (w holds the dl-normalised term weight), best `cand` rows first;
    only those rows are joined to chunks for the filters (`where`, with the gate). Exact: when
    at least `limit` of the best `cand` pass the filters they are the filtered top (every other
    row scores lower); otherwise `cand` grows x4, up to every matching row."""
    while True:
        rows = conn.execute(
            f"""WITH q AS MATERIALIZED (
                       SELECT d.term, GREATEST(ln(({n}::float8 - d.df + 0.5::float8) / (d.df + 0.5::float8)), 1e-6::float8) AS idf
                       FROM term_df d WHERE d.version_id = {vid} AND d.term = ANY(%s)),
                     t AS (SELECT p.chunk_row, sum(q.idf * p.w) AS s
                           FROM postings p JOIN q ON p.term = q.term WHERE p.version_id = {vid}
                           GROUP BY p.chunk_row ORDER BY s DESC, p.chunk_row LIMIT %s),
                     s AS (SELECT t.chunk_row, t.s, count(*) OVER () AS kept FROM t)
                SELECT c.chunk_id, s.s, s.kept FROM s JOIN chunks c ON c.rowid = s.chunk_row
                WHERE c.version_id = {vid}{where}
                ORDER BY s.s DESC, c.rowid LIMIT %s""",
            [list(terms), cand + 1, *args, limit],
        ).fetchall()
        # `kept` <= cand: the best cand + 1 were every matching row (cand + 1: some may be left out)
        matched = int(rows[0][2]) if rows else None
        if len(rows) >= limit or (matched is not None and matched <= cand) or cand >= n:
            return Hits([(r[0], float(r[1])) for r in rows], "impact")
        if matched is None:  # nothing passed the filters: how many rows match at all?
            matched = conn.execute(
                f"SELECT count(DISTINCT chunk_row) FROM postings WHERE version_id = {vid} AND term = ANY(%s){gate}",
                [list(terms)]).fetchone()[0]
            if matched <= cand:
                return Hits((), "impact")
        cand *= 4


def join_search(conn, vid: int, terms: Sequence[str], where: str, args: list, limit: int) -> Hits:
    """Versions written before migration 2 (no postings.w): dl from chunks, every matching row joined."""
    rows = conn.execute(
        f"""WITH v AS (SELECT chunk_count::float8 AS n, GREATEST(total_terms, 1)::float8 / GREATEST(chunk_count, 1) AS avgdl
                       FROM corpus_versions WHERE id = {vid}),
                 q AS (SELECT d.term, GREATEST(ln((v.n - d.df + 0.5) / (d.df + 0.5)), 1e-6) AS idf
                       FROM term_df d, v WHERE d.version_id = {vid} AND d.term = ANY(%s)),
                 p AS (SELECT p.chunk_row, p.tf::float8 AS tf, q.idf FROM postings p JOIN q ON p.term = q.term
                       WHERE p.version_id = {vid})
            SELECT c.chunk_id, sum(p.idf * (p.tf * {K1 + 1})
                   / (p.tf + {K1} * (1 - {B} + {B} * c.n_terms / v.avgdl))) AS s
            FROM p JOIN chunks c ON c.rowid = p.chunk_row CROSS JOIN v
            WHERE c.version_id = {vid}{where}
            GROUP BY c.rowid, c.chunk_id ORDER BY s DESC, c.rowid LIMIT %s""",
        [list(terms), *args, limit],
    ).fetchall()
    return Hits([(r[0], float(r[1])) for r in rows], "join")


class IndexWriter:
    """A version's postings collected while its chunks are written (a chunk's distinct lexemes, their counts)."""

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}  # term -> id in first-seen order
        self._terms = array("i")
        self._tf = array("i")
        self._n_terms = array("i")  # per chunk: its posting count
        self._dl = array("i")  # per chunk: its lexeme count (chunks.n_terms)

    def add(self, uniq: Sequence[str], tf: Sequence[int], dl: int) -> None:
        v = self._vocab
        self._terms.extend([v.setdefault(t, len(v)) for t in uniq])
        self._tf.extend(tf)
        self._n_terms.append(len(uniq))
        self._dl.append(dl)

    def build(self, rowids: Sequence[int], avgdl: float) -> PgKeywordIndex:
        """The index over the chunks added, in order; chunk i is chunks.rowid rowids[i]."""
        names = sorted(self._vocab)  # code point order = COLLATE "C"
        rank = np.empty(len(names), dtype=np.int32)
        rank[np.fromiter((self._vocab[t] for t in names), dtype=np.int64, count=len(names))] = np.arange(len(names))
        rid = np.asarray(rowids, dtype=np.int64)
        by_rowid = np.argsort(rid, kind="stable")
        pos = np.empty(len(rid), dtype=np.int32)
        pos[by_rowid] = np.arange(len(rid), dtype=np.int32)  # chunk i -> its position in rowid order
        counts = np.frombuffer(self._n_terms, dtype=np.int32)
        term = rank[np.frombuffer(self._terms, dtype=np.int32)]
        row = np.repeat(pos, counts)
        order = np.lexsort((row, term))  # (term, row): each term's postings in rowid order
        row = row[order]
        tf = np.frombuffer(self._tf, dtype=np.int32)[order]
        del order
        dl = np.empty(len(rid), dtype=np.float64)
        dl[pos] = np.frombuffer(self._dl, dtype=np.int32)
        weights = postings_weights(tf, dl[row], avgdl)
        indptr = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=len(names)), out=indptr[1:])
        return PgKeywordIndex({t: i for i, t in enumerate(names)}, indptr, row, weights, rid[by_rowid])


def postings_weights(tf: np.ndarray, dl: np.ndarray, avgdl: float) -> np.ndarray:
    """`postings.w` as PostgresStore._write_version's INSERT computes it, operation for operation in float8:
    tf * (k1 + 1) / (tf + k1 * ((1 - b) + b * dl / avgdl))."""
    tf = tf.astype(np.float64)
    return tf * (K1 + 1) / (tf + K1 * ((1 - B) + B * dl / float(avgdl)))


def write(conn, vid: int, index: PgKeywordIndex) -> None:
    """Store `index` as version `vid`'s keyword_blobs rows (inside the version's write transaction)."""
    pg_blobs.write(conn, "keyword_blobs", vid, {"vocab": "\n".join(index.vocab).encode("utf-8"), "indptr": index.indptr,
                                                "rows": index.rows, "weights": index.weights, "rowids": index.rowids})


def load(conn, vid: int) -> PgKeywordIndex | None:
    """Version `vid`'s index from keyword_blobs; None if it has none (written before migration 5)."""
    parts = pg_blobs.read(conn, "keyword_blobs", vid, _ARRAYS)
    if not parts:
        return None
    a = {k: np.frombuffer(parts.pop(k), dtype=t) for k, t in _ARRAYS.items()}
    text = a.pop("vocab").tobytes().decode("utf-8")
    vocab = {t: i for i, t in enumerate(text.split("\n"))} if text else {}
    if len(a["indptr"]) != len(vocab) + 1 or len(a["rows"]) != len(a["weights"]) or a["indptr"][-1] != len(a["rows"]):
        raise ValueError(f"keyword_blobs of version {vid}: inconsistent arrays")
    return PgKeywordIndex(vocab, a["indptr"], a["rows"], a["weights"], a["rowids"])
