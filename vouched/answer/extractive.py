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

Each unit is scored against the question (``extractive_score``: keyword coverage weighted
by rarity, the expected answer type, the question's anchors, a unit that states an asked
word's value, dense cosine, the passage's rank) and must say what was asked
(``extractive_support``: ``coverage.sentence_support``), and hold a rarity-weighted share of the
question's words (``MIN_KEYWORD``).

The best unit and those within a small margin of it (at most ``max_sentences`` units,
never a list and something else) are written in reading order, every sentence ending with
its source marker. Units in the first person are skipped (the site's "I built …" must not
become the assistant's voice). Every unit is first put through the same sentence gate the
pipeline runs, so what is emitted is released whole. When no unit qualifies it writes
NO_ANSWER, which the pipeline turns into the fixed refusal.
"""

from __future__ import annotations

from typing import Sequence

from vouched.answer.answer_type import FIGURE_TYPES
from vouched.answer.extractive_score import (  # noqa: F401  (re-exported: this module's API)
    CONTAINER_MARGIN, CONTEXT_WEIGHT, CROSS_MARGIN, MARGIN, ScoredUnit, _language_of, anchor_found, choose,
    score_units,
)
from vouched.answer.extractive_support import (  # noqa: F401  (re-exported: this module's API)
    _MEASURE, _before, _cross, _released_whole, supports,
)
from vouched.answer.units import (  # noqa: F401  (add_marker, joined, pieces: part of this module's API)
    Unit, add_marker, joined, pieces, section_lists, units_of,
)
from vouched.embed.base import Embedder
from vouched.guard.prompt import NO_ANSWER, PromptSource
from vouched.llm.base import ProviderStream, StreamPiece, Usage

TOP_SOURCES = 4  # sentences are taken from the best few passages (lists and blocks: all given)

# The answer's unit must support the question (sentence_support); chosen on SQuAD 2.0 dev
# (docs/coverage.md, "The answer's sentence").
SUPPORT_CHECK = True
# The least rarity-weighted share of the question's words a unit in the reader's language must
# hold (ScoredUnit.keyword); 0 = no such floor. Chosen on the SQuAD 2.0 DEV articles, bounded by
# the golden sets: 0.25 refuses answerable golden cases (ops-followsun, ops-night, one portfolio
# case), 0.2 none (docs/coverage.md).
MIN_KEYWORD = 0.2


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
