"""Normalisation for comparison (never for display).

Every comparison in vouched (refusal patterns, keyword coverage, the sentence gate's
number/URL checks, stop words) runs on ``normalize(text)``, so two spellings a reader
would call "the same" must come out identical, and the function must be idempotent.

Steps, in order:

1. Unicode NFKC, then ``casefold`` (full-width Latin → ASCII, ligatures split, Arabic
   presentation forms → base letters, ß → ss, ...).
2. Arabic letter forms → Persian, chosen so a Persian and an Arabic spelling of the same
   word compare equal:

   * ي (U+064A) and ى (U+0649) → ی (U+06CC); ك (U+0643) → ک (U+06A9);
   * ة (ta marbuta) → ه, and ۀ / هٔ (heh with hamza, the Persian ezafe form) → ه:
     ``مدرسة`` ≡ ``مدرسه``, ``خانهٔ`` ≡ ``خانۀ`` ≡ ``خانه``;
   * hamza carriers are folded onto their seat letter: أ إ آ ٱ → ا, ؤ → و, ئ → ی
     (``مسئول`` ≡ ``مسیول``, ``آب`` ≡ ``اب``; the lone hamza ء is kept). Pattern authors
     must therefore write ``ا`` where they mean ``آ`` — or pass their pattern through
     normalize() too;
   * the Urdu/Kurdish hehs ہ ۂ ھ → ه.

3. Digits: Persian ۰-۹, Arabic-Indic ٠-٩ and Devanagari ०-९ → ASCII 0-9; the Arabic
   decimal and thousands separators ٫ ٬ → ``.`` ``,`` and the Arabic percent sign ٪ →
   ``%`` (so ``۳٫۵٪`` ≡ ``3.5%``).
4. Removed: Arabic diacritics (harakat U+064B-U+065F incl. the hamza marks, superscript
   alef U+0670, Quranic marks U+0610-U+061A and U+06D6-U+06ED), tatweel U+0640, zero-width
   and bidi controls (U+200B, U+200D, U+200E, U+200F, U+202A-U+202E, U+2060, U+2066-U+2069,
   U+FEFF, U+061C), and the soft hyphen U+00AD.
5. ZWNJ (U+200C, the Persian half-space) → one space, so ``می‌خواهم`` ≡ ``می خواهم``.
6. Whitespace runs → one space; stripped.

Idempotence: deleting a character can leave a string that NFKC would compose further
(e.g. ``e`` + ZWJ + U+0301), so the steps are repeated until the result is NFKC-stable
and casefold-stable (in practice one pass; a second only for such contrived input).
"""

from __future__ import annotations

import re
import unicodedata

def _build_map() -> dict[int, str | None]:
    m: dict[int, str | None] = {}
    # Arabic letter forms -> Persian / seat letters.
    for src, dst in {
        "\u064a": "\u06cc",  # ي -> ی
        "\u0649": "\u06cc",  # ى -> ی
        "\u0626": "\u06cc",  # ئ -> ی
        "\u0643": "\u06a9",  # ك -> ک
        "\u0629": "\u0647",  # ة -> ه
        "\u06c0": "\u0647",  # ۀ -> ه
        "\u06c1": "\u0647",  # ہ -> ه
        "\u06c2": "\u0647",  # ۂ -> ه
        "\u06be": "\u0647",  # ھ -> ه
        "\u0623": "\u0627",  # أ -> ا
        "\u0625": "\u0627",  # إ -> ا
        "\u0622": "\u0627",  # آ -> ا
        "\u0671": "\u0627",  # ٱ -> ا
        "\u0624": "\u0648",  # ؤ -> و
        "\u066b": ".",  # Arabic decimal separator
        "\u066c": ",",  # Arabic thousands separator
        "\u066a": "%",  # Arabic percent sign
    }.items():
        m[ord(src)] = dst
    for i in range(10):
        m[0x06F0 + i] = str(i)  # Persian digits
        m[0x0660 + i] = str(i)  # Arabic-Indic digits
        m[0x0966 + i] = str(i)  # Devanagari digits
    deleted = [0x0640, 0x0670, 0x061C, 0x00AD, 0x200B, 0x200D, 0x200E, 0x200F, 0x2060, 0xFEFF]
    deleted += range(0x064B, 0x0660)  # harakat, shadda, sukun, hamza marks, ...
    deleted += range(0x0610, 0x061B)  # Quranic honorifics / marks
    deleted += range(0x06D6, 0x06DD)  # Quranic annotation marks
    deleted += range(0x06DF, 0x06E5)
    deleted += (0x06E7, 0x06E8)
    deleted += range(0x06EA, 0x06EE)
    deleted += range(0x202A, 0x202F)  # LRE RLE PDF LRO RLO
    deleted += range(0x2066, 0x206A)  # LRI RLI FSI PDI
    for cp in deleted:
        m[cp] = None
    m[0x200C] = " "  # ZWNJ -> space
    return m


