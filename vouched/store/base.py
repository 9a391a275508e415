"""The Store protocol: what every backend (SQLite now, PostgreSQL later) must do.

A store holds corpus versions. Ingest writes a whole new version and switches to it
atomically; readers always see exactly one complete version. Search methods return raw
candidate lists (ids with the retriever's native score); bounded scores and fusion are
the retriever's job, so every backend fuses with the same code.

Filters (tenant, languages, as-of validity date, drafts, superseded documents) are applied
inside each backend's query, before the top-k cut — never on the results afterwards.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from datetime import date
from typing import Callable, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np

from vouched.errors import ShrinkRefused, StoreError
from vouched.types import Chunk, DocFreq, Record, SearchFilters


@dataclass(frozen=True)
class CorpusVersion:
    id: int
    hash: str
    created_at: str
    chunk_count: int
    record_count: int
    embedding_model: str
    dim: int
    note: str = ""


@runtime_checkable
class VersionWriter(Protocol):
    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None: ...

    def add_records(self, records: Sequence[Record]) -> None: ...

    def __enter__(self) -> "VersionWriter": ...

    def __exit__(self, *exc) -> bool | None: ...


@runtime_checkable
class Store(Protocol):
    def new_version(self, *, note: str = "", embedding_model: str = "", dim: int = 0,
                    max_shrink: float | None = None) -> VersionWriter: ...

    def switch_to(self, version_id: int | None = None) -> CorpusVersion:
        """Make a kept version current, atomically (None: the newest one older than the current)."""
        ...

    def current_version(self) -> CorpusVersion | None: ...

    def versions(self) -> list[CorpusVersion]: ...

    def keyword_search(self, terms: Sequence[str], filters: SearchFilters, limit: int) -> list[tuple[str, float]]:
        """Chunk ids matching any of the (already analysed) terms, best first, with a BM25 score (higher is better)."""
        ...

    def dense_search(self, vector: np.ndarray, filters: SearchFilters, limit: int) -> list[tuple[str, float]]:
        """Chunk ids nearest to a unit query vector, best first, with their raw cosine."""
        ...

    def score_dense(self, vector: np.ndarray, ids: Sequence[str], tenant: str = "default") -> dict[str, float]:
        """Raw cosine of the given chunks (e.g. keyword-only candidates) to a unit query vector."""
        ...

    def get_chunks(self, ids: Sequence[str], tenant: str = "default") -> dict[str, Chunk]:
        """Chunks of the current version, by id, within one tenant (ids are unique per tenant)."""
        ...

    def get_terms(self, ids: Sequence[str], tenant: str = "default") -> dict[str, frozenset[str]]:
        """The analysed keyword terms of each chunk (what coverage is counted against)."""
        ...

    def records(self, tenant: str = "default") -> list[Record]: ...

    def doc_freq(self, terms: Sequence[str]) -> DocFreq:
        """Chunks of the current version holding each (analysed) term, and the version's chunk count.

        Read from the keyword index's own statistics (FTS5's fts5vocab, the in-memory index's
        posting lists, PostgreSQL's `term_df`) and cached per corpus version.
        """
        ...

    def close(self) -> None: ...


def term_df(term: str, token_df: dict[str, int], tokens: Callable[[str], list[str]]) -> int:
    """A stored term's document frequency from its index tokens' ("3.5" is the tokens 3 and 5):
    the smallest of theirs, an upper bound on the chunks that hold the whole term."""
    parts = tokens(term)
    return min((token_df.get(p, 0) for p in parts), default=0)


class DocFreqCache:
    """Per-version memo of term document frequencies (a new version empties it)."""

    def __init__(self, max_terms: int = 200_000) -> None:
        self._vid: object = None
        self._df: dict[str, int] = {}
        self._n = 0
        self._max = max_terms

    def lookup(self, vid: object, n_docs: int, terms: Sequence[str],
               fetch: Callable[[list[str]], dict[str, int]]) -> DocFreq:
        if vid != self._vid:
            self._vid, self._df, self._n = vid, {}, n_docs
        want = [t for t in dict.fromkeys(terms) if t and t not in self._df]
        if want:
            got = fetch(want)
            if len(self._df) + len(want) > self._max:
                self._df = {}
            for t in want:
                self._df[t] = int(got.get(t, 0))
        return DocFreq(self._n, {t: self._df.get(t, 0) for t in terms if t})


def _default(o):
    if isinstance(o, date):
        return o.isoformat()
    raise TypeError(type(o))


def corpus_hash(chunks: Iterable[Chunk], records: Iterable[Record]) -> str:
    """Content hash of a corpus version: the same documents give the same hash, anywhere."""
    h = hashlib.sha256()
    for c in sorted(chunks, key=lambda c: (c.tenant, c.id)):
        h.update(json.dumps(asdict(c), sort_keys=True, default=_default, ensure_ascii=False).encode("utf-8"))
    for r in sorted(records, key=lambda r: (r.tenant, r.id)):
        h.update(json.dumps(asdict(r), sort_keys=True, default=_default, ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def superseded_from(chunks: Sequence[Chunk]) -> dict[tuple[str, str], date]:
    """(tenant, doc_id) → the date from which a published document supersedes it.

    A document that names `supersedes: X` replaces X from its own effective_from (or from
    always, when it has none). Drafts supersede nothing.
    """
    out: dict[tuple[str, str], date] = {}
    for c in chunks:
        if c.supersedes and not c.draft:
            start = c.effective_from or date.min
            key = (c.tenant, c.supersedes)
            out[key] = min(out.get(key, date.max), start)
    return out


def shrink_refusal(current: CorpusVersion | None, chunks: int, records: int, max_shrink: float | None) -> str | None:
    """Why a new version of `chunks` chunks and `records` records must not replace `current`, or None.

    The size of a version is its chunks plus its records. A version with nothing in it is never
    switched to (the first one included: a site must not start empty by mistake); one losing more
    than `max_shrink` (a share, 0..1) of the current size is refused. `max_shrink=None` checks
    nothing (the caller allowed the shrink).
    """
    if max_shrink is None:
        return None
    new = chunks + records
    if new == 0:
        served = f"; version {current.id} ({current.chunk_count} chunks, {current.record_count} records) still serves" if current else ""
        return f"the new corpus version would hold no chunks and no records{served}"
    if current is None:
        return None
    old = current.chunk_count + current.record_count
    if old == 0 or new >= old:
        return None
    lost = (old - new) / old
    if lost > max_shrink + 1e-12:
        return (f"the new corpus version would hold {chunks} chunks and {records} records, {lost:.0%} less than version "
                f"{current.id} ({current.chunk_count} chunks, {current.record_count} records); corpus.max_shrink allows "
                f"{max_shrink:.0%}. Version {current.id} still serves")
    return None


def version_rollback_target(versions: Sequence[CorpusVersion], current: int | None, wanted: int | None) -> CorpusVersion:
    """The version `rollback` switches to: `wanted`, or the newest version older than `current`."""
    if wanted is not None:
        found = next((v for v in versions if v.id == wanted), None)
        if found is None:
            kept = ", ".join(str(v.id) for v in versions) or "none"
            raise StoreError(f"corpus version {wanted} is not in the store (versions kept: {kept}; see `vouched versions`)")
        return found
    older = [v for v in versions if current is None or v.id < current]
    if not older:
        raise StoreError("no older corpus version to roll back to (store.keep_versions sets how many are kept; see `vouched versions`)")
    return older[-1]


def keep_order(old_ids: Sequence[int], previous: int | None) -> list[int]:
    """Versions older than the new one, in the order they are kept: the one that was serving
    until now first (so `rollback` can always return to it), then newest first."""
    ids = sorted(old_ids, reverse=True)
    if previous in ids:
        ids.remove(previous)
        ids.insert(0, previous)
    return ids


class _WritesVersions(Protocol):
    def _write_version(self, buffer: "VersionBuffer") -> CorpusVersion: ...


class VersionBuffer:
    """Collects a corpus version in memory; on a clean exit the store writes it and switches to
    it in one transaction (``store._write_version(self)``). Shared by the SQLite and PostgreSQL stores."""

    def __init__(self, store: "_WritesVersions", note: str, embedding_model: str, dim: int,
                 progress: Callable[[int], None] | None, max_shrink: float | None = None) -> None:
        self._store, self._note, self._model, self._dim, self._progress = store, note, embedding_model, dim, progress
        self.max_shrink = max_shrink
        self._chunks: list[Chunk] = []
        self._vectors: list[np.ndarray] = []
        self._records: list[Record] = []
        self.version: CorpusVersion | None = None
        # seconds per phase of this write, filled in by the store as it writes ("ann_build_s",
        # "keyword_index_build_s"; PostgreSQL: "copy_chunks_s", "hnsw_build_s", "total_s", …)
        self.build_times: dict[str, float] = {}

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray | None) -> None:
        if vectors is not None and len(vectors) != len(chunks):
            raise StoreError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        if vectors is not None and len(chunks):
            if vectors.ndim != 2 or (self._dim and vectors.shape[1] != self._dim):
                raise StoreError(f"vectors must have shape (n, {self._dim or 'dim'}), got {vectors.shape}")
            self._dim = self._dim or vectors.shape[1]
        self._chunks.extend(chunks)
        if vectors is not None:
            self._vectors.append(np.asarray(vectors, dtype=np.float32))
        elif chunks:
            self._vectors.append(np.full((len(chunks), 0), np.nan, dtype=np.float32))

    def add_records(self, records: Sequence[Record]) -> None:
        self._records.extend(records)

    def check_shrink(self, current: CorpusVersion | None) -> None:
        """Called by the store inside its write transaction, before anything is written."""
        why = shrink_refusal(current, len(self._chunks), len(self._records), self.max_shrink)
        if why:
            raise ShrinkRefused(f"ingest refused: {why}. Check the paths given; pass --allow-shrink if this is intended")

    def __enter__(self) -> "VersionBuffer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.version = self._store._write_version(self)

