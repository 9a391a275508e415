"""The default generator: no model at all — the sources' own words, cited.

The prompt's sources are read into *units* — what can be quoted as one answer:

* a sentence of a paragraph;
* a list item, with all of its sentences ("Fence the old primary. If it is reachable, stop
  it with …");
* a sentence followed by its continuation ("… has a tracking number. It starts with …");
* a code block or a table, whole — with the lead-in that introduces it ("Promote within
  5 minutes:" and the command). Blocks are never flattened, cut or quoted in part: a block
  that the gate would not release whole (too long, a marker-like ``[0]`` inside, a word in
  the first person) is not offered at all;
* for a list question ("which libraries …", "what kinds of work …"), a list: its lead-in and
  its items, or a section's opening sentence and the opening sentence of each subsection
  among the sources — bounded (``MAX_ITEMS``, ``MAX_LIST_CHARS``).

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

The best unit and those within a small margin of it (at most ``max_sentences`` units,
never a list and something else) are written in reading order, every sentence ending with
its source marker. Units in the first person are skipped (the site's "I built …" must not
become the assistant's voice). Every unit is first put through the same sentence gate the
pipeline runs, so what is emitted is released whole. When no unit qualifies it writes
NO_ANSWER, which the pipeline turns into the fixed refusal.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

from vouched.answer.answer_type import FIGURE_TYPES, names_someone, plain_form
from vouched.answer.units import (  # noqa: F401  (add_marker, joined, pieces: part of this module's API)
    Unit, add_marker, joined, pieces, section_lists, units_of,
)
from vouched.embed.base import Embedder
from vouched.guard.prompt import NO_ANSWER, PromptSource
from vouched.llm.base import ProviderStream, StreamPiece, Usage
from vouched.retrieve.evidence import clip_cosine
from vouched.text import analyze, content_words, normalize, words

TOP_SOURCES = 4  # sentences are taken from the best few passages (lists and blocks: all given)
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


# The answer's unit must support the question (sentence_support); chosen on SQuAD 2.0 dev
# (docs/coverage.md, "The answer's sentence").
SUPPORT_CHECK = True
# The least rarity-weighted share of the question's words a unit in the reader's language must
# hold (ScoredUnit.keyword); 0 = no such floor. Chosen on the SQuAD 2.0 DEV articles, bounded by
# the golden sets: 0.25 refuses answerable golden cases (ops-followsun, ops-night, one portfolio
# case), 0.2 none (docs/coverage.md).
MIN_KEYWORD = 0.2


def _cross(unit: Unit, lang: str | None, languages: dict[int, str] | None) -> bool:
    return languages is not None and lang is not None and languages.get(unit.source, lang) != lang


# A number joined to a unit word ("12-hour", "5-minute") describes rather than identifies (as
# for L2's anchors): the answer need not repeat it.
_MEASURE = re.compile(r"^\d+(?:[.,]\d+)?[-\s]?[^\W\d_]+$")


def supports(question: str, unit: Unit, lang: str | None, anchors: Sequence[str],
             languages: dict[int, str] | None = None, *, before: str = "", exclude: Sequence[str] = ()) -> bool:
    """Does ``unit`` say what ``question`` asks (``coverage.sentence_support``)?

    * A name (an anchor without a digit) may instead be in ``before``, what the document says
      before the unit (``_before``): the document introduced it and the unit goes on about it
      ("The Nameh Archive had scanned …" … "Correcting the whole collection took 30 hours.").
      Numbers and codes with digits must be in the unit itself.
    * A question of several sentences (a follow-up joined to the previous question: "How quickly
      … a SEV1? And for a SEV2?") is supported when one of its sentences that asks for anything
      (an anchor, a negation, an opposite) is, each read with its own anchors.
    * A unit from a source in another language is checked only for its numbers and codes with
      digits, which read alike in every script: its words cannot match the question's.
    """
    from vouched.answer.answer_type import question_anchors
    from vouched.answer.coverage import sentence_support
    from vouched.text import split_sentences

    whole = f"{unit.context} {unit.text}"
    cross = languages is not None and lang is not None and languages.get(unit.source, lang) != lang
    if cross:
        alike = [a for a in anchors if re.search(r"[0-9]", a) and not _MEASURE.match(a)]
        return all(anchor_found(a, whole, None) for a in alike)

    def found(a: str, t: str) -> bool:
        return anchor_found(a, t, lang) or (not re.search(r"[0-9]", a) and bool(before) and anchor_found(a, before, lang))

    parts = [p for p in split_sentences(question) if words(p)]
    asks = [(question, list(anchors))] if len(parts) <= 1 else [
        (p, question_anchors(p, lang, tuple(exclude))) for p in parts]
    verdicts = [sentence_support(q, unit.text, unit.context, lang, [a for a in a_ if not _MEASURE.match(a)], found=found)
                for q, a_ in asks]
    if len(verdicts) == 1:
        return verdicts[0].passed
    demanding = [v for (_, a_), v in zip(asks, verdicts) if a_ or not v.passed]
    return not demanding or any(v.passed for v in demanding)


def _before(sources: Sequence[PromptSource], source: PromptSource | None, unit: Unit) -> str:
    """What the document says before the unit, among the sources given: its source's text before
    the unit's first sentence, and the given chunks of the same document that come earlier."""
    from vouched.answer.units import _chunk_position

    if source is None:
        return ""
    first = unit.parts[0][1] if unit.parts else ""
    at = source.text.find(first[:80]) if first else -1
    pos = _chunk_position(source)
    earlier = [s.text for s in sorted(sources, key=_chunk_position)
               if s.doc_id == source.doc_id and s.number != source.number and _chunk_position(s) < pos]
    return "\n".join([*earlier, source.text[:at] if at > 0 else ""]).strip()


def _released_whole(unit: Unit, gate_sources: dict[int, str], lang: str | None) -> bool:
    """Would the pipeline's gate release every part of this unit, each as one sentence?"""
    from vouched.guard.gate import SentenceGate

    gate = SentenceGate(gate_sources, lang)
    texts = [add_marker(t, num) for num, t in unit.parts]
    verdicts = gate.feed(joined(texts)) + gate.finish()
    return len(verdicts) == len(texts) and all(v.ok for v in verdicts)


class ExtractiveGenerator:
    """Writes cited units of the sources; costs nothing and reserves nothing."""

    name = "extractive"
    model = "extractive"

    def __init__(self, embedder: Embedder | None, max_sentences: int = 3, floor: float = 0.0,
                 exclude: Sequence[str] = ()) -> None:
        self.embedder = embedder
        self.max_sentences = max_sentences
        self.floor = floor
        self.exclude = tuple(exclude)  # the subject's and site's names: never an anchor or an asked word

    def candidates(self, question: str, sources: Sequence[PromptSource], lang: str | None) -> list[Unit]:
        from vouched.answer.answer_type import is_list_question, question_type, satisfies

        ordered = sorted(sources, key=lambda s: s.number)
        top = {s.number for s in ordered[:TOP_SOURCES]}
        units: list[Unit] = []
        for s in ordered:
            # Sentences from the best few passages; blocks, items and lists from every one given.
            units.extend(u for u in units_of(s, lang, sentences=s.number in top)
                         if s.number in top or u.kind in ("block", "item", "list"))
        if is_list_question(question):
            units.extend(section_lists(ordered, lang))
        else:
            units = [u for u in units if u.kind != "list"]
        if is_list_question(question):
            # The list's opening line ("She maintains three libraries.") is not its answer.
            openings = {u.parts[0][1] for u in units if u.kind == "list"}
            units = [u for u in units if u.kind == "list" or u.parts[0][1] not in openings]
        kind = question_type(question)
        if kind in FIGURE_TYPES:
            # "how long / when / how many / which port" is not answered by a unit without a
            # figure ("who" only ranks: "the client" can answer "who owns the code?")
            units = [u for u in units if any(satisfies(t, kind) for _, t in u.parts)]
        return units

    def plan(self, question: str, sources: Sequence[PromptSource], lang: str | None,
             anchors: Sequence[str] | None = None) -> list[str]:
        """The cited sentences to write (or ``[NO_ANSWER]``). ``anchors``: the question's
        anchors when the caller has them (default: ``answer_type.question_anchors``)."""
        from vouched.answer.answer_type import is_list_question, question_anchors, question_type

        units = self.candidates(question, sources, lang)
        if anchors is None:
            anchors = question_anchors(question, lang, self.exclude)
        languages = {s.number: _language_of(s.text[:400]) for s in sources} if lang else None
        scored = score_units(question, units, self.embedder, lang, anchors=anchors, exclude=self.exclude,
                             languages=languages, kind=question_type(question),
                             list_question=is_list_question(question))
        if any(s.anchors for s in scored):
            # Some unit is about what was asked: never answer with one that is about none of it.
            scored = [s for s in scored if s.anchors]
        gate_sources = {s.number: s.text for s in sources}
        ranked = sorted(scored, key=lambda s: -s.score)
        usable = []
        by_number = {s.number: s for s in sources}
        for s in ranked:
            if len(usable) >= self.max_sentences + 4:
                break
            # The unit quoted must itself say what was asked: every anchor, the question's
            # negation, not the opposite of an asked word (vouched.answer.coverage.sentence_support).
            if SUPPORT_CHECK and s.keyword < MIN_KEYWORD and not _cross(s.unit, lang, languages):
                continue
            if SUPPORT_CHECK and not supports(question, s.unit, lang, anchors, languages,
                                              before=_before(sources, by_number.get(s.unit.source), s.unit),
                                              exclude=self.exclude):
                continue
            if _released_whole(s.unit, gate_sources, lang):
                usable.append(s)
        picked = choose(usable, self.max_sentences, floor=self.floor)
        if not picked:
            return [NO_ANSWER]
        return [add_marker(t, num) for s in picked for num, t in s.unit.parts]

    def stream_text(self, sentences: Sequence[str]) -> ProviderStream:
        return stream_of(sentences, name=self.name, model=self.model)


def stream_of(sentences: Sequence[str], *, name: str = "extractive", model: str = "extractive") -> ProviderStream:
    """A ProviderStream that yields the given sentences (``pieces``), then a zero-cost final piece."""

    async def source(_stream: ProviderStream):
        for text in pieces(sentences):
            yield StreamPiece(text=text)
        yield StreamPiece(usage=Usage(input_tokens=0, output_tokens=0), finish_reason="stop")

    return ProviderStream(source, provider=name, model=model)
