"""The English verifier model of ``vouched.guard.verify``: ``flip_claim``, the model's features
(``MODEL_FEATURES``, ``model_features``), the fitted ``VerifyModel`` and its verdict.

Moved here unchanged from ``vouched.guard.verify``, which re-exports every public name; the
verdict itself (``decide``) stays there.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Sequence

import numpy as np

from vouched.guard.verify_evidence import (
    ClaimEvidence,
    Verification,
    VerifySettings,
    _ascii_digits,
    _opposite,
)

# ``vouched bench verify --fit --save`` on SciFact's 809 *train* claims only (their labelled
# abstracts plus one retrieval hard negative each), class-balanced; the coefficients, the
# feature scaling and their provenance are in ``verify_words/model.json``. Two variants: words
# only, and with sentence embeddings (cosines of the claim and of its flipped form).

# flip_claim: negation removed, else the first direction word swapped, else "not" inserted.
_SWAP_PAIRS = (
    ("increase", "decrease"), ("increases", "decreases"), ("increased", "decreased"), ("increasing", "decreasing"),
    ("higher", "lower"), ("more", "less"), ("greater", "smaller"), ("positively", "negatively"),
    ("positive", "negative"), ("enhances", "reduces"), ("enhance", "reduce"), ("enhanced", "reduced"),
    ("promotes", "inhibits"), ("promote", "inhibit"), ("promoted", "inhibited"), ("activates", "inhibits"),
    ("induces", "suppresses"), ("induce", "suppress"), ("raises", "lowers"), ("raise", "lower"),
    ("improves", "worsens"), ("improve", "worsen"), ("improved", "worsened"), ("upregulates", "downregulates"),
    ("upregulated", "downregulated"), ("upregulation", "downregulation"), ("accelerates", "slows"),
    ("beneficial", "harmful"), ("effective", "ineffective"), ("protective", "harmful"), ("high", "low"),
    ("elevated", "reduced"), ("gain", "loss"), ("rise", "fall"), ("rises", "falls"), ("likely", "unlikely"),
    ("better", "worse"), ("longer", "shorter"), ("faster", "slower"), ("larger", "smaller"), ("fewer", "more"),
    ("safe", "unsafe"), ("sufficient", "insufficient"), ("necessary", "unnecessary"), ("required", "dispensable"),
    ("associated", "unassociated"), ("risk", "protection"),
)
_SWAP: dict[str, str] = {}
for _a, _b in _SWAP_PAIRS:
    _SWAP.setdefault(_a, _b)
    _SWAP.setdefault(_b, _a)
_NO_SWAP = frozenset(("risk", "associated", "more", "high", "positive"))  # too often not the claim's direction
_NEG_WORD = re.compile(r"\b(not|no|never)\s+", re.I)
_AUX = re.compile(r"\b(is|are|was|were|can|could|may|might|does|do|did|has|have|had|will|would|should)\b", re.I)
_WORD_SPLIT = re.compile(r"(\W+)")

MODEL_FEATURES = (
    "lex_max", "lex_mean", "bigram_max", "coverage", "coverage_bigram", "support_max",
    "claim_negated", "claim_null", "best_negated", "top3_negated", "top3_null", "any_null",
    "negation_flip_best", "null_flip_top3", "opposite_top1", "opposite_top3", "claim_directed", "same_direction_top3",
    "entities_missing", "entities_missing_share", "numbers", "numbers_missing",
    "related_null", "claim_negated_related_not", "related_null_claim_not", "claim_comparative",
    # with an embedder only
    "cos_max", "cos_mean", "cos_margin", "flip_best", "flip_top3", "flip_max", "flip_closer_top3",
    "cos_top3_mean", "flip_related_max", "flip_related_mean", "flip_related_closer", "flip_focused",
    "flip_any_max", "flip_closer_share",
)
_EMBED_ONLY = frozenset(MODEL_FEATURES[MODEL_FEATURES.index("cos_max"):])


def flip_claim(claim: str) -> str:
    """The claim said the other way round (English): its negation removed, else its first
    direction word swapped ("increases" → "decreases"), else "not" inserted after the first
    auxiliary. The model compares how close each sentence is to the claim and to this."""
    claim = _ascii_digits(claim)
    if _NEG_WORD.search(claim):
        return _NEG_WORD.sub("", claim, count=1)
    toks = _WORD_SPLIT.split(claim)
    for i, t in enumerate(toks):
        low = t.lower()
        if low in _SWAP and low not in _NO_SWAP:
            toks[i] = _SWAP[low]
            return "".join(toks)
    m = _AUX.search(claim)
    if m:
        return claim[: m.end()] + " not" + claim[m.end():]
    return "It is not true that " + claim[:1].lower() + claim[1:]


def _order(ev: ClaimEvidence, support: Sequence[float]) -> list[int]:
    # Ties broken by text, never by position: the verdict must not depend on sentence order.
    return sorted(range(len(ev.spans)), key=lambda k: (-round(support[k], 9), ev.spans[k].text))


def _model_support(ev: ClaimEvidence, embedded: bool) -> tuple[float, ...]:
    if not embedded:
        return ev.lexical
    return tuple(0.5 * c + 0.5 * x for c, x in zip(ev.cosines or (), ev.lexical))


def model_features(ev: ClaimEvidence, embedded: bool) -> dict[str, float]:
    """The model's inputs for one claim (``MODEL_FEATURES``; the embedding ones only when ``embedded``)."""
    n = len(ev.spans)
    lex = np.array(ev.lexical, dtype=float)
    support = _model_support(ev, embedded)
    order = _order(ev, support)
    top, i = order[:3], order[0]
    lex_max = float(lex.max())
    related = [j for j in range(n) if lex[j] >= max(0.25, 0.6 * lex_max)]
    claim_neg = ev.claim_negated or ev.claim_null
    opp = [_opposite(ev.claim_groups, ev.groups[j]) for j in top]
    f = {
        "lex_max": lex_max, "lex_mean": float(lex.mean()), "bigram_max": max(ev.bigram) if ev.bigram else 0.0,
        "coverage": ev.coverage, "coverage_bigram": ev.coverage_bigram, "support_max": float(support[i]),
        "claim_negated": float(ev.claim_negated), "claim_null": float(ev.claim_null),
        "best_negated": float(ev.negated[i]), "top3_negated": float(any(ev.negated[j] for j in top)),
        "top3_null": float(any(ev.null[j] for j in top)), "any_null": float(any(ev.null)),
        "negation_flip_best": float(ev.claim_negated != ev.negated[i]),
        "null_flip_top3": float(ev.claim_null != any(ev.null[j] for j in top)),
        "opposite_top1": float(opp[0] is not None), "opposite_top3": float(any(o is not None for o in opp)),
        "claim_directed": float(bool(ev.claim_groups)),
        "same_direction_top3": float(any(ev.claim_groups[g] & ev.groups[j].get(g, set())
                                         for j in top for g in ev.claim_groups)),
        "entities_missing": float(len(ev.missing_entities)),
        "entities_missing_share": len(ev.missing_entities) / ev.n_entities if ev.n_entities else 0.0,
        "numbers": float(ev.n_numbers), "numbers_missing": float(len(ev.missing_values)),
        "related_null": float(any(ev.null[j] for j in related)),
        "claim_negated_related_not": float(claim_neg and not any(ev.negated[j] for j in related)),
        "related_null_claim_not": float(not claim_neg and any(ev.null[j] for j in related)),
        "claim_comparative": float(ev.claim_comparative),
    }
    if embedded:
        cos = np.array(ev.cosines, dtype=float)
        flip = np.array(ev.flip_cosines, dtype=float)
        by_cos = sorted(range(n), key=lambda k: (-round(cos[k], 9), ev.spans[k].text))[:3]
        d = flip[by_cos] - cos[by_cos]
        f.update({"cos_max": float(cos.max()), "cos_mean": float(cos.mean()), "cos_margin": float(cos.max() - cos.mean()),
                  "flip_best": float(d[0]), "flip_top3": float(d.mean()), "flip_max": float(flip.max() - cos.max()),
                  "flip_closer_top3": float((d > 0).any())})
        # over every sentence: how much closer each is to the flipped claim than to the claim
        diff = flip - cos
        rel = np.array(related or [i])
        focus = np.exp(50.0 * (cos - cos.max()))  # a soft "best sentence by cosine"
        f.update({"cos_top3_mean": float(np.sort(cos)[-3:].mean()), "flip_related_max": float(diff[rel].max()),
                  "flip_related_mean": float(diff[rel].mean()), "flip_related_closer": float((diff[rel] > 0).mean()),
                  "flip_focused": float((focus * diff).sum() / focus.sum()), "flip_any_max": float(diff.max()),
                  "flip_closer_share": float((diff > 0).mean())})
    return f


