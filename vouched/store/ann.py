"""Approximate nearest-neighbour (ANN) index for the SQLite store's dense search.

Below `[store] ann_min_chunks` the SQLite store searches its float32 matrix exactly (one
matrix product + argpartition). Above it, an HNSW graph (faiss-cpu `IndexHNSWFlat`, inner
product on unit vectors; chosen by measurement, see docs/ann-choice.md) finds candidates, and
their cosines are then recomputed exactly from the matrix, so the bounded score L2 reads is
never an approximation — only which passages are found is.

Versions. One index file per corpus version, named by the version's id AND content hash
(`<db>.v<id>-<hash16>.ann`) and written beside the SQLite file: to a temp file first, then
`os.replace`d into place before the version becomes current, so a reader that sees version
v finds exactly v's index, or none (then it builds one, again by temp + rename). Files of
versions that are no longer live are deleted after each write.

Filters (tenant, languages, validity dates, drafts, superseded) are a boolean mask over the
version's rows. `plan_dense` decides between over-fetching from the graph and filtering the
candidates, or searching the filtered rows exactly; see its docstring for the rule.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Literal

import numpy as np

from vouched.errors import StoreError

SUFFIX = ".ann"

# Exact search over this many allowed rows costs about as much as one graph query with the
# over-fetch it would need (measured: ~0.6 ms per 10k rows x 384 dims on one core).
EXACT_MAX_ROWS = 20_000
# Over-fetch headroom over the expected number of candidates that pass the filter.
OVERFETCH = 2.0
# Beyond this many candidates the graph walk costs more than it saves: search exactly.
MAX_FETCH = 4_096
# Rows added to a graph between two progress reports.
BUILD_STEP = 10_000


@dataclass(frozen=True)
class AnnParams:
    """HNSW parameters (M and ef_construction fix the graph; ef_search is read per query) and the filter plan's."""

    m: int = 16
    ef_construction: int = 100
    ef_search: int = 128
    threads: int = 0  # 0: every core faiss sees
    # how filtered queries are planned (see plan_dense)
    exact_max_rows: int = EXACT_MAX_ROWS
    overfetch: float = OVERFETCH
    max_fetch: int = MAX_FETCH


@dataclass(frozen=True)
class DensePlan:
    how: Literal["ann", "exact", "none"]
    fetch: int = 0


def plan_dense(n_total: int, n_allowed: int, limit: int, *,
               exact_max_rows: int = EXACT_MAX_ROWS, overfetch: float = OVERFETCH, max_fetch: int = MAX_FETCH) -> DensePlan:
    """How to find the `limit` nearest allowed rows among `n_total`, `n_allowed` passing the filter.

    The filter applies before the top-k cut either way. With no filter at all, the graph is
    asked for `limit`. With a filter of selectivity s = n_allowed / n_total, a graph search
    returns about s·fetch allowed rows, so it is asked for fetch = limit · overfetch / s.
    When that fetch would pass `max_fetch` (a selective filter: the walk would visit most of
    the graph), or when the allowed rows are so few that exact search over them is as cheap
    as a graph query (`exact_max_rows`), the allowed rows are searched exactly instead —
    which is also always correct. The caller falls back to exact search when an over-fetch
    still leaves fewer than `limit` allowed rows.
    """
    if limit <= 0 or n_allowed <= 0 or n_total <= 0:
        return DensePlan("none")
    if n_allowed < n_total and n_allowed <= exact_max_rows:
        return DensePlan("exact")
    if n_allowed >= n_total:
        return DensePlan("ann", min(limit, n_total))
    fetch = math.ceil(limit * overfetch * n_total / n_allowed)
    if fetch > max_fetch or fetch >= n_total:
        return DensePlan("exact")
    return DensePlan("ann", fetch)


def index_path(db_path: Path, version_id: int, version_hash: str, suffix: str = SUFFIX) -> Path:
    """The index file of one corpus version: named by id and content hash, beside the database.

    `suffix` names the kind of index: ".ann" (this module's HNSW graph) or ".kw.npz" (the
    keyword index, vouched.store.keyword_index)."""
    if not re.fullmatch(r"[0-9a-f]{16,}", version_hash):
        raise StoreError(f"corpus version hash {version_hash!r} is not a hex digest")
    return db_path.with_name(f"{db_path.name}.v{int(version_id)}-{version_hash[:16]}{suffix}")


