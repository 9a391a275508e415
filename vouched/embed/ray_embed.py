"""Embedding passages on a Ray cluster (optional extra: `pip install 'vouched[ray]'`).

`vouched ingest --ray ADDRESS` reads and chunks locally exactly as a local ingest does, looks
every passage up in the local embedding cache, and sends only the misses to the cluster:
Ray Data `map_batches` over a pool of actors, each holding one embedder built from the same
configuration (one thread each: the cluster's parallelism is its workers). The vectors come
back in input order and the local process writes the corpus version, so chunk ids and the
content hash are the local ingest's by construction and only the vectors travel; the
embedder's model id is the local one, so cache entries and calibration stay valid.

ADDRESS: `auto` joins the cluster this machine belongs to (`ray start`), or starts a local
one when there is none; `local` always starts a private local cluster; anything else is
passed to `ray.init(address=...)` (`ray://head:10001`, `head:6379`).
"""

from __future__ import annotations

import os
import time
from typing import Any, Sequence

import numpy as np

from vouched.embed.base import EmbedStats, Progress, passages_counted
from vouched.errors import EmbedderError

RAY_BATCH = 64  # passages per map_batches call


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


class _Worker:
    """One Ray actor: builds the configured embedder once, embeds batches of {"i", "text"}."""

    def __init__(self, model: str, options: dict[str, Any]) -> None:
        from vouched.embed import make_inner_embedder

        self.embedder = make_inner_embedder(model, **options)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        texts = [str(t) for t in batch["text"]]
        vecs, stats = passages_counted(self.embedder, texts)
        tokens = stats.tokens
        windows = stats.windows or len(texts)
        n = len(texts)
        return {"i": np.asarray(batch["i"], dtype=np.int64), "vec": np.asarray(vecs, dtype=np.float32),
                "tokens": np.full(n, tokens / max(n, 1)), "windows": np.full(n, windows / max(n, 1))}


class RayEmbedder:
    """An Embedder whose passages are embedded on a Ray cluster; queries stay local.

    `local` is the same embedder built here (for queries, the model id and the dimension);
    `model` and `options` rebuild it on every worker.
    """

    def __init__(self, local, model: str, options: dict[str, Any], address: str, workers: int | None = None) -> None:
        self.local = local
        self.model = model
        self.options = {**options, "threads": 1}  # one thread per actor: parallelism comes from the actors
        self.address = address
        self.workers = workers
        self.model_id = local.model_id
        self.dim = local.dim

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.local.embed_queries(texts)

    def _init(self):
        try:
            import ray
        except ImportError as exc:
            raise EmbedderError("--ray needs Ray: pip install 'vouched[ray]'") from exc
        if not ray.is_initialized():
            kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "ignore_reinit_error": True}
            # workers import vouched from the same checkout as this process
            kw["runtime_env"] = {"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", ""),
                                              "VOUCHED_CACHE_DIR": os.environ.get("VOUCHED_CACHE_DIR", "")}}
            if self.address == "local":
                ray.init(**kw)
            elif self.address == "auto":
                try:
                    ray.init(address="auto", **kw)
                except ConnectionError:
                    ray.init(**kw)
            else:
                ray.init(address=self.address, **kw)
        return ray

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return self.embed_passages_counted(texts, progress)[0]

    def embed_passages_counted(self, texts: Sequence[str], progress: Progress | None = None
                               ) -> tuple[np.ndarray, EmbedStats]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out, EmbedStats()
        t0, c0 = time.perf_counter(), time.process_time()
        ray = self._init()
        workers = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        # at least one block and one batch per worker, so a small corpus still spreads over all of them
        per = max(1, min(RAY_BATCH, -(-len(texts) // workers)))
        ds = ray.data.from_items([{"i": i, "text": t} for i, t in enumerate(texts)],
                                 override_num_blocks=max(1, min(len(texts), workers * 4)))
        ds = ds.map_batches(_Worker, fn_constructor_kwargs={"model": self.model, "options": self.options},
                            batch_size=per, batch_format="numpy", concurrency=workers, num_cpus=1)
        seen = 0
        tokens = windows = 0.0
        for batch in ds.iter_batches(batch_size=per, batch_format="numpy"):
            idx = batch["i"]
            out[idx] = batch["vec"]
            tokens += float(np.sum(batch["tokens"]))
            windows += float(np.sum(batch["windows"]))
            seen += len(idx)
            if progress:
                progress(len(idx))
        if seen != len(texts):
            raise EmbedderError(f"the Ray cluster returned {seen} vectors for {len(texts)} passages")
        return out, EmbedStats(texts=len(texts), tokens=int(round(tokens)), windows=int(round(windows)),
                               batches=-(-len(texts) // per), seconds=time.perf_counter() - t0,
                               cpu_seconds=time.process_time() - c0, threads=workers)