@dataclass(frozen=True)
class VerifyModel:
    """One fitted variant: feature names, standardisation, coefficients (features × classes)."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    classes: tuple[str, ...] = ("supported", "contradicted", "insufficient")

    def scores(self, feats: dict[str, float]) -> np.ndarray:
        x = (np.array([feats[k] for k in self.features], dtype=float) - self.mean) / self.scale
        return x @ self.weights + self.bias

    def contributions(self, feats: dict[str, float], cls: int, other: int) -> list[tuple[str, float]]:
        """Per feature, how much it favours class ``cls`` over class ``other``, largest first."""
        x = (np.array([feats[k] for k in self.features], dtype=float) - self.mean) / self.scale
        c = x * (self.weights[:, cls] - self.weights[:, other])
        return sorted(((k, float(v)) for k, v in zip(self.features, c)), key=lambda kv: (-kv[1], kv[0]))

    def to_json(self) -> dict:
        return {"features": list(self.features), "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "weights": self.weights.tolist(), "bias": self.bias.tolist(), "classes": list(self.classes)}

    @classmethod
    def from_json(cls, d: dict) -> "VerifyModel":
        return cls(tuple(d["features"]), np.array(d["mean"], float), np.array(d["scale"], float),
                   np.array(d["weights"], float), np.array(d["bias"], float), tuple(d["classes"]))


@lru_cache(maxsize=None)
def load_model() -> dict[str, VerifyModel]:
    """The shipped variants ({"words": ..., "embed": ...}); empty when no model file ships."""
    try:
        raw = resources.files("vouched.guard.verify_words").joinpath("model.json").read_text("utf-8")
    except FileNotFoundError:
        return {}
    data = json.loads(raw)
    return {k: VerifyModel.from_json(v) for k, v in data["variants"].items()}


def _overrule(out: Verification, ev: ClaimEvidence, settings: VerifySettings) -> Verification:
    """The hard rules that still apply over the model's ``supported``: a claim number the cited
    passages (which state numbers) do not hold (``values``), and, when on, a missing identifier."""
    if out.verdict != "supported":
        return out
    if settings.values != "ignore" and ev.missing_values:
        return Verification(settings.values, out.span, f"the cited passages do not state {', '.join(ev.missing_values)}",
                            out.support, tuple(f"value:{n}" for n in ev.missing_values))
    if settings.entity_rule and ev.missing_entities:
        return Verification("insufficient", out.span, f"no cited passage names {', '.join(ev.missing_entities)}",
                            out.support, tuple(f"entity:{e}" for e in ev.missing_entities))
    return out


def _model_verdict(ev: ClaimEvidence, models: dict[str, VerifyModel]) -> Verification | None:
    embedded = ev.cosines is not None and ev.flip_cosines is not None
    model = models.get("embed" if embedded else "words")
    if model is None:
        return None
    feats = model_features(ev, embedded)
    z = model.scores(feats)
    p = np.exp(z - z.max())
    p /= p.sum()
    ranked = sorted(range(len(p)), key=lambda j: (-p[j], j))
    k, runner_up = ranked[0], ranked[1]
    verdict = model.classes[k]
    support = _model_support(ev, embedded)
    order = _order(ev, support)
    span = ev.spans[order[0]]
    # The rule cues that agree with the verdict are named first (and move the span), then the
    # features that weighed most for this verdict over the runner-up.
    cues: list[str] = []
    if verdict == "contradicted":
        if ev.claim_negated != ev.negated[order[0]]:
            cues.append("negation:" + ("claim" if ev.claim_negated else "evidence"))
        for j in order[:3]:
            name = _opposite(ev.claim_groups, ev.groups[j])
            if name:
                cues.append(f"opposite:{name}")
                if len(cues) == 1:
                    span = ev.spans[j]
                break
    elif verdict == "insufficient":
        cues += [f"value:{n}" for n in ev.missing_values] + [f"entity:{e}" for e in ev.missing_entities]
    why = [name for name, c in model.contributions(feats, k, runner_up)[:3] if c > 0]
    cues += [f"model:{w}" for w in why]
    probs = ", ".join(f"{c} {q:.2f}" for c, q in zip(model.classes, p))
    return Verification(verdict, span, f"model ({probs}); over {model.classes[runner_up]} mostly "
                                       f"{', '.join(why) or 'the prior'}", float(support[order[0]]), tuple(cues))
