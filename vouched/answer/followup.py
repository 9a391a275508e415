"""Does a question read as a follow-up of the previous turn? (pure)

Only a question that leans on the previous turn is also scored joined to it; a
self-contained question ("Who won the 2018 World Cup?" asked after a question about the
site's project) is scored alone, so the previous turn's words cannot carry it over L2.

A follow-up, per language (the L1 packs' follow-up lists, vouched.guard.route.is_followup):
a connective at the start ("and …", "¿y …", «و …», "那…"), an ordinal ("the second one"),
at most two words, or a pronoun or demonstrative in a short question ("which database did
it run on?") — unless the question names its own antecedent (a name, code or quoted title
of its own: "Does the Bank of England use it?" is about the Bank of England). And a short
question (at most ``SHORT_WORDS`` words) with no name, code, number or quoted title of its
own ("how long does that take?", "¿cuánto tarda?").
"""

from __future__ import annotations

import re

from vouched.text.anchors import Anchors

SHORT_WORDS = 4
_EDGES = re.compile(r"^[\W_]+|[\W_]+$")


def followup_reason(question: str, anchors: Anchors, *, packs=None) -> str | None:
    """Why ``question`` reads as a follow-up ("connective", "ordinal", "anaphora", "short"), or None."""
    from vouched.guard.packs import default_packs, matching_text
    from vouched.guard.route import _ordinal_position, _pick, is_followup

    packs = packs or default_packs()
    text = _EDGES.sub("", matching_text(question))
    if not text:
        return None
    chosen = _pick(packs, None)
    for lang in chosen:
        rx = packs.by_lang[lang].followup_starts
        if rx is not None and rx.match(text):
            return "connective"
    if _ordinal_position(text, packs, chosen) is not None:
        return "ordinal"
    own = bool(anchors.of("name", "code", "quoted"))
    if not own and is_followup(question, packs=packs):
        return "anaphora"
    size = len(text.split()) if anchors.lang != "zh" else len(text) * 2 // 3
    if size <= SHORT_WORDS and not anchors.required:
        return "short"
    return None
