"""Claim verification, offline: is a sentence supported, contradicted, or not covered by its sources?

The optional second phase after the sentence gate (L4). The gate checks a sentence's
values as strings; this module asks whether the sources it cites say what it says.
``verify_claim(claim, passages, *, embedder=None, lang=None)`` returns a
``Verification(verdict, span, reason)``; ``verdict`` is ``supported``, ``contradicted``
or ``insufficient``, ``span`` the evidence sentence it rests on.

How (no model for entailment ships here, so these are a few interpretable features and
thresholds, tuned on SciFact's *train* claims and measured on its test claims by
``vouched bench verify``):

1. Each passage is split into sentences. Each sentence gets a *support* score: the share
   of the claim's stemmed content words found in it (``lexical``), or, with an embedder,
   ``w · cosine(claim, sentence) + (1 − w) · lexical`` (claim embedded as an E5 query,
   sentence as a passage).
2. The best sentence is the span. Support below the threshold, or too few of the claim's
   content words anywhere in the cited passages (``coverage``) → ``insufficient``.
3. Optionally (off by default: on SciFact train it cost more than it gained), a claim
   naming an identifier ("CD44v6", "IL-18") that no cited passage mentions → insufficient.
4. Negation present on one side only (claim vs best sentence), or a word of one opposite
   group ("increases") in the claim against the other group ("reduces") in one of the
   ``window`` best sentences without the claim's own → ``contradicted``.
5. A number of the claim missing from cited passages that do state numbers → the
   ``values`` rule (insufficient by default).
6. Otherwise ``supported``.

Measured (``vouched bench verify --tune``, SciFact test claims, words only): balanced
accuracy 0.578 with retrieval hard negatives (supported 0.667, contradicted 0.366,
insufficient 0.700) — below the 0.70 target. It catches blunt negations and swapped
directions; it is not entailment. The embedder path is implemented and tested but has
not been measured on SciFact.

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
    "VerifySettings",
    "Verdict",
    "Verification",
    "analyse",
    "decide",
    "judge",
    "load_cues",
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


def analyse(claim: str, passages: Sequence[str], cosines: Sequence[float] | None = None, *,
            lang: str | None = None) -> ClaimEvidence:
    """Features of ``claim`` against ``passages``; ``cosines`` one per ``passage_sentences`` item."""
    spans = tuple(passage_sentences(passages))
    if cosines is not None and len(cosines) != len(spans):
        raise ValueError(f"{len(cosines)} cosines for {len(spans)} sentences")
    claim_lang = _lang_of(claim, lang)
    p_langs = [detect_language(p) if p.strip() else claim_lang for p in passages]
    claim_keys = frozenset(analyze(claim, claim_lang, unique=True))
    lexical, negated, groups = [], [], []
    everywhere: set[str] = set()
    for s in spans:
        keys = set(analyze(s.text, p_langs[s.passage], unique=True))
        everywhere |= keys
        lexical.append(len(claim_keys & keys) / len(claim_keys) if claim_keys else 0.0)
        toks, cues = words(s.text), load_cues(p_langs[s.passage])
        negated.append(_negated(toks, cues))
        groups.append(_groups(toks, cues))
    joined = " " + " ".join(words(" ".join(passages))) + " "
    missing_e = sorted(e for e in _entities(claim) if f" {' '.join(words(e))} " not in joined)
    have = [source_values(p) for p in passages]
    numbers = [c for kind, _, c in value_spans(claim) if kind == "number"]
    missing_v = [n for n in numbers if not any(n in h for h in have)] if any(have) else []
    c_toks, c_cues = words(claim), load_cues(claim_lang)
    coverage = len(claim_keys & everywhere) / len(claim_keys) if claim_keys else 0.0
    return ClaimEvidence(
        spans, coverage, claim_lang not in p_langs, tuple(lexical), None if cosines is None else tuple(float(c) for c in cosines),
        tuple(negated), tuple(groups), _negated(c_toks, c_cues), _groups(c_toks, c_cues),
        tuple(missing_e), tuple(dict.fromkeys(missing_v)),
    )


def decide(ev: ClaimEvidence, settings: VerifySettings = VerifySettings()) -> Verification:
    """The verdict from precomputed features (pure, cheap: the tuner calls it many times)."""
    if not ev.spans:
        return Verification("insufficient", None, "no sentence to check against")
    w = settings.cosine_weight
    if ev.cosines is None:
        support = ev.lexical
        threshold, coverage_needed = settings.lexical_threshold, settings.coverage_threshold
    elif ev.cross_lingual:  # words cannot meet across languages: the embedding alone judges support
        support, threshold, coverage_needed = ev.cosines, settings.threshold, 0.0
    else:
        support = tuple(w * c + (1.0 - w) * x for c, x in zip(ev.cosines, ev.lexical))
        threshold, coverage_needed = settings.threshold, settings.coverage_threshold * (1.0 - w)
    # Ties broken by text, never by position: the verdict must not depend on sentence order.
    order = sorted(range(len(ev.spans)), key=lambda k: (-round(support[k], 9), ev.spans[k].text))
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
          lang: str | None = None, settings: VerifySettings = VerifySettings()) -> Verification:
    """``decide(analyse(...))``: the verdict from texts and, optionally, one cosine per sentence."""
    if not claim.strip():
        return Verification("insufficient", None, "empty claim")
    return decide(analyse(claim, passages, cosines, lang=lang), settings)


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
    cosines = None
    if embedder is not None and spans and claim.strip():
        q = embedder.embed_queries([_ascii_digits(claim)])[0]
        m = embedder.embed_passages([_ascii_digits(s.text) for s in spans])
        cosines = np.clip(m @ q, 0.0, 1.0).tolist()
    return judge(claim, passages, cosines, lang=lang, settings=settings)
