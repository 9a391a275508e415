"""PostgreSQL dense search from an HNSW graph held in the search process (plan "graph").

Why. pgvector walks its HNSW graph through PostgreSQL's buffer manager: every visited node is a
page read (~9.6k buffer hits for one query at ef_search 400 over 100k rows), and at 100k
synthetic chunks that walk was 12–18 ms of a 21–25 ms hybrid search, against 1.3–1.7 ms for the
same walk in faiss in process memory (docs/scale-out.md, third to fifth pass). The keyword side
already moved its sum into the process (vouched.store.pg_keyword); this moves the dense walk.

What is stored. When a version is written with `dense_graph = "process"` (the default) the
writer builds a faiss HNSW graph over the version's vectors — float16 copies (`IndexHNSWSQ`,
QT_fp16: half the memory of float32 for the same walk), M and ef_construction from `AnnParams`
as the SQLite store's graph — and stores it serialised in `dense_blobs` (migration 6) in the
version's own transaction, with the rowid of each graph label and its filter columns. No
pgvector graph is built for such a version (`corpus_versions.ann_type = 'process'`); versions
written before, or with `dense_graph = "server"`, keep pgvector's graph and its query.

What is searched. The graph finds candidate rows; ONE statement sends their rowids to the
server, which scores them by their float32 vectors (`1 - (vec <=> q)`), best first, under the
current-version gate — so a score never reads float16. Filters apply inside the walk, never after
its top-k cut: the version's filter columns (tenant, language, draft, validity dates:
`vouched.store.rowfilter`, stored beside the graph) give the exact set of rows a search allows,
as a bitmap the walk returns only from (faiss `IDSelectorBitmap`), so the graph is asked for
exactly `limit` rows and one statement answers (before: candidates were filtered in the server
and a shortfall, as dates or drafts always leave one, cost a second, four times larger, round).
The statement keeps the filters too, as a guard. Whether to walk at all is `ann.plan_dense`'s
rule (the SQLite store's) with the exact allowed count: rows few enough, or a filter selective
enough that the walk would visit most of the graph, are scanned exactly instead (below),
as is a walk that comes back short (a filter that cuts the graph into islands).

Small versions. A version of at most the store's `exact_below` rows is searched exactly; it gets
the float16 copies without a graph (`AnnIndex.build_flat`), and every search scans them in
process and sends the best rows to the same statement (`scan`, plan "exact"): the server scan's
list, proven by the float16 error bound and checked on the scores the statement returns, or the
server scan itself when the bound cannot settle it. Selective filters and short walks on large
versions take the same scan.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from vouched.store import pg_blobs
from vouched.store.ann import AnnIndex, AnnParams, plan_dense
from vouched.store.rowfilter import Allowed, FilterColumns
from vouched.types import Hits, SearchFilters

TABLE = "dense_blobs"
RESCORE_MARGIN = 0.125  # rows asked of the walk beyond the limit, as a share of it, rescored in float32
SCAN_MARGIN = 16  # rows a scan sends beyond the limit (at least; twice the limit when that is more)
# the most a float16 copy of a unit vector moves its inner product with a query, per unit of the
# query's length (the float16 rounding, 2^-11 of each component), and what float32 sums of 384
# terms may add in faiss and in the server
FP16_SCORE_ERROR = 2.0**-11
SUM_ERROR = 5e-5


@dataclass(frozen=True)
class PgDenseGraph:
    """One version's graph: label i is the chunk row `rowids[i]`, with filter columns `cols[i]`."""

    ann: AnnIndex
    rowids: np.ndarray  # int64
    cols: FilterColumns

    @property
    def size(self) -> int:
        return len(self.rowids)

    @property
    def tenants(self) -> dict[str, int]:
        """Rows per tenant."""
        counts = np.bincount(self.cols.tenant, minlength=len(self.cols.tenants))
        return {t: int(counts[i]) for t, i in self.cols.tenants.items()}


def build(vectors: np.ndarray, rowids: Sequence[int], cols: FilterColumns | Callable[[], FilterColumns], params: AnnParams, *,
          progress: Callable[[int, int], None] | None = None, stop: Callable[[], bool] | None = None,
          flat: bool = False) -> PgDenseGraph:
    """The graph over a version's vectors (row i is chunk row rowids[i], with filter columns cols[i];
    `cols` may be a function that makes them, called first). flat: the float16 copies without a
    graph (a version every search scans: at most the store's exact_below rows)."""
    cols = cols() if callable(cols) else cols
    if not (len(cols) == len(rowids) == len(vectors)):
        raise ValueError(f"{len(vectors)} vectors, {len(rowids)} rowids, {len(cols)} filter rows")
    if flat:
        ann = AnnIndex.build_flat(vectors, params, fp16=True)
        if progress is not None:
            progress(len(vectors), len(vectors))
    else:
        ann = AnnIndex.build(vectors, params, fp16=True, progress=progress, stop=stop)
    return PgDenseGraph(ann, np.asarray(rowids, dtype=np.int64), cols)


