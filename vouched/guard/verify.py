"""Claim verification, offline: is a sentence supported, contradicted, or not covered by its sources?

The optional second phase after the sentence gate (L4). The gate checks a sentence's
values as strings; this module asks whether the sources it cites say what it says.
``verify_claim(claim, passages, *, embedder=None, lang=None)`` returns a
``Verification(verdict, span, reason)``; ``verdict`` is ``supported``, ``contradicted``
or ``insufficient``, ``span`` the evidence sentence it rests on.

How (no model for entailment ships here). Two deciders over the same interpretable features:

* **English claim over English passages (default):** a small multinomial logistic regression
  (``verify_words/model.json``, two variants: ``words`` and, with an embedder, ``embed``) over
  ``MODEL_FEATURES``: best/mean sentence word overlap, stem-bigram overlap, coverage of the
  claim's words, negation on each side and its asymmetry, "no significant difference"-type
  findings, opposite-direction words in the best sentences, identifiers and numbers the
  passages lack, and — with an embedder — cosines of the claim and of ``flip_claim(claim)``
  (negation removed, direction swapped or "not" inserted) with each sentence: evidence closer
  to the flipped claim than to the claim points to a contradiction. Fitted, class-balanced, on
  SciFact's 809 *train* claims only by ``vouched bench verify --fit --save [--embed]``
  (deterministic); the test claims are used only for the report. Over the model's
  ``supported``, a claim number absent from passages that state numbers still gives the
  ``values`` verdict. Cues name the rule cues that agree with the verdict, then the features
  that weighed most (``model:<feature>``).
* **Other languages, cross-lingual pairs, or** ``VerifySettings(model=False)``: the hand rules —
  1. each sentence's *support* is the share of the claim's stemmed content words in it, or
     ``w · cosine + (1 − w) · lexical`` with an embedder; 2. best support below the threshold,
     or too few of the claim's words anywhere (``coverage``) → ``insufficient``; 3. optionally a
     missing identifier → insufficient; 4. negation on one side only, or opposite words
     ("increases"/"reduces") in the ``window`` best sentences → ``contradicted``; 5. a claim
     number the passages do not state → ``values``; 6. otherwise ``supported``.

Measured (``vouched bench verify``, SciFact's 300 test claims, retrieval hard negatives):
model ``embed`` (``--embed``): balanced accuracy 0.588 (supported 0.558, contradicted 0.465,
insufficient 0.740); model ``words``: 0.575 (0.558, 0.437, 0.730); the hand rules tuned on
train (``--tune``): 0.578. 5-fold cross-validation on the train claims (how the variants were
chosen): model ``embed`` 0.624, ``words`` 0.604, hand rules 0.581. (An ``embed`` variant
without the last seven embedding features had 0.607 in cross-validation and 0.618 on test;
the shipped one was chosen by cross-validation, as the protocol says; the gap is within the
test set's noise — 71 contradicted pairs.) All below the 0.70 target. It catches blunt
negations, swapped directions, off-topic evidence and missing numbers; it is not entailment:
it misses contradictions carried by another quantity, subject, population or time, paraphrase outside
its word lists, scope and hedging, and anything needing two sentences or arithmetic. The
retrieval negatives are topically close abstracts, so word overlap separates them only
partly.

Cue lists live in ``verify_words/<lang>.toml``; the claim is read with its language's
list, each passage with its own, so a Persian claim over an English source compares
negation and opposite groups across languages. Words do not cross languages: when no
cited passage is in the claim's language, support is the cosine alone and coverage is
not required (with no embedder such a claim is ``insufficient``).

Pure apart from the embedder call: ``judge`` takes the cosines as input; the verdict is
the same whatever digit script the texts use (digits are made ASCII before embedding)
and whatever order a passage's sentences come in (ties are broken by sentence text).
"""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal, Sequence

import numpy as np

from vouched.guard.values import source_values, value_spans
from vouched.text import analyze, detect_language, normalize, split_sentences, stem, words

