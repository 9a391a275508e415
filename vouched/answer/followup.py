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

Joined or not, the question's own anchors must still be covered (vouched.answer.coverage),
and a joined run counts only when its passages hold a content word of the question's own
(the pipeline's ``_own_words_found``): "how high is the tallest mountain?" after a question
about the site is short and joinable, but no passage about the site says "mountain".
"""

from __future__ import annotations

import re

from vouched.text.anchors import Anchors

SHORT_WORDS = 5
_EDGES = re.compile(r"^[\W_]+|[\W_]+$")
# Third-person pronouns and possessives (normalised), which the packs' anaphora lists leave
# out because L1 reads them as the subject: "how many articles did its library hold?".
_PRONOUNS = frozenset("""
its it their theirs they them his her hers he she him
su sus él ella ellos ellas
seu sua seus suas dele dela deles delas ele ela eles elas
son sa ses leur leurs il elle ils elles
sein seine seinen seinem seiner seines ihr ihre ihren ihrem ihrer er
его её ее их он она оно они
او اش شان آن
هو هي هم
उसका उसकी उसके उनका उनकी उनके वह वे
""".split())
_HAN_PRONOUNS = frozenset("它他她其")


def followup_reason(question: str, anchors: Anchors, *, packs=None, matching: str | None = None,
                    normalized: str | None = None) -> str | None:
    """Why ``question`` reads as a follow-up ("connective", "ordinal", "anaphora", "short"), or None.

    ``matching``/``normalized``: the question's ``matching_text``/``normalize`` forms when the
    caller already has them (answer.front.Question), so it is not normalised again."""
    from vouched.guard.packs import default_packs, matching_text
    from vouched.guard.route import _ordinal_position, _pick, is_followup

    packs = packs or default_packs()
    text = _EDGES.sub("", matching_text(question) if matching is None else matching)
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
    if not own and (is_followup(question, packs=packs, matching=matching) or _has_pronoun(question, normalized)):
        return "anaphora"
    size = len(text.split()) if anchors.lang != "zh" else len(text) * 2 // 3
    if size <= SHORT_WORDS and not anchors.required:
        return "short"
    return None


def _has_pronoun(question: str, normalized: str | None = None) -> bool:
    from vouched.text import words

    tokens = words(question) if normalized is None else words(normalized, normalized=True)
    return any(w in _PRONOUNS or (len(w) <= 2 and any(c in _HAN_PRONOUNS for c in w)) for w in tokens)
