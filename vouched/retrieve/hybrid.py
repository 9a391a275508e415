"""Hybrid retrieval: dense and keyword search run separately, fused by weighted RRF.

The two lists are filtered inside the store (tenant, language, validity date, drafts,
superseded documents). Fusion decides order only; every returned passage carries its dense
cosine (clipped), its keyword coverage and evidence = max(dense, keyword).

Fusion across languages: keyword search cannot match a question against a passage written
in another language, while dense search can. Plain RRF would let the keyword list — which
then holds only accidental matches (names, numbers) — outvote the dense list. So a keyword
candidate contributes to fusion only if it is in the question's language AND has coverage
> 0 (at least two distinct question terms match); when no keyword candidate qualifies, the
keyword list is dropped and the order is the dense order. Measured on XQuAD es→en, see the
README.

Reranking (rerank.py), when `retrieval.rerank.enabled` or `search(rerank=True)`: after
fusion the first `rerank.candidates` passages are re-scored and reordered, then cut to
k. It runs in hybrid mode only (the modes keyword and dense are the single lists, kept for
benchmarks and fallbacks). If its embedder fails, the fused order stands and a warning says so.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from vouched.config import RetrievalSettings
from vouched.embed.base import Embedder
from vouched.retrieve.evidence import clip_cosine, weighted_coverage
from vouched.retrieve.fusion import fused_order, rrf
from vouched.retrieve.rerank import CrossEncoder, CrossEncoderScorer, OnnxCrossEncoder, SentenceScorer, rerank
from vouched.store.base import Store
from vouched.text import LANGS, analyze, detect_language
from vouched.types import Hits, Passage, SearchFilters, SearchResult, SearchTimes

Mode = Literal["hybrid", "dense", "keyword"]
MODES: tuple[str, ...] = ("keyword", "dense", "hybrid")

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _dense_pool() -> ThreadPoolExecutor:
    """The process's threads for dense searches run beside the keyword side (stores with
    ``concurrent_reads``); one per possible concurrent request is plenty, they only wait on I/O."""
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(max_workers=max(4, 2 * (os.cpu_count() or 1)),
                                           thread_name_prefix="vouched-dense")
    return _POOL


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, (time.perf_counter() - t0) * 1000


@dataclass
class StageTimes:
    """Milliseconds per retrieval stage of one search, while it runs (then SearchResult.times)."""

    embed_ms: float = 0.0
    keyword_ms: float = 0.0
    dense_ms: float = 0.0
    fuse_ms: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


class HybridRetriever:
    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        settings: RetrievalSettings | None = None,
        languages: tuple[str, ...] = LANGS,
        default_language: str = "en",
        cross_encoder: CrossEncoder | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings or RetrievalSettings()
        self.languages = tuple(languages)
        self.default_language = default_language
        self._cross_encoder = cross_encoder
        self._scorer = None

    def _rerank_scorer(self):
        """Built on first use: a cross-encoder loads its model only when a search needs it."""
        if self._scorer is None:
            path = self.settings.rerank.cross_encoder_path
            if self._cross_encoder is None and path is not None:
                self._cross_encoder = OnnxCrossEncoder(path)
            if self._cross_encoder is not None:
                self._scorer = CrossEncoderScorer(self._cross_encoder)
            elif self.embedder is not None:
                self._scorer = SentenceScorer(self.embedder)
        return self._scorer

    def search(
        self,
        query: str,
        *,
        filters: SearchFilters = SearchFilters(),
        k: int | None = None,
        mode: Mode = "hybrid",
        query_lang: str | None = None,
        query_vector: np.ndarray | None = None,
        rerank: bool | None = None,
    ) -> SearchResult:
        """Search; `rerank` None follows `retrieval.rerank.enabled` (hybrid mode only)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        k = k or self.settings.top_k
        n_cand = max(self.settings.candidates, k)
        lang = query_lang or detect_language(query, self.languages, self.default_language)
        times = StageTimes()
        warnings: list[str] = []
        modes_used: list[str] = []

        qvec = query_vector
        if mode != "keyword" and qvec is None:
            if self.embedder is None:
                warnings.append("no embedder configured: keyword search only")
            else:
                t0 = time.perf_counter()
                try:
                    qvec = self.embedder.embed_queries([query])[0]
                except Exception as exc:  # the embedder is down: keyword retrieval still answers
                    warnings.append(f"embedder unavailable ({exc}): keyword search only")
                times.embed_ms = (time.perf_counter() - t0) * 1000

        dense: list[tuple[str, float]] = []
        want_dense = mode != "keyword" and qvec is not None
        want_keyword = mode != "dense" or qvec is None
        pending = None
        if want_dense:
            modes_used.append("dense")
            if want_keyword and getattr(self.store, "concurrent_reads", False):
                # A server store (PostgreSQL) answers the two searches on two connections at
                # once: the dense walk runs in a worker thread while this one does the keyword
                # side (same calls, same results; only the waiting overlaps).
                pending = _dense_pool().submit(_timed, self.store.dense_search, qvec, filters, n_cand)
            else:
                dense, times.dense_ms = _timed(self.store.dense_search, qvec, filters, n_cand)

        q_terms = analyze(query, lang, unique=True)
        keyword: list[tuple[str, float]] = []
        kw_terms: dict[str, frozenset[str]] = {}
        doc_freq = None
        try:
            if want_keyword:
                t0 = time.perf_counter()
                keyword = self.store.keyword_search(q_terms, filters, n_cand)
                known = getattr(keyword, "terms", None)  # a store may return them with the hits
                kw_terms = known if known is not None else self.store.get_terms([i for i, _ in keyword], filters.tenant)
                times.keyword_ms = (time.perf_counter() - t0) * 1000
                modes_used.append("keyword")
            if q_terms and hasattr(self.store, "doc_freq"):
                doc_freq = self.store.doc_freq(q_terms)  # rarity weights of keyword coverage (cached per version)
        except BaseException:
            if pending is not None:  # the keyword side failed: its error is the one raised
                wait([pending])
            raise
        if pending is not None:
            dense, times.dense_ms = pending.result()  # (re-raises the dense search's error)
        do_rerank = (self.settings.rerank.enabled if rerank is None else rerank) and mode == "hybrid"
        n_fused = max(k, self.settings.rerank.candidates) if do_rerank else k
        t0 = time.perf_counter()
        passages = self._fuse(dense, keyword, kw_terms, q_terms, lang, qvec, filters, n_fused, mode, doc_freq)
        times.fuse_ms = (time.perf_counter() - t0) * 1000
        rerank_scores: dict[str, float] = {}
        if do_rerank:
            t0 = time.perf_counter()
            passages = self._rerank(query, qvec, passages, k, warnings, rerank_scores)
            times.extra["rerank_ms"] = (time.perf_counter() - t0) * 1000
        version = self.store.current_version()
        return SearchResult(tuple(passages), lang, tuple(modes_used), tuple(warnings), version.hash if version else None,
                            doc_freq=doc_freq, rerank_scores=rerank_scores,
                            times=SearchTimes(times.embed_ms, times.keyword_ms, times.dense_ms, times.fuse_ms,
                                              dict(times.extra)),
                            dense_plan=dense.plan if isinstance(dense, Hits) else "",
                            keyword_plan=keyword.plan if isinstance(keyword, Hits) else "")

    def _fuse(self, dense, keyword, kw_terms, q_terms, lang, qvec, filters, k, mode, doc_freq=None) -> list[Passage]:
        kw_cov = {i: weighted_coverage(q_terms, kw_terms.get(i, ()), doc_freq) for i, _ in keyword}
        lists: dict[str, list[str]] = {}
        if dense:
            lists["dense"] = [i for i, _ in dense]
        if keyword:
            if mode == "keyword" or not dense:
                lists["keyword"] = [i for i, _ in keyword]
            else:
                # Only keyword candidates that can really match the question may vote.
                known = getattr(keyword, "langs", None)  # a store may return them with the hits
                chunks_lang = known if known is not None else self._langs([i for i, _ in keyword if kw_cov[i] > 0], filters.tenant)
                eligible = [i for i, _ in keyword if kw_cov[i] > 0 and chunks_lang.get(i) == lang]
                if eligible:
                    lists["keyword"] = eligible
        weights = {"dense": self.settings.weights.dense, "keyword": self.settings.weights.keyword}
        fused = rrf(lists, weights, self.settings.rrf_k)
        dense_rank = {i: r for r, (i, _) in enumerate(dense, start=1)}
        kw_rank = {i: r for r, (i, _) in enumerate(keyword, start=1)}
        order = fused_order(fused, tiebreak=dense_rank or kw_rank)[:k]
        if not order:
            return []
        cos = {i: s for i, s in dense}
        if qvec is not None:
            missing = [i for i in order if i not in cos]
            if missing:
                cos.update(self.store.score_dense(qvec, missing, filters.tenant))
        missing_terms = [i for i in order if i not in kw_terms]
        if missing_terms:
            kw_terms = {**kw_terms, **self.store.get_terms(missing_terms, filters.tenant)}
        chunks = self.store.get_chunks(order, filters.tenant)
        out = []
        for rank, i in enumerate(order, start=1):
            d = clip_cosine(cos.get(i, 0.0))
            kw = kw_cov.get(i)
            if kw is None:
                kw = weighted_coverage(q_terms, kw_terms.get(i, ()), doc_freq)
            out.append(Passage(chunk=chunks[i], rank=rank, dense=d, keyword=kw, evidence=max(d, kw),
                               fused=fused[i], dense_rank=dense_rank.get(i), keyword_rank=kw_rank.get(i)))
        return out

    def _rerank(self, query: str, qvec, passages: list[Passage], k: int, warnings: list[str],
                scores: dict[str, float]) -> list[Passage]:
        cfg = self.settings.rerank
        head, tail = passages[: cfg.candidates], passages[cfg.candidates :]
        scorer = self._rerank_scorer()
        if scorer is None or (qvec is None and not isinstance(scorer, CrossEncoderScorer)):
            warnings.append("rerank skipped: no embedder for sentence scores; fused order kept")
            return passages[:k]
        try:
            done = rerank(query, qvec, head, scorer, weight=cfg.weight, k=cfg.rrf_k, min_score=cfg.min_score)
        except Exception as exc:  # a failing reranker must not fail retrieval: fusion already ordered it
            warnings.append(f"rerank failed ({exc}); fused order kept")
            return passages[:k]
        scores.update(done.scores)
        kept = list(done.passages)
        # Passages past the reranked head were never scored, so the cut cannot judge them:
        # with a cut they are left out; without one they follow in fused order.
        if cfg.min_score <= 0.0:
            kept += [replace(p, rank=len(kept) + n) for n, p in enumerate(tail, start=1)]
        return kept[:k]

    def _langs(self, ids: list[str], tenant: str) -> dict[str, str]:
        if not ids:
            return {}
        return {i: c.lang for i, c in self.store.get_chunks(ids, tenant).items()}
