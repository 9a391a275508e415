"""The text forms patterns are compared against.

* ``comparable`` — ``vouched.text.normalize`` plus two folds matching needs and
  normalisation leaves alone: accents on Latin/Cyrillic letters (combining marks
  U+0300-U+036F after NFD: "cuanto" ≡ "cuánto", "берет" ≡ "берёт") and typographic
  apostrophes (’ ʼ ‘ → '), and traditional Chinese characters folded to simplified ones
  («幫我把伺服器重啟» reads as «帮我把伺服器重启»: the zh pack is written in simplified
  characters; one character at a time, from OpenCC's table in ``zh_hant.tsv``). Applied to
  questions and to every literal in a pattern.
* ``matching_text`` — ``comparable`` with a space at each Han/non-Han seam, so Latin words
  written inside Chinese text are whole words for the other packs.
* ``subject_texts`` — the subject's name and aliases replaced by ``PLACEHOLDER`` (longest
  first, whole words, English possessive folded in); the packs' pronoun variables accept
  the placeholder, so a name reads as a pronoun.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Sequence

from vouched.text import normalize
from vouched.text.scripts import HAN_CHAR, HAN_CLASS, is_han

__all__ = ["PLACEHOLDER", "comparable", "matching_text", "subject_texts"]

# The subject placeholder is a *letter* (a word character for ``re``), so a word boundary,
# ``(?<!\w)`` or ``(?!\w)`` next to it behaves as next to a name or a pronoun: "{@she}\b"
# matches "will <S> move" as it matches "will she move". It must be stable under
# ``comparable`` (patterns' non-ASCII literals go through it) and never typed in practice:
# U+A66E CYRILLIC LETTER MULTIOCULAR O (one medieval manuscript), outside every range the
# packs use (Cyrillic patterns spell а-я / ё; accents are folded only below U+0500).
PLACEHOLDER = "\ua66e"

_APOS = str.maketrans({"\u2019": "'", "\u02bc": "'", "\u2018": "'"})
_ACCENTABLE = re.compile("[\u00c0-\u04ff]")
_COMBINING = re.compile("[\u0300-\u036f]+")


def _load_hant() -> dict[int, str]:
    table: dict[int, str] = {}
    text = resources.files("vouched.guard.packs").joinpath("zh_hant.tsv").read_text("utf-8")
    for line in text.splitlines():
        if line and not line.startswith("#"):
            trad, simp = line.split("\t")
            table[ord(trad)] = simp
    return table


# Traditional → simplified, one character each (the table's chains are resolved: idempotent).
_HANT = _load_hant()


def comparable(text: str, *, normalized: bool = False) -> str:
    """``normalize(text)`` with accents on Latin/Cyrillic letters and curly apostrophes folded.

    Idempotent. Patterns and questions are compared in this form only. ``normalized``:
    ``text`` is already ``normalize(text)`` (answer.front.Question.normalized): not again.
    """
    s = text if normalized else normalize(text)
    if s.isascii():
        return s
    s = s.translate(_APOS)
    if HAN_CHAR.search(s):
        s = s.translate(_HANT)
    if _ACCENTABLE.search(s):
        s = unicodedata.normalize("NFC", _COMBINING.sub("", unicodedata.normalize("NFD", s)))
    return s


@lru_cache(maxsize=1)
def _han_seam() -> re.Pattern[str]:
    han = f"[{HAN_CLASS}]"
    return re.compile(f"(?<={han})(?=[^\\s{HAN_CLASS}])|(?<=[^\\s{HAN_CLASS}])(?={han})")


def matching_text(text: str, *, normalized: bool = False) -> str:
    """``comparable(text)`` with a space at each Han/non-Han seam ("我想hire她" → "我想 hire 她").

    Whole-word packs then see Latin words written inside Chinese text; Chinese patterns
    (no word boundaries) are unaffected except where they span a seam. ``normalized``: as
    for `comparable`.
    """
    s = comparable(text, normalized=normalized)
    if s.isascii():
        return s
    return _han_seam().sub(" ", s)


@lru_cache(maxsize=64)
def _name_regex(names: tuple[str, ...]) -> re.Pattern[str] | None:
    forms = sorted({f for f in (matching_text(n) for n in names) if f}, key=len, reverse=True)
    if not forms:
        return None
    alts = []
    for f in forms:
        head = "" if is_han(f[0]) else r"(?<!\w)"
        if _ARABIC.match(f):
            head += _PROCLITIC  # و ب ل ک ف glued before the name: «بمارا», «ومارا»
        if is_han(f[-1]):
            tail = ""
        elif f[-1].isascii():
            # English possessive, and the German / Dutch genitive -s ("Maras Zeit", "Quints Büro")
            tail = r"(?:'s|s'(?=\s|$)|'|s(?=\s))?(?!\w)"
        else:
            tail = r"(?:'s|s'(?=\s|$)|')?(?!\w)"
        alts.append(f"{head}{_inflected(f)}{tail}")
    return re.compile("|".join(alts))


# Per-language morphology of the name itself (issue 15, round 3). Russian declines names:
# "Мара" is "Мары", "Маре", "Мару", "Марой" in other cases, "Квинт" may take "-а/-у/-ом/-е".
# Arabic and Persian glue one-letter proclitics to the next word. Only the name's own
# last letters are varied, so "Мара" never matches "Марат" (the tail still needs no letter).
_ARABIC = re.compile("[\u0600-\u06ff]")
_PROCLITIC = "(?:[\u0648\u0628\u0644\u06a9\u0643\u0641]|\u0648\u0628|\u0648\u0644)?"
_CYR_A = re.compile("[\u0430-\u044f]+\u0430$")  # ends in -а
_CYR_YA = re.compile("[\u0430-\u044f]+\u044f$")  # ends in -я
_CYR_CONS = re.compile("[\u0430-\u044f]*[\u0431-\u0434\u0436\u0437\u043a-\u043d\u043f-\u0442\u0444-\u0449]$")


def _inflected(form: str) -> str:
    """The name as a regex, with the case endings its last word may take (Cyrillic only)."""
    last = form.rsplit(" ", 1)[-1]
    stem = re.escape(form[: len(form) - len(last)])
    if _CYR_A.match(last):
        return stem + re.escape(last[:-1]) + "(?:а|ы|е|у|ои|ою|и)"
    if _CYR_YA.match(last):
        return stem + re.escape(last[:-1]) + "(?:я|и|е|ю|еи|ею)"
    if _CYR_CONS.match(last):
        return stem + re.escape(last) + "(?:а|у|ом|е|ым|ои)?"
    return re.escape(form)


def subject_texts(question: str, subject_names: Sequence[str] = (), *, matching: str | None = None
                  ) -> tuple[str, ...]:
    """The matching forms of ``question``: name → placeholder first, then as written if it differs.

    The last form is always ``matching_text(question)``; ``matching``: that form when the
    caller already has it (answer.front.build_question)."""
    text = matching_text(question) if matching is None else matching
    rx = _name_regex(tuple(subject_names)) if subject_names else None
    if rx is None:
        return (text,)
    replaced = rx.sub(PLACEHOLDER, text)
    if replaced == text:
        return (text,)
    # A Latin name inside Chinese text got seam spaces from matching_text ("Leila的电话" →
    # "leila 的电话"); Chinese patterns are written without spaces ("{@S}的?电话"), so the
    # placeholder is also offered glued to its Han neighbours.
    glued = _glue().sub("", replaced) if not replaced.isascii() else replaced
    return (replaced, text) if glued == replaced else (replaced, glued, text)


@lru_cache(maxsize=1)
def _glue() -> re.Pattern[str]:
    han = f"[{HAN_CLASS}]"
    return re.compile(f"(?<={PLACEHOLDER}) +(?={han})|(?<={han}) +(?={PLACEHOLDER})")
