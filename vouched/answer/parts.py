"""Question parts, for partial answers (pure, deterministic).

"What did she build at Acme and what did it cost?" asks two things; the sources may cover
one. ``split_question`` cuts a question into the parts a reader would answer separately:

* at question marks that end a clause ("What did she build? Where?"): ``? ？ ؟``;
* at a coordinating conjunction directly followed by a question word — "… and what …",
  "… y cuánto …", «… و چقدر …», "… und wann …", "…，还有…" — never at a bare "and"
  ("research and teaching" is one thing).

Parts keep the reader's wording (substrings of the question, edges trimmed); a part with
no letter or digit is dropped. One part means the question is asked as a whole.
"""

from __future__ import annotations

import re

__all__ = ["split_question"]

# Per language: conjunction + question word. Matched case-insensitively on the raw text,
# with a word boundary before the conjunction; the cut is made before the conjunction.
_JOINS = {
    "en": (r"and|but|also|plus|or", r"what|how|when|where|who|whom|whose|which|why|does|did|do|is|are|was|were|can|could|has|have|will|would"),
    "es": (r"y|e|pero|o", r"qu[eé]|c[oó]mo|cu[aá]ndo|d[oó]nde|qui[eé]n(?:es)?|cu[aá]l(?:es)?|cu[aá]nt[oa]s?|por qu[eé]"),
    "pt": (r"e|mas|ou", r"o que|que|como|quando|onde|quem|qual|quais|quant[oa]s?|por que"),
    "fr": (r"et|mais|ou", r"que|qu'|quoi|comment|quand|o[uù]|qui|quel(?:le)?s?|combien|pourquoi|est-ce"),
    "de": (r"und|aber|oder", r"was|wie|wann|wo|wer|wen|welche[rsnm]?|warum|wieviel|wie viel|gibt"),
    "ru": (r"и|а|но|или", r"что|как|когда|где|кто|какой|какая|какие|сколько|почему|зачем"),
    "fa": (r"و|ولی|یا", r"چه|چی|چرا|کی|کجا|چطور|چگونه|کدام|چقدر|چند|آیا"),
    "ar": (r"و|لكن|أو", r"ما|ماذا|كيف|متى|أين|من|كم|لماذا|هل"),
    "hi": (r"और|लेकिन|या", r"क्या|कब|कहाँ|कहां|कैसे|कौन|कितना|कितने|क्यों"),
}
_JOIN_RE = re.compile(
    "|".join(
        rf"(?<![\w'])(?:{conj})\s*[,،]?\s+(?=(?:{qw})(?![\w]))" if lang != "fa" and lang != "ar"
        else rf"(?<![\w])(?:{conj})\s+(?=(?:{qw})(?![\w]))"
        for lang, (conj, qw) in _JOINS.items()
    ),
    re.IGNORECASE,
)
# Chinese: a comma then 还有/另外/以及 or a question word.
_ZH_JOIN = re.compile(r"[，,]\s*(?=(?:还有|另外|以及|并且)?(?:什么|怎么|多少|哪|谁|为什么|何时|几))")
_QMARK = re.compile(r"[?？؟]+")
_HAS_WORD = re.compile(r"[^\W_]")
_TRIM = " \t\n,，、;；:：-–—"


def split_question(question: str) -> list[str]:
    """The parts of ``question`` (see the module docstring); ``[question]`` when it is one.

    A piece without a content word of its own ("When and where was the talk?" → "When")
    is not a part: it stays joined to the piece after it.
    """
    from vouched.text import content_words

    spans: list[tuple[int, int]] = []
    for a, b in _cuts(question, _QMARK, keep=True):
        for c, d in _cuts(question, _JOIN_RE, a, b):
            spans.extend(_cuts(question, _ZH_JOIN, c, d))
    if sum(1 for a, b in spans if _HAS_WORD.search(question, a, b)) <= 1:
        return [question.strip()]  # one piece with words: one part (the loop below would say so too)
    merged: list[tuple[int, int]] = []
    carry: int | None = None
    for a, b in spans:
        start = a if carry is None else carry
        if not content_words(question[a:b]):
            carry = start
            continue
        merged.append((start, b))
        carry = None
    if carry is not None and merged:  # a trailing piece without content joins the last part
        merged[-1] = (merged[-1][0], len(question))
    parts = [question[a:b].strip(_TRIM) for a, b in merged]
    parts = [p for p in parts if _HAS_WORD.search(p)]
    return parts if len(parts) > 1 else [question.strip()]


def _cuts(text: str, rx: re.Pattern[str], start: int = 0, end: int | None = None,
          keep: bool = False) -> list[tuple[int, int]]:
    """Spans of ``text[start:end]`` split at ``rx``: after each match (``keep``: the match
    stays with the text before it), else around it (the conjunction is dropped)."""
    end = len(text) if end is None else end
    out, prev = [], start
    for m in rx.finditer(text, start, end):
        out.append((prev, m.end() if keep else m.start()))
        prev = m.end()
    out.append((prev, end))
    return out
