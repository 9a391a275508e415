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

from vouched.errors import StoreError
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
    def new_version(self, *, note: str = "", embedding_model: str = "", dim: int = 0) -> VersionWriter: ...

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


class _WritesVersions(Protocol):
    def _write_version(self, buffer: "VersionBuffer") -> CorpusVersion: ...


class VersionBuffer:
    """Collects a corpus version in memory; on a clean exit the store writes it and switches to
    it in one transaction (``store._write_version(self)``). Shared by the SQLite and PostgreSQL stores."""

    def __init__(self, store: "_WritesVersions", note: str, embedding_model: str, dim: int,
                 progress: Callable[[int], None] | None) -> None:
        self._store, self._note, self._model, self._dim, self._progress = store, note, embedding_model, dim, progress
        self._chunks: list[Chunk] = []
        self._vectors: list[np.ndarray] = []
        self._records: list[Record] = []
        self.version: CorpusVersion | None = None

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

    def __enter__(self) -> "VersionBuffer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.version = self._store._write_version(self)

