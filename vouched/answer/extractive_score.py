"""Scoring the extractive generator's units against the question, and choosing among them.

Each unit is scored against the question:

* keyword coverage weighted by rarity among the given units (a word found in every unit
  says little; a word found in none still counts against every unit), over the unit (full
  weight) and its section heading and title (half weight);
* the expected answer type (``answer_type``): a "how long / when / how many / which port"
  question is answered only by a unit with a figure (a deadline, "within 5 minutes", ranks
  first for "how soon"); for a "who" question a unit that names someone ranks first (only
  ranks: "the client" answers "who owns the code?");
* the question's anchors (``answer_type.question_anchors``: names, codes, numbers, quoted
  titles; the subject's names excluded): when any anchor is found in some unit, a unit
  that covers none of them is never chosen;
* a unit that *states* an asked word's value ("the default protocol is 4") over one that
  merely mentions it; a unit that quotes the question's words as a phrase;
* sentence-level dense cosine with the bundled embedder, and the passage's rank.

A source in another language than the question cannot match its words; its units are
scored by dense cosine alone, discounted so that a unit in the reader's language that
covers the question wins when there is one.

``choose`` keeps the best unit and those within a small margin of it, in reading order (a
list is written alone; a list item or lead-in + block that holds the best sentence is written
instead of the bare sentence). The generator itself: ``vouched.answer.extractive``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

from vouched.answer.answer_type import names_someone, plain_form
from vouched.answer.units import Unit
from vouched.embed.base import Embedder
from vouched.retrieve.evidence import clip_cosine
from vouched.text import analyze, content_words, normalize, words

# Score weights: rarity-weighted keyword coverage, sentence-level dense cosine, the rank of
# the passage (1/rank), a unit that states an asked word's value, one that quotes the
# question as a phrase. A source in another language: dense alone, times CROSS_LANGUAGE.
W_KEYWORD, W_DENSE, W_RANK, W_STATES, W_PHRASE, W_ANCHOR = 0.35, 0.55, 0.03, 0.05, 0.10, 0.08
W_PAIR = -0.03  # two sentences together win over one only when they cover more of the question
W_LIST = 0.08  # a list question: its list over any one sentence
W_LEAD = 0.02  # the first unit of a passage (what it is about)
W_TYPE = 0.10  # the asked type in its plainest form ("within 5 minutes" for "how soon")
W_NEAR = 0.05  # one sentence (a table: one row) holds both an anchor and the asked figure
CONTAINER_MARGIN = 0.06  # a list item or lead-in + block that holds the best sentence is written instead
CONTEXT_WEIGHT = 0.5
CROSS_MARGIN = 0.005
MARGIN = 0.04
# A word followed by a copula and, within a few words, a figure: "the default port is 5432".
_COPULA = r"(?:is|are|was|were|equals|es|son|era|fue|é|são|foi|est|sont|était|ist|sind|war|—|=|:)"


@dataclass(frozen=True)
class ScoredUnit:
    unit: Unit
    score: float
    keyword: float
    dense: float
    anchors: int  # anchors of the question the unit covers
    states: bool = False  # it states an asked word's value or definition


# -- scoring --------------------------------------------------------------------------------
def _contains(seq: Sequence[str], sub: Sequence[str]) -> bool:
    if not sub:
        return False
    k = len(sub)
    first = sub[0]
    return any(seq[i] == first and list(seq[i : i + k]) == list(sub) for i in range(len(seq) - k + 1))


def anchor_found(anchor: str, text: str, lang: str | None) -> bool:
    """An anchor is found in a text as a phrase of whole words in a row, each as written or
    with the same stem ("Tessera's" is "Tessera"; "label was created" is not "Label created")."""
    from vouched.text import stem

    want = words(anchor)
    have = words(text)
    if not want:
        return False
    if _contains(have, want):
        return True
    ws = [stem(w, lang) for w in want]
    k = len(ws)
    for i in range(len(have) - k + 1):
        if all(have[i + j] == want[j] or stem(have[i + j], lang) == ws[j] for j in range(k)):
            return True
    if k == 1 and anchor[:1].isupper() and len(want[0]) >= 4:
        return any(same_place(want[0], h) for h in have if h[:3] == want[0][:3])
    return False


# A place and its people read as one name ("China" / "Chinese", "America" / "Americans",
# "Mongolia" / "Mongol", "Italia" / "italiano"): the shorter, less a final vowel, and one of
# these endings is the longer. Latin script; endings of en, es, pt, fr, de. "Austria" is not
# "Australia" (no such ending).
_DEMONYM_ENDINGS = ("", "n", "an", "ans", "ian", "ians", "ese", "ish", "ic", "ics", "i", "is", "er", "ers",
                    "ean", "eans", "ite", "ites", "ano", "ana", "anos", "anas", "ense", "enses", "es", "esa",
                    "ês", "ois", "oise", "ien", "ienne", "isch", "ische", "ischen", "o", "a", "os", "as", "ia")


def same_place(a: str, b: str) -> bool:
    """Is one of two normalised words a place and the other its people's adjective (``_DEMONYM_ENDINGS``)?"""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    bases = {short, short[:-1] if short[-1:] in "aeiouy" else short, short[:-2] if short.endswith("ia") else short}
    for base in bases:
        if len(base) >= 4 and long_.startswith(base) and long_[len(base):] in _DEMONYM_ENDINGS:
            return True
    return False


