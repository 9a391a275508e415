"""L1, second half: refusal by meaning, on the question's embedding (issue 15).

The pattern packs refuse what they were written for; another author's paraphrase of the
same request ("could we get Mara on board for the spring?") often slips past them (blind
holdout4: 0.806 of the questions to refuse). This check reads the question the way the
retriever does — one multilingual-e5-small query vector — and refuses it when a small
classifier over that vector (one hidden layer) is confident it belongs to a refusal category AND the
question is close to refusal paraphrases the project has seen. Both must hold: the
classifier generalises across wording and language, the neighbourhood keeps it from
firing on ordinary questions far from anything it was trained on.

    vector = e5.query(intent_text(question, subject names))      name → "mara", as in training
    x      = (vector − mu) / sd
    p      = softmax(W2 · relu(W1 · x + b1) + b2)                  seven classes: other + six
    p_refuse = Σ p[c] over the categories in force for this question
    knn    = mean cosine of the 3 nearest refusal examples in the bank
    refuse ⇔ p_refuse ≥ tau and knn ≥ knn_min and the question has ≥ min_words words

Categories in force: the site kind's (guard.kinds), and the four that speak of a person
(fees, hiring, private, speculation) only when the question may be about the subject
(``may_be_about_subject``): it names the subject or uses its pronoun, or it names no other
person, place or organisation — "who did Emma marry?" is not about the site's subject, while
"¿cuánto cobra por una auditoría?" (Spanish drops the pronoun) is. The pipeline reads them only
for a person subject (pronoun she/he/they): an organisation's name read as the person token
turned "what does a tracking number of <company> look like?" into a phone number. The category given is the
most probable one among those in force. Refusal texts are the fixed per-category ones.

It runs after the pattern packs, the records route and small talk, before retrieval: the
question has to be embedded for retrieval anyway, so it costs one more query embedding
(the text differs from the one retrieval embeds) and no model call. It only runs with the
model it was trained on (``model_id``); with any other embedder (the hashing stand-in of
the unit tests, say) it is off, and the trace says so.

The weights, the scaling and the bank ship in ``intent_model.npz``, built by
``python -m vouched.bench.intent_build`` from data kept in the repository: the L1 paraphrase
set (every split; each blind holdout was scored before it joined), the examples kept beside every
pattern, and a set of ordinary site questions. The file records the hash
of that data; a test fails when the data changed and the model was not rebuilt.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from typing import Iterable, Sequence

import numpy as np

__all__ = ["CLASSES", "PERSON", "IntentModel", "IntentMatch", "intent_text", "load_model", "may_be_about_subject", "word_count"]

CLASSES: tuple[str, ...] = ("other", "meta", "private", "fees", "speculation", "hiring", "task")
PERSON = frozenset({"private", "fees", "speculation", "hiring"})  # need the subject in the question
SUBJECT_TOKEN = "mara"  # the example subject's name, as training read it
MODEL_FILE = "intent_model.npz"


def intent_text(question: str, subject_names: Sequence[str] = ()) -> str:
    """The form the classifier reads: the L1 matching text with the subject's name(s) as one token."""
    from vouched.guard.packs import PLACEHOLDER, subject_texts

    return subject_texts(question, subject_names)[0].replace(PLACEHOLDER, SUBJECT_TOKEN)


_HAN = re.compile("[\u3400-\u9fff]")


def may_be_about_subject(about_subject: bool, anchors) -> bool:
    """The person categories apply: the subject is named (or its pronoun used), or no other
    name is (``anchors``: the question's ``vouched.text.anchors.Anchors``, subject names exempt)."""
    return about_subject or not any(a.kind == "name" for a in anchors.items)


def word_count(text: str) -> int:
    """Words on spaces; Chinese ideographs as two words per three characters (as the gate counts)."""
    han = len(_HAN.findall(text))
    return len(_HAN.sub(" ", text).split()) + (2 * han) // 3


@dataclass(frozen=True)
class IntentMatch:
    category: str
    p: float  # the classifier's probability for the refusal categories in force
    knn: float  # mean cosine of the 3 nearest refusal examples

    def describe(self) -> str:
        return f"semantic {self.category} (p={self.p:.3f}, knn={self.knn:.3f})"


