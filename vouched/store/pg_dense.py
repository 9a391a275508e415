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
version's own transaction, with the rowid of each graph label and each tenant's row count. No
pgvector graph is built for such a version (`corpus_versions.ann_type = 'process'`); versions
written before, or with `dense_graph = "server"`, keep pgvector's graph and its query.

What is searched. The graph finds candidate rows; ONE statement sends their rowids to the
server, which keeps those passing the filters and the current-version gate and scores them by
their float32 vectors (`1 - (vec <=> q)`), best first — so a score never reads float16 and a
filter is never applied after the LIMIT. How many candidates to ask for is `ann.plan_dense`'s
rule (the SQLite store's), with the tenant's share of the version as the selectivity: the whole
limit with no other tenant, limit x overfetch / share otherwise, and an exact filtered scan in
the server when the tenant's rows are few or the fetch would be most of the graph. Validity
dates and drafts are not known in the process: when fewer than `limit` candidates pass, the
fetch grows x4 until it passes `max_fetch`, then the server scans the filtered rows exactly.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from vouched.store import pg_blobs
from vouched.store.ann import AnnIndex, AnnParams, plan_dense
from vouched.types import Hits

TABLE = "dense_blobs"


@dataclass(frozen=True)
class PgDenseGraph:
    """One version's graph: label i is the chunk row `rowids[i]`; `tenants` counts the rows of each tenant."""

    ann: AnnIndex
    rowids: np.ndarray  # int64
    tenants: dict[str, int]

    @property
    def size(self) -> int:
        return len(self.rowids)


def build(vectors: np.ndarray, rowids: Sequence[int], tenants: Sequence[str], params: AnnParams, *,
          progress: Callable[[int, int], None] | None = None, stop: Callable[[], bool] | None = None) -> PgDenseGraph:
    """The graph over a version's vectors (row i is chunk row rowids[i] of tenant tenants[i])."""
    ann = AnnIndex.build(vectors, params, fp16=True, progress=progress, stop=stop)
    return PgDenseGraph(ann, np.asarray(rowids, dtype=np.int64), dict(Counter(tenants)))


class Builder:
    """`build` in a thread of its own, started as a version's write begins: the graph is built
    while this process analyses texts and the server loads rows and postings; `result()` waits
    for it. faiss releases the GIL while it adds rows, so the two overlap."""

    def __init__(self, vectors: np.ndarray, rowids: Sequence[int], tenants: Sequence[str], params: AnnParams,
                 progress: Callable[[int, int], None] | None = None) -> None:
        import time

        self._stop = threading.Event()
        self._out: PgDenseGraph | None = None
        self._err: BaseException | None = None
        self.seconds = 0.0

        def run() -> None:
            t0 = time.perf_counter()
            try:
                self._out = build(vectors, rowids, tenants, params, progress=progress, stop=self._stop.is_set)
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
    pg_blobs.write(conn, TABLE, vid, {"graph": graph.ann.to_bytes(), "rowids": graph.rowids,
                                      "tenants": json.dumps(graph.tenants, sort_keys=True).encode("utf-8")})


def load(conn, vid: int, dim: int, params: AnnParams) -> PgDenseGraph | None:
    """Version `vid`'s graph from dense_blobs; None if it has none."""
    parts = pg_blobs.read(conn, TABLE, vid, ("graph", "rowids", "tenants"))
    if set(parts) != {"graph", "rowids", "tenants"}:
        return None
    rowids = np.frombuffer(parts.pop("rowids"), dtype=np.int64)
    tenants = {str(k): int(v) for k, v in json.loads(parts.pop("tenants").decode("utf-8")).items()}
    ann = AnnIndex.from_bytes(np.frombuffer(parts.pop("graph"), dtype=np.uint8), params)
    if ann.size != len(rowids) or ann.dim != dim or sum(tenants.values()) != len(rowids):
        raise ValueError(f"dense_blobs of version {vid}: a graph of {ann.size} x {ann.dim} for {len(rowids)} rows "
                         f"of dimension {dim}")
    return PgDenseGraph(ann, rowids, tenants)


def search(conn, graph: PgDenseGraph, q: np.ndarray, qtext: str, dim: int, where: str, args: list, limit: int,
           tenant: str) -> Hits | None:
    """The filtered top `limit` by exact cosine among the graph's candidates, plan "graph";
    None when the filtered rows should be scanned exactly instead (the caller's plan "exact").

    `where` holds the version, the gate and the filters (as `c.` columns); `args` their values.
    """
    p = graph.ann.params
    n = graph.size
    plan = plan_dense(n, graph.tenants.get(tenant, 0), limit, exact_max_rows=p.exact_max_rows,
                      overfetch=p.overfetch, max_fetch=p.max_fetch)
    if plan.how == "none":
        return Hits((), "graph")
    if plan.how == "exact":
        return None
    fetch = plan.fetch
    while True:
        labels = graph.ann.search(q, fetch)
        rows = conn.execute(
            f"SELECT c.chunk_id, 1 - (c.vec <=> %s::vector({dim})) FROM unnest(%s::int8[]) AS t(r) "
            f"JOIN chunks c ON c.rowid = t.r WHERE {where} ORDER BY c.vec <=> %s::vector({dim}), c.rowid LIMIT %s",
            [qtext, graph.rowids[labels].tolist(), *args, qtext, limit]).fetchall()
        if len(rows) >= limit:
            return Hits([(r[0], float(r[1])) for r in rows], "graph")
        fetch *= 4  # dates or drafts left too few (or the version was replaced): ask the graph for more,
        if fetch > p.max_fetch or fetch >= n:  # and past max_fetch scan the filtered rows exactly
            return None
