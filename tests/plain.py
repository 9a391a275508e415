"""Plain versions of what the fast paths compute, for the tests that pin them together.

Each is the algorithm as its module's docstring states it, with no shortcut; the fast-path
tests (tests/text/test_text_fastpaths.py, tests/text/test_normalize_bytes.py,
tests/guard/test_voice_values_fastpaths.py, tests/guard/test_gate_fastpaths.py) compare the
real functions against them.
"""

from __future__ import annotations

import sys
import unicodedata

from vouched.guard import values as VAL
from vouched.text.normalize import _MAP

# Every code point a str can hold as one character (no surrogates).
CODE_POINTS = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]


def normalize_plain(text: str) -> str:
    """normalize() as its docstring states it: plain steps, no shortcut."""

    def one_pass(s: str) -> str:
        s = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", s).casefold())
        return " ".join(s.translate(_MAP).split())

    if text.isascii():
        return " ".join(text.lower().split())
    s = one_pass(text)
    for _ in range(8):
        if unicodedata.is_normalized("NFKC", s) and s.casefold() == s:
            break
        s = one_pass(s)
    return s


def canonical_number_plain(raw: str) -> str:
    """values.canonical_number as its docstring states it."""
    s = raw if raw.isascii() else normalize_plain(raw).replace(" ", "")
    if s.isdigit():
        return VAL._strip_int(s)
    seps = [c for c in s if c in ".,"]
    groups = VAL._SEPARATORS.split(s)
    if len(set(seps)) == 2:
        dec = seps[-1]
        if dec not in seps[:-1] and VAL._is_grouped(groups[:-1]):
            return VAL._decimal("".join(groups[:-1]), groups[-1])
        return VAL._literal(groups)
    if len(seps) > 1:
        return VAL._strip_int("".join(groups)) if VAL._is_grouped(groups) else VAL._literal(groups)
    head, tail = groups
    if len(tail) == 3 and VAL._is_grouped(groups):
        return VAL._strip_int(head + tail)
    return VAL._decimal(head, tail)