def index_files(db_path: Path, suffix: str = SUFFIX) -> dict[Path, tuple[int, str]]:
    """Index files of one kind beside `db_path`, with the (version id, hash prefix) each belongs to."""
    out = {}
    name = re.compile(r"\.v(\d+)-([0-9a-f]{16})" + re.escape(suffix) + "$")
    for p in db_path.parent.glob(f"{glob_escape(db_path.name)}.v*{suffix}"):
        m = name.search(p.name)
        if m and p.name == f"{db_path.name}.v{m.group(1)}-{m.group(2)}{suffix}":
            out[p] = (int(m.group(1)), m.group(2))
    return out


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def prune_index_files(db_path: Path, live: Iterable[tuple[int, str]], suffix: str = SUFFIX) -> list[Path]:
    """Delete index files (of one kind) of versions not in `live` (pairs of id and full hash); returns them."""
    keep = {(vid, h[:16]) for vid, h in live}
    gone = []
    for p, key in index_files(db_path, suffix).items():
        if key not in keep:
            p.unlink(missing_ok=True)
            gone.append(p)
    return gone


def temp_beside(beside: Path, suffix: str, write: Callable[[str], None]) -> Path:
    """A fresh temp file in `beside`'s folder (same file system, so a rename is atomic),
    filled by `write(path)`; removed again if writing fails."""
    fd, tmp = tempfile.mkstemp(prefix=f".{beside.name}.", suffix=suffix, dir=beside.parent)
    os.close(fd)
    try:
        write(tmp)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def replace_with(tmp: Path, path: Path) -> None:
    """Rename `tmp` over `path` (atomic); `tmp` is removed if that fails."""
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class AnnIndex:
    """An HNSW graph over one version's unit vectors; labels are row positions in that version."""

    def __init__(self, index, params: AnnParams) -> None:
        self._index = index
        self.params = params

    @property
    def size(self) -> int:
        return int(self._index.ntotal)

    @property
    def dim(self) -> int:
        return int(self._index.d)

    @classmethod
    def build(cls, matrix: np.ndarray, params: AnnParams = AnnParams(), *, fp16: bool = False,
              progress: Callable[[int, int], None] | None = None,
              stop: Callable[[], bool] | None = None, step: int = BUILD_STEP) -> "AnnIndex":
        """The graph over `matrix`'s rows (labels: row positions).

        fp16: the graph keeps float16 copies of the vectors (faiss `IndexHNSWSQ`, QT_fp16) —
        half the memory of float32 for the same walk; for callers that score the rows it
        finds from their float32 vectors elsewhere (the PostgreSQL store). Rows are added
        `step` at a time (HNSW is incremental), so `progress(done, total)` is called between
        steps and `stop()` is asked there: true abandons the build (StoreError)."""
        faiss = _faiss()
        x = _matrix(matrix)
        if fp16:
            index = faiss.IndexHNSWSQ(x.shape[1], faiss.ScalarQuantizer.QT_fp16, params.m, faiss.METRIC_INNER_PRODUCT)
            index.train(x[:1])  # float16 needs no statistics: training only marks it ready
        else:
            index = faiss.IndexHNSWFlat(x.shape[1], params.m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = params.ef_construction
        with _threads(faiss, params.threads):
            for at in range(0, len(x), step):
                if stop is not None and stop():
                    raise StoreError("the ANN index build was stopped")
                index.add(x[at : at + step])
                if progress is not None:
                    progress(min(at + step, len(x)), len(x))
        return cls(index, params)

    @classmethod
    def build_flat(cls, matrix: np.ndarray, params: AnnParams = AnnParams(), *, fp16: bool = False) -> "AnnIndex":
        """No graph: the rows' copies alone (float16 with fp16), for a version small enough that
        every search scans it (`scan`; `search` then scans too). Built in a fraction of a graph's time."""
        faiss = _faiss()
        x = _matrix(matrix)
        if fp16:
            index = faiss.IndexScalarQuantizer(x.shape[1], faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
            index.train(x[:1])
        else:
            index = faiss.IndexFlatIP(x.shape[1])
        index.add(x)
        return cls(index, params)

    @property
    def walkable(self) -> bool:
        """Whether there is a graph to walk (false: `build_flat`, every search is a scan)."""
        return hasattr(self._index, "hnsw")

    def to_bytes(self) -> np.ndarray:
        """The whole index, serialised by faiss (a uint8 array): what `from_bytes` reads back."""
        return _faiss().serialize_index(self._index)

    @classmethod
    def from_bytes(cls, data: np.ndarray, params: AnnParams = AnnParams()) -> "AnnIndex":
        try:
            index = _faiss().deserialize_index(np.ascontiguousarray(data, dtype=np.uint8))
        except RuntimeError as exc:
            raise StoreError(f"cannot read a serialised ANN index: {exc}") from None
        return cls(index, params)

    @classmethod
    def load(cls, path: Path, params: AnnParams = AnnParams()) -> "AnnIndex":
        faiss = _faiss()
        try:
            index = faiss.read_index(str(path))
        except RuntimeError as exc:
            raise StoreError(f"cannot read ANN index {path}: {exc}; delete it and it is rebuilt") from None
        return cls(index, params)

    def write_temp(self, beside: Path) -> Path:
        """Write to a fresh temp file in `beside`'s folder (same file system, so a rename is atomic)."""
        return temp_beside(beside, ".ann.tmp", lambda tmp: _faiss().write_index(self._index, tmp))

    def save(self, path: Path) -> None:
        """Write atomically: a temp file in the same folder, then rename over `path`."""
        replace_with(self.write_temp(path), path)

    def search(self, vector: np.ndarray, k: int, *, ef: int | None = None, allowed: np.ndarray | None = None) -> np.ndarray:
        """Row positions of about the k nearest rows (inner product), best first; no scores.

        ef: the walk's candidate list (default: the params' ef_search; never below k).
        allowed: a bitmap of the rows that may be returned (`np.packbits(mask, bitorder="little")`):
        the walk passes through the others but returns only these, so a filter applies before
        the top-k cut."""
        if not self.walkable:
            return self.scan(vector, k, allowed=allowed)[1]
        faiss = _faiss()
        q, k = self._query(vector, k)
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(self.params.ef_search if ef is None else int(ef), k)
        sel = self._selector(faiss, params, allowed)  # noqa: F841 (kept alive while faiss reads it)
        _, labels = self._index.search(q, k, params=params)
        got = labels[0]
        return got[got >= 0]

    def scan(self, vector: np.ndarray, k: int, *, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The k rows of highest inner product by an exhaustive scan of the vectors the graph
        stores (its float16 copies, for a graph built with fp16), best first: (scores, row
        positions). No walk, so nothing is approximate but the stored copies themselves.
        allowed: as for `search`; only those rows are scored."""
        faiss = _faiss()
        q, k = self._query(vector, k)
        params = faiss.SearchParameters()
        sel = self._selector(faiss, params, allowed)  # noqa: F841 (kept alive while faiss reads it)
        stored = faiss.downcast_index(self._index.storage) if self.walkable else self._index
        scores, labels = stored.search(q, k, params=params)
        keep = labels[0] >= 0
        return scores[0][keep], labels[0][keep]

    def _query(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, int]:
        """The query as faiss reads it (one float32 row) and k within 1..size."""
        return np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(1, -1)), max(1, min(int(k), self.size))

    def _selector(self, faiss, params, allowed: np.ndarray | None):
        if allowed is None:
            return None
        if len(allowed) * 8 < self.size:
            raise StoreError(f"a bitmap of {len(allowed) * 8} rows for an index of {self.size}")
        params.sel = sel = faiss.IDSelectorBitmap(self.size, faiss.swig_ptr(allowed))
        return sel


def _matrix(matrix: np.ndarray) -> np.ndarray:
    """`matrix` as the float32 (n, dim) rows an index is built from; an error when it is empty or not 2-d."""
    x = np.ascontiguousarray(matrix, dtype=np.float32)
    if x.ndim != 2 or not len(x):
        raise StoreError(f"an ANN index needs a non-empty (n, dim) matrix, got shape {x.shape}")
    return x


def _faiss():
    try:
        import faiss
    except ImportError:  # pragma: no cover - faiss-cpu is a dependency
        raise StoreError("the ANN index needs faiss-cpu: pip install faiss-cpu") from None
    return faiss


class _threads:
    """faiss's OpenMP thread count for a block (0 leaves it as it is)."""

    def __init__(self, faiss, n: int) -> None:
        self._faiss, self._n, self._old = faiss, n, None

    def __enter__(self) -> None:
        if self._n > 0:
            self._old = self._faiss.omp_get_max_threads()
            self._faiss.omp_set_num_threads(self._n)

    def __exit__(self, *exc) -> None:
        if self._old is not None:
            self._faiss.omp_set_num_threads(self._old)