__all__ = [
    "CUE_LANGS",
    "ClaimEvidence",
    "Cues",
    "EvidenceSpan",
    "MODEL_FEATURES",
    "VerifyModel",
    "VerifySettings",
    "Verdict",
    "Verification",
    "analyse",
    "decide",
    "judge",
    "flip_claim",
    "load_cues",
    "load_model",
    "model_features",
    "passage_sentences",
    "verify_claim",
]

Verdict = Literal["supported", "contradicted", "insufficient"]
CUE_LANGS = ("en", "es", "pt", "fr", "de", "fa", "ar", "ru", "hi")


@dataclass(frozen=True)
class VerifySettings:
    """Weights and thresholds of the offline verifier (see the module docstring).

    The lexical defaults (used when no embedder is given) were chosen by
    ``vouched bench verify --lexical --tune`` on SciFact's 809 train claims, never on the 300
    test claims the benchmark reports. ``cosine_weight`` and ``threshold`` (used with an
    embedder) have NOT been tuned on a measured run yet: see the README.
    """

    cosine_weight: float = 0.5
    threshold: float = 0.55  # best sentence support, with an embedder
    lexical_threshold: float = 0.28  # best sentence support, words only
    coverage_threshold: float = 0.49  # share of the claim's content words found anywhere in the cited passages
    window: int = 3  # opposite words are looked for in this many best-supporting sentences
    entity_rule: bool = False
    values: Literal["contradicted", "insufficient", "ignore"] = "insufficient"
    negation: bool = True
    opposites: bool = True
    model: bool = True  # English claim over English passages: the fitted model decides (rules otherwise)


@dataclass(frozen=True)
class EvidenceSpan:
    """One sentence of one cited passage: its index, character offsets and text."""

    passage: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Verification:
    verdict: Verdict
    span: EvidenceSpan | None
    reason: str
    support: float = 0.0
    cues: tuple[str, ...] = field(default=())


# --- cue lists ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Cues:
    """One language's negation cues and opposite groups, normalised and stemmed."""

    lang: str
    negation: frozenset[str]
    negation_phrases: tuple[tuple[str, ...], ...]
    negation_suffixes: tuple[str, ...]
    opposites: tuple[tuple[str, frozenset[str], frozenset[str]], ...]  # (name, a stems, b stems)


def _key(token: str, lang: str) -> str:
    return stem(token, lang)


@lru_cache(maxsize=None)
def load_cues(lang: str) -> Cues:
    """The cue lists of ``lang``; English for a language that has no file."""
    code = lang if lang in CUE_LANGS else "en"
    raw = resources.files("vouched.guard.verify_words").joinpath(f"{code}.toml").read_text("utf-8")
    data = tomllib.loads(raw)
    single: set[str] = set()
    phrases: list[tuple[str, ...]] = []
    for entry in data.get("negation", []):
        toks = tuple(words(entry))
        if len(toks) == 1:
            single.add(toks[0])
            single.add(_key(toks[0], code))
        elif toks:
            phrases.append(toks)
    opposites = []
    for group in data.get("opposites", []):
        a = frozenset(_key(t, code) for e in group["a"] for t in words(e)[:1])
        b = frozenset(_key(t, code) for e in group["b"] for t in words(e)[:1])
        opposites.append((group["name"], a - b, b - a))
    suffixes = tuple(normalize(s) for s in data.get("negation_suffixes", []))
    return Cues(code, frozenset(single), tuple(phrases), suffixes, tuple(opposites))


def _negated(toks: Sequence[str], cues: Cues) -> bool:
    for i, t in enumerate(toks):
        if t in cues.negation or _key(t, cues.lang) in cues.negation:
            return True
        if any(t.endswith(s) for s in cues.negation_suffixes):
            return True
        for p in cues.negation_phrases:
            if tuple(toks[i : i + len(p)]) == p:
                return True
    return False


def _groups(toks: Sequence[str], cues: Cues) -> dict[str, set[str]]:
    """Which side ('a'/'b') of each opposite group the tokens use, by group name."""
    keys = {_key(t, cues.lang) for t in toks}
    out: dict[str, set[str]] = {}
    for name, a, b in cues.opposites:
        sides = {s for s, stems in (("a", a), ("b", b)) if keys & stems}
        if sides:
            out[name] = sides
    return out


