"""Typed values that cross module boundaries. All frozen: build new values, don't mutate."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date
from typing import Iterable, Mapping


@dataclass(frozen=True)
class Chunk:
    """One retrievable passage of a document, with everything needed to filter and cite it.

    `text` is the chunk's own body; `overlap` is the tail of the previous chunk of the same
    section (prefixed for retrieval, never shown as this chunk's own words).
    """

    id: str
    doc_id: str
    text: str
    title: str = ""
    section: str = ""
    overlap: str = ""
    version: str = "1"
    page: int | None = None
    position: int = 0
    source: str = ""
    url: str | None = None
    lang: str = "en"
    tenant: str = "default"
    updated_at: date | None = None
    effective_from: date | None = None
    effective_to: date | None = None
    supersedes: str | None = None
    authority: int = 0
    draft: bool = False
    flags: tuple[str, ...] = ()

    @property
    def indexed_text(self) -> str:
        """What keyword and dense search see: overlap, then the body."""
        return f"{self.overlap}\n{self.text}" if self.overlap else self.text

    @property
    def embed_text(self) -> str:
        """The passage text given to the embedder: title and section give the body context."""
        head = " — ".join(p for p in (self.title, self.section) if p)
        return f"{head}\n{self.indexed_text}" if head else self.indexed_text

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.embed_text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Record:
    """A structured, dated entry of the site: a CV item, case study, article or service."""

    id: str
    kind: str  # cv | case_study | article | service | education | skill | ...
    title: str
    summary: str = ""
    start: str | None = None  # ISO date at the precision the site shows: "2021", "2021-03", "2021-03-05"
    end: str | None = None
    current: bool = False
    url: str | None = None
    organisation: str = ""
    lang: str = "en"
    tenant: str = "default"
    translations: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class SearchFilters:
    """Filters applied inside the store's queries, never after."""

    tenant: str = "default"
    langs: tuple[str, ...] | None = None  # None: every language
    as_of: date | None = None  # None: today
    include_drafts: bool = False
    any_time: bool = False  # ignore validity dates and supersession (the L2 out-of-force check only)


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk with its three numbers.

    dense: cosine clipped to [0, 1]; keyword: rarity-weighted coverage in [0, 1] (0 unless ≥2
    content words match, or one rare one); evidence = max(dense, keyword). `fused` is the RRF score: it decides order only
    and is never compared with a threshold.
    """

    chunk: Chunk
    rank: int
    dense: float
    keyword: float
    evidence: float
    fused: float
    dense_rank: int | None = None
    keyword_rank: int | None = None


class Hits(list):
    """A store search's (chunk id, score) pairs, best first, and the plan that found them.

    ``plan``: for dense search "exact", "ann", "ann+exact", "hnsw", "graph" or "none"; for keyword
    search "fts5", "index", "impact" or "join". Returned with the hits, never left on the
    store (a store is shared by concurrent searches). Compares equal to the plain list.

    ``terms`` and ``langs``: a store whose search read the rows anyway (PostgreSQL's keyword
    search) may return each hit's analysed terms and language with it, what `get_terms` and
    `get_chunks` would answer for those ids, so the retriever need not ask again (None: ask).
    """

    def __init__(self, hits: Iterable[tuple[str, float]] = (), plan: str = "", *,
                 terms: Mapping[str, frozenset[str]] | None = None, langs: Mapping[str, str] | None = None) -> None:
        super().__init__(hits)
        self.plan = plan
        self.terms = terms
        self.langs = langs


@dataclass(frozen=True)
class SearchTimes:
    """Milliseconds per retrieval stage of one search."""

    embed_ms: float = 0.0
    keyword_ms: float = 0.0
    dense_ms: float = 0.0
    fuse_ms: float = 0.0
    extra: Mapping[str, float] = field(default_factory=dict)  # stages a search may skip: "rerank_ms"


@dataclass(frozen=True)
class SearchResult:
    passages: tuple[Passage, ...]
    query_lang: str
    modes_used: tuple[str, ...]  # ("dense", "keyword") or ("keyword",) when the embedder failed
    warnings: tuple[str, ...] = ()
    corpus_version: str | None = None
    doc_freq: "DocFreq | None" = None  # of the query's analysed terms (rarity weights, rare anchors)
    times: SearchTimes = field(default_factory=SearchTimes)  # where this search's time went
    rerank_scores: Mapping[str, float] = field(default_factory=dict)  # chunk id → bounded rerank score, when reranked
    dense_plan: str = ""  # Hits.plan of the dense search ("" when none ran)
    keyword_plan: str = ""  # Hits.plan of the keyword search ("" when none ran)

    @property
    def evidence(self) -> float:
        """The best bounded score among the returned passages (what L2 compares)."""
        return max((p.evidence for p in self.passages), default=0.0)


@dataclass(frozen=True)
class DocFreq:
    """How many chunks of the current corpus version hold each analysed term.

    ``n_docs`` counts every chunk of the version (all tenants, as the keyword index's BM25
    does); a term absent from ``df`` is in none. What "rare" and the rarity weights of
    keyword coverage are measured with.
    """

    n_docs: int
    df: Mapping[str, int] = field(default_factory=dict)

    def get(self, term: str) -> int:
        return int(self.df.get(term, 0))

    def share(self, term: str) -> float:
        return self.get(term) / self.n_docs if self.n_docs else 0.0
