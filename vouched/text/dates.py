"""Dates shown to a reader inside text of any direction.

An ISO date is a run of European digits joined by hyphens. Inside a right-to-left paragraph
(Persian, Arabic) the Unicode bidi algorithm lays the runs out right to left, so
"2022-01-20" reads "20-01-2022". Wrapped in a left-to-right isolate (LRI … PDI, U+2066 /
U+2069) it keeps its order whatever surrounds it; in left-to-right languages nothing is
added. The chat page does the same with `<time dir="ltr">`.
"""

from __future__ import annotations

RTL_LANGS = frozenset({"fa", "ar"})
LRI, PDI = "\u2066", "\u2069"


def isolate_ltr(text: str) -> str:
    return f"{LRI}{text}{PDI}" if text else text


def display_date(date: str | None, lang: str) -> str:
    """`date` as it should be written into text in `lang` ('' for none)."""
    if not date:
        return ""
    return isolate_ltr(date) if lang.split("-")[0].lower() in RTL_LANGS else date