def _opposite(claim: dict[str, set[str]], evidence: dict[str, set[str]]) -> str | None:
    for name, sides in claim.items():
        other = evidence.get(name, set())
        if other and not (sides & other):
            return name
    return None


# --- passages and features ---------------------------------------------------------------

_DIGIT = re.compile(r"\d")
_TOKEN = re.compile(r"\w+(?:[-/]\w+)*")
_NUMBERISH = re.compile(r"[\d.,/-]+|\d+[a-z]{1,2}")  # 12.5, 1990s, 3rd: values, not names
_IDENT = re.compile(r"\d|[a-z\u00e0-\u024f][A-Z]|^[A-Z]{2,}")


def _ascii_digits(text: str) -> str:
    """Digits of any script as ASCII, Arabic decimal/thousands marks as . and , (for embedding)."""
    text = text.replace("\u066b", ".").replace("\u066c", ",")
    return _DIGIT.sub(lambda m: str(unicodedata.digit(m.group(0), 0)), text)


def passage_sentences(passages: Sequence[str]) -> list[EvidenceSpan]:
    """Every sentence of every passage, with the passage index and character offsets."""
    out: list[EvidenceSpan] = []
    for i, text in enumerate(passages):
        cursor = 0
        for s in split_sentences(text):
            start = text.find(s, cursor)
            if start < 0:  # split_sentences returns substrings; be safe anyway
                start = cursor
            cursor = start + len(s)
            out.append(EvidenceSpan(i, start, start + len(s), s))
    return out


def _entities(claim: str) -> set[str]:
    """Identifier-like tokens of the claim (digits or inner capitals: "CD44v6", "IL-18", "mTOR")."""
    found = set()
    for m in _TOKEN.finditer(_ascii_digits(claim)):
        raw = m.group(0)
        # A bare number is a value (checked separately), not a name.
        if len(raw) >= 2 and _IDENT.search(raw) and not _NUMBERISH.fullmatch(raw):
            found.add(normalize(raw))
    return found


def _lang_of(text: str, given: str | None) -> str:
    return given or detect_language(text)


# --- the decision ------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimEvidence:
    """Everything the decision reads, computed once per claim (settings are applied later)."""

    spans: tuple[EvidenceSpan, ...]
    coverage: float  # share of the claim's content stems found anywhere in the passages
    cross_lingual: bool  # no passage is in the claim's language: words cannot meet
    lexical: tuple[float, ...]
    cosines: tuple[float, ...] | None
    negated: tuple[bool, ...]
    groups: tuple[dict[str, set[str]], ...]
    claim_negated: bool
    claim_groups: dict[str, set[str]]
    missing_entities: tuple[str, ...]
    missing_values: tuple[str, ...]  # claim numbers absent from passages that state numbers
    # --- read by the fitted model only (English) ---
    english: bool = False  # claim and every passage in English: the model applies
    flip_cosines: tuple[float, ...] | None = None  # cosine of the flipped claim (flip_claim) with each sentence
    bigram: tuple[float, ...] = ()  # share of the claim's stem bigrams in each sentence
    coverage_bigram: float = 0.0
    null: tuple[bool, ...] = ()  # "no significant difference"-type finding in each sentence
    claim_null: bool = False
    claim_comparative: bool = False
    n_entities: int = 0
    n_numbers: int = 0


