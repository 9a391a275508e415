"""What ``vouched.guard.verify`` decides on: its types (``VerifySettings``, ``EvidenceSpan``,
``Verification``), the per-language cue lists (``load_cues``) and the features of a claim
against its cited passages (``passage_sentences``, ``analyse`` → ``ClaimEvidence``).

Moved here unchanged from ``vouched.guard.verify``, which re-exports every public name.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal, Sequence

from vouched.guard.values import source_values, value_spans
from vouched.text import (
    analyze,
    detect_language,
    normalize,
    split_sentences,
    stem,
    words,
)

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


_NULL_WORDS = frozenset(stem(w, "en") for w in (
    "associated association effect effects difference differences significant significantly correlated "
    "correlation change changed affect affected altered impact influence related relationship linked "
    "increase reduce improve benefit evidence role").split())
_NULL_CUES = frozenset(("no", "not", "nor", "neither", "without"))
_COMPARATIVE = frozenset(stem(w, "en") for w in (
    "more less higher lower greater fewer than better worse increase decrease increased decreased reduce "
    "reduced").split())


def _bigrams(stems: Sequence[str]) -> set[tuple[str, str]]:
    return set(zip(stems, stems[1:]))


def _null_finding(toks: Sequence[str]) -> bool:
    """A negation followed within four words by an effect/association word ("no significant difference")."""
    for i, t in enumerate(toks):
        if t in _NULL_CUES or t.endswith("n't"):
            if any(stem(x, "en") in _NULL_WORDS for x in toks[i + 1 : i + 5]):
                return True
    return False