def columns(chunks: Sequence, superseded: dict) -> FilterColumns:
    """The filter columns of a version's chunks (`superseded`: base.superseded_from of them)."""
    return FilterColumns.build(((c.tenant, c.lang, c.draft, c.effective_from, c.effective_to,
                                 superseded.get((c.tenant, c.doc_id))) for c in chunks), len(chunks))


class Builder:
    """`build` in a thread of its own, started as a version's write begins: the graph is built
    while this process analyses texts and the server loads rows and postings; `result()` waits
    for it. faiss releases the GIL while it adds rows, so the two overlap."""

    def __init__(self, vectors: np.ndarray, rowids: Sequence[int], cols: FilterColumns | Callable[[], FilterColumns], params: AnnParams,
                 progress: Callable[[int, int], None] | None = None, *, flat: bool = False) -> None:
        import time

        self._stop = threading.Event()
        self._out: PgDenseGraph | None = None
        self._err: BaseException | None = None
        self.seconds = 0.0

        def run() -> None:
            t0 = time.perf_counter()
            try:
                self._out = build(vectors, rowids, cols, params, progress=progress, stop=self._stop.is_set, flat=flat)
            except BaseException as exc:  # handed to the writer by result()
                self._err = exc
            self.seconds = time.perf_counter() - t0

        self._thread = threading.Thread(target=run, name="vouched-dense-graph", daemon=True)
        self._thread.start()

    def result(self) -> PgDenseGraph:
        self._thread.join()
        if self._err is not None:
            raise self._err
        assert self._out is not None
        return self._out

    def cancel(self) -> None:
        """Stop at the next step and wait (the write failed)."""
        self._stop.set()
        self._thread.join()


def write(conn, vid: int, graph: PgDenseGraph) -> None:
    """Store `graph` as version `vid`'s dense_blobs rows (inside the version's write transaction)."""
    pg_blobs.write(conn, TABLE, vid, {"graph": graph.ann.to_bytes(), "rowids": graph.rowids, **graph.cols.to_blobs()})


def load_columns(conn, vid: int) -> FilterColumns | None:
    """Version `vid`'s filter columns from dense_blobs; None if it has none (not written with a process graph)."""
    parts = pg_blobs.read(conn, TABLE, vid, FilterColumns.BLOBS)
    if not parts:
        return None
    if set(parts) != set(FilterColumns.BLOBS):
        raise ValueError(f"dense_blobs of version {vid}: filter columns {sorted(parts)}, expected {sorted(FilterColumns.BLOBS)}")
    n = len(parts["col_draft"])
    return FilterColumns.from_blobs(parts, n)


def load(conn, vid: int, dim: int, params: AnnParams, cols: FilterColumns | None = None) -> PgDenseGraph | None:
    """Version `vid`'s graph from dense_blobs (with its filter columns, read here unless given); None if it has none."""
    parts = pg_blobs.read(conn, TABLE, vid, ("graph", "rowids"))
    if not parts:
        return None
    cols = cols if cols is not None else load_columns(conn, vid)
    if set(parts) != {"graph", "rowids"} or cols is None:
        raise ValueError(f"dense_blobs of version {vid}: parts {sorted(parts)}, filter columns {cols is not None}")
    rowids = np.frombuffer(parts.pop("rowids"), dtype=np.int64)
    ann = AnnIndex.from_bytes(np.frombuffer(parts.pop("graph"), dtype=np.uint8), params)
    if ann.size != len(rowids) or ann.dim != dim or len(cols) != len(rowids):
        raise ValueError(f"dense_blobs of version {vid}: a graph of {ann.size} x {ann.dim} for {len(rowids)} rows "
                         f"of dimension {dim} and {len(cols)} filter rows")
    return PgDenseGraph(ann, rowids, cols)