def analyse(claim: str, passages: Sequence[str], cosines: Sequence[float] | None = None, *,
            lang: str | None = None, flip_cosines: Sequence[float] | None = None) -> ClaimEvidence:
    """Features of ``claim`` against ``passages``; ``cosines`` one per ``passage_sentences`` item,
    ``flip_cosines`` likewise for ``flip_claim(claim)`` (read by the model only)."""
    spans = tuple(passage_sentences(passages))
    for name, given in (("cosines", cosines), ("flip_cosines", flip_cosines)):
        if given is not None and len(given) != len(spans):
            raise ValueError(f"{len(given)} {name} for {len(spans)} sentences")
    claim_lang = _lang_of(claim, lang)
    p_langs = [detect_language(p) if p.strip() else claim_lang for p in passages]
    claim_keys = frozenset(analyze(claim, claim_lang, unique=True))
    claim_bigrams = _bigrams(analyze(claim, claim_lang))
    lexical, negated, groups, bigram, null = [], [], [], [], []
    everywhere: set[str] = set()
    every_bigram: set[tuple[str, str]] = set()
    for s in spans:
        stems = analyze(s.text, p_langs[s.passage])
        keys, pairs = set(stems), _bigrams(stems)
        everywhere |= keys
        every_bigram |= pairs
        lexical.append(len(claim_keys & keys) / len(claim_keys) if claim_keys else 0.0)
        bigram.append(len(claim_bigrams & pairs) / len(claim_bigrams) if claim_bigrams else 0.0)
        toks, cues = words(s.text), load_cues(p_langs[s.passage])
        negated.append(_negated(toks, cues))
        groups.append(_groups(toks, cues))
        null.append(_null_finding(toks))
    joined = " " + " ".join(words(" ".join(passages))) + " "
    entities = _entities(claim)
    missing_e = sorted(e for e in entities if f" {' '.join(words(e))} " not in joined)
    have = [source_values(p) for p in passages]
    numbers = [c for kind, _, c in value_spans(claim) if kind == "number"]
    missing_v = [n for n in numbers if not any(n in h for h in have)] if any(have) else []
    c_toks, c_cues = words(claim), load_cues(claim_lang)
    coverage = len(claim_keys & everywhere) / len(claim_keys) if claim_keys else 0.0
    return ClaimEvidence(
        spans, coverage, claim_lang not in p_langs, tuple(lexical), None if cosines is None else tuple(float(c) for c in cosines),
        tuple(negated), tuple(groups), _negated(c_toks, c_cues), _groups(c_toks, c_cues),
        tuple(missing_e), tuple(dict.fromkeys(missing_v)),
        english=claim_lang == "en" and all(x == "en" for x in p_langs),
        flip_cosines=None if flip_cosines is None else tuple(float(c) for c in flip_cosines),
        bigram=tuple(bigram),
        coverage_bigram=len(claim_bigrams & every_bigram) / len(claim_bigrams) if claim_bigrams else 0.0,
        null=tuple(null), claim_null=_null_finding(c_toks),
        claim_comparative=any(stem(t, "en") in _COMPARATIVE for t in c_toks),
        n_entities=len(entities), n_numbers=len(numbers),
    )


# --- the fitted model (English) ---------------------------------------------------------------
#
# A multinomial logistic regression over the features below, fitted by
# ``vouched bench verify --fit --save`` on SciFact's 809 *train* claims only (their labelled
# abstracts plus one retrieval hard negative each), class-balanced; the coefficients, the
# feature scaling and their provenance are in ``verify_words/model.json``. Two variants: words
# only, and with sentence embeddings (cosines of the claim and of its flipped form).

_NULL_WORDS = frozenset(stem(w, "en") for w in (
    "associated association effect effects difference differences significant significantly correlated "
    "correlation change changed affect affected altered impact influence related relationship linked "
    "increase reduce improve benefit evidence role").split())
_NULL_CUES = frozenset(("no", "not", "nor", "neither", "without"))
_COMPARATIVE = frozenset(stem(w, "en") for w in (
    "more less higher lower greater fewer than better worse increase decrease increased decreased reduce "
    "reduced").split())
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


def _bigrams(stems: Sequence[str]) -> set[tuple[str, str]]:
    return set(zip(stems, stems[1:]))


def _null_finding(toks: Sequence[str]) -> bool:
    """A negation followed within four words by an effect/association word ("no significant difference")."""
    for i, t in enumerate(toks):
        if t in _NULL_CUES or t.endswith("n't"):
            if any(stem(x, "en") in _NULL_WORDS for x in toks[i + 1 : i + 5]):
                return True
    return False


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