@dataclass(frozen=True)
class IntentModel:
    model_id: str
    classes: tuple[str, ...]
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]  # (W, b) per layer, ReLU between; the last gives the classes
    mu: np.ndarray
    sd: np.ndarray
    bank: np.ndarray  # int8 (n, dim): refusal examples, each row scaled to 127 at its largest
    bank_scale: np.ndarray  # (n,) float32: row i ≈ bank[i] * bank_scale[i]
    tau: float
    knn_min: float
    min_words: int
    data_sha: str
    k: int = 3

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        z = (np.asarray(vectors, dtype=np.float32) - self.mu) / self.sd
        for i, (w, b) in enumerate(self.layers):
            z = z @ w + b
            if i < len(self.layers) - 1:
                z = np.maximum(z, 0.0)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    @cached_property
    def _bank_rows(self) -> np.ndarray:
        """The bank as float32 rows (dequantised once: about 4 bytes a number, 11 MB for 7,000 rows)."""
        return np.ascontiguousarray(self.bank.astype(np.float32) * self.bank_scale[:, None])

    def knn(self, vectors: np.ndarray) -> np.ndarray:
        sims = np.asarray(vectors, dtype=np.float32) @ self._bank_rows.T
        k = min(self.k, sims.shape[1])
        return np.sort(np.partition(sims, -k, axis=1)[:, -k:], axis=1).mean(axis=1)

    def decide(self, vectors: np.ndarray, *, about_subject: Sequence[bool], words: Sequence[int],
               categories: Iterable[str] | None = None) -> list[IntentMatch | None]:
        """One decision per row of ``vectors`` (unit query vectors of ``intent_text``).

        ``categories``: the refusal categories in force (None: all six); ``about_subject``:
        whether each question may be about the subject (``may_be_about_subject``); ``words``:
        their ``word_count``."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.mu.shape[0]:
            raise ValueError(f"intent model wants (n, {self.mu.shape[0]}) vectors, got {vectors.shape}")
        force = set(self.classes[1:]) if categories is None else set(categories)
        probs = self.probabilities(vectors)
        near = self.knn(vectors)
        out: list[IntentMatch | None] = []
        for i in range(len(vectors)):
            allowed = [c for c in self.classes[1:] if c in force and (about_subject[i] or c not in PERSON)]
            if not allowed or words[i] < self.min_words:
                out.append(None)
                continue
            cols = [self.classes.index(c) for c in allowed]
            p = float(probs[i, cols].sum())
            if p >= self.tau and near[i] >= self.knn_min:
                best = allowed[int(np.argmax(probs[i, cols]))]
                out.append(IntentMatch(best, p, float(near[i])))
            else:
                out.append(None)
        return out

    def read(self, embedder, questions: Sequence[str], *, subject_names: Sequence[str] = (),
             about_subject: Sequence[bool], categories: Iterable[str] | None = None) -> list[IntentMatch | None]:
        """``decide`` for questions as written: read as ``intent_text``, embedded as queries by
        ``embedder`` (one batch), counted by ``word_count``. The pipeline and the benchmark
        both come here, so they cannot read a question differently."""
        texts = [intent_text(q, subject_names) for q in questions]
        if not texts:
            return []
        return self.decide(embedder.embed_queries(texts), about_subject=about_subject,
                           words=[word_count(t) for t in texts], categories=categories)

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        np.savez_compressed(
            buf, **{f"w{i}": w.astype(np.float32) for i, (w, _) in enumerate(self.layers)},
            **{f"b{i}": b.astype(np.float32) for i, (_, b) in enumerate(self.layers)},
            mu=self.mu.astype(np.float32), sd=self.sd.astype(np.float32),
            bank=self.bank.astype(np.int8), bank_scale=self.bank_scale.astype(np.float32),
            meta=np.array([self.model_id, ",".join(self.classes), repr(self.tau), repr(self.knn_min),
                           str(self.min_words), self.data_sha, str(self.k)]))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, raw: bytes) -> "IntentModel":
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            model_id, classes, tau, knn_min, min_words, sha, k = (str(x) for x in z["meta"])
            layers = tuple((z[f"w{i}"], z[f"b{i}"]) for i in range(sum(1 for name in z.files if name.startswith("w"))))
            return cls(model_id=model_id, classes=tuple(classes.split(",")), layers=layers, mu=z["mu"],
                       sd=z["sd"], bank=z["bank"], bank_scale=z["bank_scale"], tau=float(tau),
                       knn_min=float(knn_min), min_words=int(min_words), data_sha=sha, k=int(k))


def quantize_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and their scales (row ≈ q * scale): a cosine with a unit row moves by about 1e-3 at most."""
    rows = np.asarray(rows, dtype=np.float32)
    peak = np.abs(rows).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.round(rows / scale[:, None]).astype(np.int8), scale


def data_sha(texts_and_labels: Iterable[tuple[str, str]]) -> str:
    h = hashlib.sha256()
    for text, label in texts_and_labels:
        h.update(label.encode() + b"\t" + text.encode("utf-8") + b"\n")
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def load_model() -> IntentModel | None:
    """The shipped model, or None when the package has none."""
    try:
        raw = resources.files("vouched.guard").joinpath(MODEL_FILE).read_bytes()
    except (FileNotFoundError, OSError):
        return None
    return IntentModel.from_bytes(raw)