_ARTICLE = r"(?:a|an|the|un|una|el|la|los|las|um|uma|o|os|le|les|une|ein|eine|der|die|das)"


def _states(unit_text: str, terms: Iterable[str]) -> bool:
    """One of the asked words, then a copula, then a figure within a few words ("the default
    port is 5432"); or a unit that opens by defining an asked word ("Fencing: stopping …",
    "A replica is a …")."""
    t = normalize(unit_text)
    for w in terms:
        if len(w) < 3:
            continue
        e = re.escape(w)
        if re.search(rf"(?:^|\W){e}\w*\s*{_COPULA}\s+(?:\S+\s+){{0,4}}?[^\w\s]?\d", t):
            return True
        if re.match(rf"(?:\W*\w+\s+){{0,2}}?{e}\w*(?:\s*:\s|\s+(?:is|are|es|son|é|são|est|sont|ist|sind)\s+{_ARTICLE}\s)", t):
            return True
    return False


_FIGURE = re.compile(r"(?<![^\W\d_])\d")


def _near(unit: Unit, anchors: Sequence[str], lang: str | None) -> bool:
    """Some sentence (a table or code block: some line) holds an anchor and a figure."""
    for _, text in unit.parts:
        for piece in (text.split("\n") if "\n" in text else [text]):
            if _FIGURE.search(normalize(piece)) and any(anchor_found(a, piece, lang) for a in anchors):
                return True
    return False


@lru_cache(maxsize=512)
def _language_of(text: str) -> str:
    from vouched.text import detect_language

    return detect_language(text)


