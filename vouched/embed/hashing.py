"""A deterministic hashing embedder: the test stand-in for a real model.

Each content word (normalised, stemmed) and each character trigram is hashed to a
signed bucket; the vector is their normalised sum. Texts that share words get a high
cosine, unrelated texts a low one — enough for tests of the plumbing, not for quality.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from vouched.embed.base import Progress, unit_rows


def _bucket(token: str, dim: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


class HashingEmbedder:
    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.model_id = f"hashing-{dim}"
        self.calls = 0  # tests read this to prove an embedder was (not) used

    def _one(self, text: str) -> np.ndarray:
        from vouched.text import analyze

        v = np.zeros(self.dim, dtype=np.float32)
        for term in analyze(text):
            i, s = _bucket("w:" + term, self.dim)
            v[i] += s
            padded = f"#{term}#"
            for j in range(len(padded) - 2):
                i, s = _bucket("t:" + padded[j : j + 3], self.dim)
                v[i] += 0.3 * s
        return v

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return unit_rows(np.stack([self._one(t) for t in texts]))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        out = self._embed(texts)
        if progress:
            progress(len(texts))
        return out
