"""Does the unit an extractive answer would quote say what was asked, and would the gate
release it whole? (``supports``: ``coverage.sentence_support`` with the document's earlier
text for names; ``_released_whole``: the pipeline's own sentence gate.) Chosen on SQuAD 2.0
dev: docs/coverage.md, "The answer's sentence".
"""

from __future__ import annotations

import re
from typing import Sequence

from vouched.answer.extractive_score import anchor_found
from vouched.answer.units import Unit, add_marker, joined
from vouched.guard.prompt import PromptSource
from vouched.text import words


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