def _common_run(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest run of words that ``a`` and ``b`` share, in order."""
    best = 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                cur[j] = prev[j - 1] + 1
                if cur[j] > best:
                    best = cur[j]
        prev = cur
    return best


def score_units(
    question: str,
    units: Sequence[Unit],
    embedder: Embedder | None,
    lang: str | None,
    *,
    anchors: Sequence[str] = (),
    exclude: Sequence[str] = (),
    languages: dict[int, str] | None = None,
    kind: str | None = None,
    list_question: bool = False,
) -> list[ScoredUnit]:
    """Score every unit against the question (see the module docstring). Pure but for the
    embedder call; ``languages``: the language of each source number, when known."""
    excluded = {t for name in exclude for t in analyze(name, lang)}
    q_terms = [t for t in analyze(question, lang, unique=True) if t not in excluded]
    unit_terms = [set(analyze(u.text, lang)) for u in units]
    ctx_terms = [set(analyze(u.context, lang)) for u in units]
    n = max(len(units), 1)
    df = {t: sum(1 for ut in unit_terms if t in ut) for t in q_terms}
    weight = {t: math.log(1 + n / (1 + df[t])) for t in q_terms}
    total = sum(weight.values())
    dense = np.zeros(len(units), dtype=np.float32)
    if embedder is not None and units:
        try:
            qv = embedder.embed_queries([question])[0]
            dense = embedder.embed_passages([f"{u.context}: {u.text}" if u.context else u.text for u in units]) @ qv
        except Exception:  # embedder down: keyword coverage alone still ranks
            dense = np.zeros(len(units), dtype=np.float32)
    q_words = words(question)
    asked = content_words(question, lang)
    q_phrase = [w for w in q_words if w not in {x for name in exclude for x in words(name)}]
    def is_cross(u: Unit) -> bool:
        return languages is not None and lang is not None and languages.get(u.source, lang) != lang

    same = [float(d) for u, d in zip(units, dense) if not is_cross(u)]
    best_same = clip_cosine(max(same)) if same else 0.0
    # A source in another language stands in for full coverage when one of its units is
    # closer to the question than every unit in the reader's language.
    closer = {u.source for u, d in zip(units, dense) if is_cross(u) and clip_cosine(float(d)) > best_same + CROSS_MARGIN}
    if anchors and any(not is_cross(u) and all(anchor_found(a, f"{u.context} {u.text}", lang) for a in anchors)
                       for u in units):
        closer = set()  # a unit in the reader's language holds every anchor: it answers, in their language
    out = []
    for u, ut, ct, d in zip(units, unit_terms, ctx_terms, dense):
        kw = 0.0
        if total > 0:
            kw = sum(weight[t] * (1.0 if t in ut else CONTEXT_WEIGHT if t in ct else 0.0) for t in q_terms) / total
        dd = clip_cosine(float(d))
        if u.kind == "pair":  # two neighbours: each must be about what was asked
            covered = min(sum(1 for a in anchors if anchor_found(a, f"{u.context} {t}", lang)) for _, t in u.parts)
        else:
            covered = sum(1 for a in anchors if anchor_found(a, f"{u.context} {u.text}", lang))
        states = False
        if is_cross(u):
            # Its words cannot match the question's: it stands in for full coverage only
            # when it is closer to the question than every unit in the reader's language.
            kw = 1.0 if u.source in closer else 0.0
            score = W_KEYWORD * kw + W_DENSE * dd
        else:
            score = W_KEYWORD * kw + W_DENSE * dd
            states = _states(u.text, asked)
            if states:
                score += W_STATES
            run = _common_run(q_phrase, words(u.text)) if len(q_phrase) >= 3 else 0
            if run >= 3:  # the unit quotes the question's words
                score += W_PHRASE * min(1.0, (run - 2) / max(1, min(len(q_phrase), 6) - 2))
            if kind is not None and plain_form(u.text, kind):
                score += W_TYPE
            if kind == "person" and any(names_someone(t) for _, t in u.parts):
                score += W_TYPE
        if kind in ("duration", "date", "quantity") and anchors and _near(u, anchors, lang):
            score += W_NEAR
        if anchors:
            score += W_ANCHOR * covered / len(anchors)
        if u.kind == "pair":
            score += W_PAIR
        if list_question and u.kind == "list":
            score += W_LIST
        if u.position == 1:
            score += W_LEAD
        score += W_RANK / u.source
        out.append(ScoredUnit(u, score, kw, dd, covered, states))
    return out


def choose(scored: Sequence[ScoredUnit], k: int, margin: float = MARGIN, floor: float = 0.0) -> list[ScoredUnit]:
    """The best k within ``margin`` of the best score (and above ``floor``), in reading order;
    a list is written alone."""
    if not scored:
        return []
    ranked = sorted(scored, key=lambda s: (-s.score, s.unit.source, s.unit.position))
    best = ranked[0]
    if best.score < floor:
        return []
    if best.unit.kind == "list":
        return [best]
    picked: list[ScoredUnit] = []
    seen: set[str] = set()
    for own in ranked:
        # the margin is the unit's own score: a container written in its place may score a little less
        if own.score < best.score - margin or len(picked) >= k:
            break
        s = _container(own, scored)
        if s.unit.kind == "list":
            continue
        if best.states and not s.states:
            continue  # the value was stated: a unit that merely mentions the word adds nothing
        texts = [" ".join(words(t)) for _, t in s.unit.parts]
        if any(t in seen for t in texts):
            continue  # a sentence already written, or part of a unit already written
        if any(t in x or x in t for t in texts for x in seen):
            continue
        seen.update(texts)
        picked.append(s)
    return sorted(picked, key=lambda s: (s.unit.source, s.unit.position))


def _container(s: ScoredUnit, scored: Sequence[ScoredUnit]) -> ScoredUnit:
    """A list item or a lead-in with its block that holds this sentence, when it scores
    nearly as well: the step with its command, the item with its condition."""
    if s.unit.kind != "sentence":
        return s
    text = s.unit.parts[0][1]
    best = s
    for c in scored:
        if (c.unit.kind in ("item", "block", "continued") and c.unit.source == s.unit.source
                and any(t == text for _, t in c.unit.parts) and c.score >= s.score - CONTAINER_MARGIN
                and (best is s or c.score > best.score)):
            best = c
    return best