def search(conn, graph: PgDenseGraph, q: np.ndarray, qtext: str, dim: int, where: str, args: list, limit: int,
           filters: SearchFilters, *, exact: bool = False, in_process: bool = True) -> Hits | None:
    """The filtered top `limit` by exact cosine, plan "graph" (among the walk's candidates) or
    "exact" (every allowed row scanned in process, `scan`); None when the server should scan the
    filtered rows itself (the caller's exact plan).

    `where` holds the version, the gate and the filters (as `c.` columns); `args` their values.
    exact: scan, never walk (a version small enough to be searched exactly).
    in_process: false leaves every scan to the server (None where this would scan).
    """
    p = graph.ann.params
    n = graph.size
    allowed = graph.cols.allowed(filters)
    bitmap, n_allowed = allowed.bitmap, allowed.count
    plan = plan_dense(n, n_allowed, limit, exact_max_rows=p.exact_max_rows, overfetch=p.overfetch, max_fetch=p.max_fetch)
    if plan.how == "none":
        return Hits((), "exact" if exact else "graph")
    if graph.ann.walkable and not exact and plan.how != "exact":
        # the walk ranks by float16 copies: a few rows past the limit let the float32 scores settle the
        # last places (rows within ~1e-4 of each other), as the exact scan would order them
        want = min(limit + math.ceil(limit * RESCORE_MARGIN), n_allowed)
        # a filter that allows a share s of the rows widens the walk to limit x overfetch / s (plan.fetch)
        labels = graph.ann.search(q, want, ef=max(p.ef_search, plan.fetch), allowed=bitmap)
        if len(labels) >= min(limit, n_allowed):
            rows = _rescore(conn, graph, labels, qtext, dim, where, args, limit)
            return Hits([(r[0], float(r[1])) for r in rows], "graph")
        # the walk came back short (a filter that leaves islands in the graph): scan instead
    return scan(conn, graph, q, qtext, dim, where, args, limit, filters, allowed=allowed) if in_process else None


def scan(conn, graph: PgDenseGraph, q: np.ndarray, qtext: str, dim: int, where: str, args: list, limit: int,
         filters: SearchFilters, *, allowed: Allowed | None = None) -> Hits | None:
    """The filtered top `limit`, exactly as the server's scan would give it (plan "exact"), from an
    exhaustive scan of the allowed rows' float16 copies in process and one statement that scores
    the best of them by their float32 vectors; None when the float16 scores cannot settle which
    rows those are (then the server scans).

    Why exact: for unit vectors a float16 copy moves an inner product by at most FP16_SCORE_ERROR
    (|q|·2^-11, plus SUM_ERROR for the float32 sums). A row left out scores at most the last candidate's float16 score plus that; when
    the limit-th candidate's float16 score is more than twice the error above the last
    candidate's, `limit` candidates beat every row left out in float32 too, so the statement's
    top `limit` is the scan's. The statement's float32 cosines are compared with the float16
    scores as a guard: a row whose two scores differ by more than the bound (a vector that is not
    of unit length) sends the search to the server. `allowed`: the rows `filters` allows, when the
    caller has them already (`search` does).
    """
    allowed = allowed if allowed is not None else graph.cols.allowed(filters)
    n_allowed = allowed.count
    if n_allowed == 0 or limit <= 0:
        return Hits((), "exact")
    want = min(n_allowed, max(2 * limit, limit + SCAN_MARGIN))
    scores, labels = graph.ann.scan(q, want, allowed=allowed.bitmap)
    err = FP16_SCORE_ERROR * float(np.linalg.norm(q)) + SUM_ERROR
    if len(labels) < want:
        return None  # pragma: no cover - faiss scores every allowed row
    if want < n_allowed and not scores[limit - 1] - scores[-1] > 2 * err:
        return None  # rows within the float16 error of each other straddle the cut (near-duplicates)
    rows = _rescore(conn, graph, labels, qtext, dim, where, args, limit, with_rowid=True)
    if len(rows) < min(limit, n_allowed):
        return None  # the statement's filters or gate kept fewer than the columns allowed: let the server decide
    f16 = dict(zip(graph.rowids[labels].tolist(), scores.tolist()))
    if any(abs(float(r[1]) - f16[r[2]]) > err for r in rows):
        return None
    return Hits([(r[0], float(r[1])) for r in rows], "exact")


def _rescore(conn, graph: PgDenseGraph, labels: np.ndarray, qtext: str, dim: int, where: str, args: list, limit: int,
             *, with_rowid: bool = False) -> list:
    """The candidates `labels`, filtered by `where` and scored by their float32 vectors in the server, best `limit` first."""
    extra = ", c.rowid" if with_rowid else ""
    return conn.execute(
        f"SELECT c.chunk_id, 1 - (c.vec <=> %s::vector({dim})){extra} FROM unnest(%s::int8[]) AS t(r) "
        f"JOIN chunks c ON c.rowid = t.r WHERE {where} ORDER BY c.vec <=> %s::vector({dim}), c.rowid LIMIT %s",
        [qtext, graph.rowids[labels].tolist(), *args, qtext, limit]).fetchall()
