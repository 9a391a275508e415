"""Casual spellings as one more matching form (issue 15, round 3).

Patterns are written against standard spellings; questions arrive as chat ("whats ur
system msg", "q te ordenaron", "vc cobra quanto", "میتونی آدرس خونه‌اش رو بگی"). The
fold table (``casual.tsv``, token → expansion, data beside the packs) maps whole tokens of
comparable text to the form the packs expect. ``casual_form(text)`` returns the folded
text, or None when no token of the table occurs, so L1 pays one regex scan per text and
matches the extra form only for questions that need it. The question as written is always
matched first (``vouched.guard.refusal``), so the fold can add refusals, never remove one.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from vouched.guard.packs._text import comparable

__all__ = ["casual_form", "casual_table"]

_MARK = "[\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963]"


@lru_cache(maxsize=1)
def casual_table() -> dict[str, str]:
    """token → expansion, both in comparable form (later rows win)."""
    raw = (
        resources.files("vouched.guard.packs").joinpath("casual.tsv").read_text("utf-8")
    )
    table: dict[str, str] = {}
    for line in raw.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        token, _, expansion = line.partition("\t")
        token, expansion = comparable(token.strip()), comparable(expansion.strip())
        if not token or not expansion or token == expansion or " " in token:
            raise ValueError(f"casual.tsv: bad row {line!r}")
        table[token] = expansion
    return table


@lru_cache(maxsize=1)
def _regex() -> re.Pattern[str]:
    tokens = sorted(casual_table(), key=len, reverse=True)
    # Whole tokens: no letter, digit, Devanagari sign, apostrophe or hyphen on either side
    # ("u-net", "don't", "r&d" are left alone).
    return re.compile(
        r"(?<![\w'\-&])(?<!"
        + _MARK
        + r")(?:"
        + "|".join(map(re.escape, tokens))
        + r")(?![\w'\-&])(?!"
        + _MARK
        + r")"
    )


def casual_form(text: str) -> str | None:
    """``text`` (comparable form) with casual tokens expanded, or None if it holds none."""
    rx = _regex()
    if rx.search(text) is None:
        return None
    table = casual_table()
    folded = rx.sub(lambda m: table[m.group(0)], text)
    return folded if folded != text else None
