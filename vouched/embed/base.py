"""The Embedder protocol: every dense model vouched can use looks like this."""

from __future__ import annotations

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