_MAP: dict[int, str | None] = _build_map()
_MAP_RE = re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(_MAP)) + "]")
_REPLACE = {chr(cp): dst or "" for cp, dst in _MAP.items()}
# No replacement holds a mapped character, so replacing one character at a time, in any
# order, gives what str.translate(_MAP) gives.
assert not any(_MAP_RE.search(dst) for dst in _REPLACE.values())
_table: list[int | str | None] = []


def _apply_map(s: str) -> str:
    """``s.translate(_MAP)``, faster.

    translate with a dict costs ~200 ns per character on non-ASCII text. On a sentence
    translate runs with a list indexed by code point instead, about twice as fast (a
    character past the list — outside the BMP, never mapped — raises IndexError, which
    translate reads as "unchanged"). On longer text, where mapped characters are many
    but of few kinds (half-spaces, digits), a regex (C speed) finds them and one
    ``str.replace`` per distinct character does the rest.
    """
    if len(s) < 120:
        if not _table:
            table: list[int | str | None] = list(range(0x10000))
            for cp, dst in _MAP.items():
                table[cp] = dst
            _table[:] = table
        return s.translate(_table)
    for ch in set(_MAP_RE.findall(s)):
        s = s.replace(ch, _REPLACE[ch])
    return s


def _tidy_spaces(s: str) -> str:
    """``" ".join(s.split())`` — which builds a string per word — skipped when it would
    change nothing: every whitespace character but " " is unprintable (a test checks every
    code point), so printable text with no double, leading or trailing space is tidy."""
    if s.isprintable() and "  " not in s and not s.startswith(" ") and not s.endswith(" "):
        return s
    return " ".join(s.split())


_is_normalized = unicodedata.is_normalized
_nfkc = unicodedata.normalize


def _pass(text: str) -> str:
    s = _nfkc("NFKC", _nfkc("NFKC", text).casefold())
    s = _apply_map(s)
    return _tidy_spaces(s)


def normalize(text: str) -> str:
    """Return ``text`` normalised for comparison (see the module docstring)."""
    if text.isascii():
        # NFKC and the mapping table are no-ops on ASCII; casefold == lower there.
        s = text.lower()
        stable = True
    else:
        # The first _pass, inlined (this runs once per sentence in the gate).
        folded = _nfkc("NFKC", text).casefold()
        s = _nfkc("NFKC", folded)
        # NFKC hands back its very argument only when that is normalised, and casefold
        # is idempotent (a test checks every code point): then, unless a step below
        # changes s, the check after the pass would find it stable.
        stable = s is folded
        if _MAP_RE.search(s) is not None:
            s = _apply_map(s)
            stable = False
    if not (s.isprintable() and "  " not in s and not s.startswith(" ") and not s.endswith(" ")):
        s = " ".join(s.split())  # _tidy_spaces
        stable = stable and text.isascii()
    if stable:
        return s
    for _ in range(8):
        if _is_normalized("NFKC", s) and s.casefold() == s:
            break
        s = _pass(s)
    return s