def decide(ev: ClaimEvidence, settings: VerifySettings = VerifySettings()) -> Verification:
    """The verdict from precomputed features (pure, cheap: the tuner calls it many times)."""
    if not ev.spans:
        return Verification("insufficient", None, "no sentence to check against")
    if settings.model and ev.english:
        models = load_model()
        if models:
            out = _model_verdict(ev, models)
            if out is not None:
                return _overrule(out, ev, settings)
    w = settings.cosine_weight
    if ev.cosines is None:
        support = ev.lexical
        threshold, coverage_needed = settings.lexical_threshold, settings.coverage_threshold
    elif ev.cross_lingual:  # words cannot meet across languages: the embedding alone judges support
        support, threshold, coverage_needed = ev.cosines, settings.threshold, 0.0
    else:
        support = tuple(w * c + (1.0 - w) * x for c, x in zip(ev.cosines, ev.lexical))
        threshold, coverage_needed = settings.threshold, settings.coverage_threshold * (1.0 - w)
    order = _order(ev, support)
    i = order[0]
    best, span = support[i], ev.spans[i]
    if best < threshold:
        return Verification("insufficient", span, f"best support {best:.2f} < {threshold:.2f}", best)
    if ev.coverage < coverage_needed:
        return Verification("insufficient", span, f"the cited passages hold {ev.coverage:.0%} of the claim's words "
                                                  f"(< {coverage_needed:.0%})", best)
    if settings.entity_rule and ev.missing_entities:
        return Verification("insufficient", span, f"no cited passage names {', '.join(ev.missing_entities)}", best,
                            tuple(f"entity:{e}" for e in ev.missing_entities))
    found: list[str] = []
    if settings.negation and ev.claim_negated != ev.negated[i]:
        found.append("negation:" + ("claim" if ev.claim_negated else "evidence"))
    if settings.opposites:
        for j in order[: max(1, settings.window)]:
            name = _opposite(ev.claim_groups, ev.groups[j])
            if name:
                found.append(f"opposite:{name}")
                if not found[:-1]:  # the span is the sentence that disagrees
                    span = ev.spans[j]
                break
    if found:
        return Verification("contradicted", span, "the evidence disagrees: " + ", ".join(found), best, tuple(found))
    if settings.values != "ignore" and ev.missing_values:
        return Verification(settings.values, span, f"the cited passages do not state {', '.join(ev.missing_values)}",
                            best, tuple(f"value:{n}" for n in ev.missing_values))
    return Verification("supported", span, f"support {best:.2f}", best)


def judge(claim: str, passages: Sequence[str], cosines: Sequence[float] | None = None, *,
          lang: str | None = None, settings: VerifySettings = VerifySettings(),
          flip_cosines: Sequence[float] | None = None) -> Verification:
    """``decide(analyse(...))``: the verdict from texts and, optionally, one cosine per sentence
    (and one per sentence for the flipped claim)."""
    if not claim.strip():
        return Verification("insufficient", None, "empty claim")
    return decide(analyse(claim, passages, cosines, lang=lang, flip_cosines=flip_cosines), settings)


def verify_claim(
    claim: str,
    passages: Sequence[str],
    *,
    embedder=None,
    lang: str | None = None,
    settings: VerifySettings = VerifySettings(),
) -> Verification:
    """Check one released sentence against only the passages it cites.

    ``passages`` are the cited passages' texts; ``embedder`` any ``vouched.embed.Embedder``
    (wrap the model in ``CachedEmbedder``: sentences repeat across questions); None gives
    the lexical-only verifier. ``lang`` is the claim's language (detected when None).
    """
    spans = passage_sentences(passages)
    cosines = flips = None
    if embedder is not None and spans and claim.strip():
        # The flipped claim is embedded too (one more query) when the English model may read it.
        flip = settings.model and _lang_of(claim, lang) == "en" and bool(load_model())
        q = embedder.embed_queries([_ascii_digits(claim), *([flip_claim(claim)] if flip else [])])
        m = embedder.embed_passages([_ascii_digits(s.text) for s in spans])
        cosines = np.clip(m @ q[0], 0.0, 1.0).tolist()
        flips = np.clip(m @ q[1], 0.0, 1.0).tolist() if flip else None
    return judge(claim, passages, cosines, lang=lang, settings=settings, flip_cosines=flips)
