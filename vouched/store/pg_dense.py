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
enough that the walk would visit most of the graph, are scanned exactly in the server instead,
as is a walk that comes back short (a filter that cuts the graph into islands).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from vouched.store import pg_blobs
from vouched.store.ann import AnnIndex, AnnParams, plan_dense
from vouched.store.rowfilter import FilterColumns
from vouched.types import Hits, SearchFilters

TABLE = "dense_blobs"
RESCORE_MARGIN = 0.125  # rows asked of the walk beyond the limit, as a share of it, rescored in float32


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
          progress: Callable[[int, int], None] | None = None, stop: Callable[[], bool] | None = None) -> PgDenseGraph:
    """The graph over a version's vectors (row i is chunk row rowids[i], with filter columns cols[i];
    `cols` may be a function that makes them, called first)."""
    cols = cols() if callable(cols) else cols
    if not (len(cols) == len(rowids) == len(vectors)):
        raise ValueError(f"{len(vectors)} vectors, {len(rowids)} rowids, {len(cols)} filter rows")
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
                 progress: Callable[[int, int], None] | None = None) -> None:
        import time

        self._stop = threading.Event()
        self._out: PgDenseGraph | None = None
        self._err: BaseException | None = None
        self.seconds = 0.0

        def run() -> None:
            t0 = time.perf_counter()
            try:
                self._out = build(vectors, rowids, cols, params, progress=progress, stop=self._stop.is_set)
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
           filters: SearchFilters) -> Hits | None:
    """The filtered top `limit` by exact cosine among the graph's candidates, plan "graph";
    None when the filtered rows should be scanned exactly instead (the caller's plan "exact").

    `where` holds the version, the gate and the filters (as `c.` columns); `args` their values.
    """
    p = graph.ann.params
    n = graph.size
    allowed = graph.cols.allowed(filters)
    bitmap, n_allowed = allowed.bitmap, allowed.count
    plan = plan_dense(n, n_allowed, limit, exact_max_rows=p.exact_max_rows, overfetch=p.overfetch, max_fetch=p.max_fetch)
    if plan.how == "none":
        return Hits((), "graph")
    if plan.how == "exact":
        return None
    # the walk ranks by float16 copies: a few rows past the limit let the float32 scores settle the
    # last places (rows within ~1e-4 of each other), as the exact scan would order them
    want = min(limit + math.ceil(limit * RESCORE_MARGIN), n_allowed)
    # a filter that allows a share s of the rows widens the walk to limit x overfetch / s (plan.fetch)
    labels = graph.ann.search(q, want, ef=max(p.ef_search, plan.fetch), allowed=bitmap)
    if len(labels) < min(limit, n_allowed):  # the walk came back short: scan the filtered rows exactly
        return None
    rows = conn.execute(
        f"SELECT c.chunk_id, 1 - (c.vec <=> %s::vector({dim})) FROM unnest(%s::int8[]) AS t(r) "
        f"JOIN chunks c ON c.rowid = t.r WHERE {where} ORDER BY c.vec <=> %s::vector({dim}), c.rowid LIMIT %s",
        [qtext, graph.rowids[labels].tolist(), *args, qtext, limit]).fetchall()
    return Hits([(r[0], float(r[1])) for r in rows], "graph")
