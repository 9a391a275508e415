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

The code: the character map in `normalize_map`, the bytes fast path in `normalize_bytes`;
this module holds normalize() itself and re-exports every name of those two.
"""

from __future__ import annotations

import re
import unicodedata

from vouched.text.normalize_bytes import (  # noqa: F401  (re-exported: this module's names before the split)
    _ARABIC, _CYRILLIC, _DEVANAGARI, _LATIN, _LATIN1, _Alphabet, _charmap_decode, _charmap_encode, _chars, _fold_to_bytes,
    _from_bytes, _with_ascii,
)
from vouched.text.normalize_map import _MAP, _MAP_RE, _REPLACE, _apply_map, _build_map, _table  # noqa: F401  (re-exported)


def _tidy_spaces(s: str) -> str:
    """``" ".join(s.split())`` — which builds a string per word — skipped when it would
    change nothing: every whitespace character but " " is unprintable (a test checks every
    code point), so printable text with no double, leading or trailing space is tidy."""
    if s.isprintable() and "  " not in s and not s.startswith(" ") and not s.endswith(" "):
        return s
    return " ".join(s.split())


_is_normalized = unicodedata.is_normalized
_nfkc = unicodedata.normalize


# --- NFKC of text that is not NFKC-normalised ----------------------------------------------
#
# unicodedata.normalize returns its argument at the cost of a quick check when that is
# normalised, but otherwise runs the full algorithm: ~4 µs on a Chinese sentence whose only
# unnormalised characters are a full-width comma or two. Replacing a character c by
# NFKC(c) does not change the string's NFKD (NFKD(NFKC(c)) == NFKD(c), and NFKD sorts runs
# of combining marks stably by class, so a run sorted beforehand in part sorts the same),
# hence not its NFKC either: NFKC(text) == NFKC(t) for t = text with such replacements.
# When t is normalised, NFKC(t) is t — and is_normalized says so exactly. So: replace the
# common compatibility characters found (one str.replace per distinct character), check
# t, and run the full algorithm only when t is not normalised.
_COMPAT_BLOCKS = (
    (0x00A0, 0x00FF),  # NBSP, ª, ², ½, ...
    (0x2000, 0x206F),  # typographic spaces, … ‥ ″
    (0x2070, 0x218F),  # super/subscripts, letterlike symbols (™ ℃), Roman numerals
    (0x2460, 0x24FF),  # ① ⑴ ⒈
    (0x3000, 0x3000),  # ideographic space
    (0x3200, 0x33FF),  # enclosed CJK, ㎏ ㍻
    (0xFB00, 0xFDFF),  # ligatures, Arabic presentation forms A
    (0xFE30, 0xFEFF),  # CJK compatibility forms, small forms, Arabic presentation forms B
    (0xFF00, 0xFFEF),  # full-width and half-width forms
)
_compat: list[tuple[dict[str, str], re.Pattern[str]]] = []  # built on first use


def _compat_table() -> tuple[dict[str, str], re.Pattern[str]]:
    """(character → NFKC of it, a class of those characters) over _COMPAT_BLOCKS."""
    if not _compat:
        table = {
            chr(cp): _nfkc("NFKC", chr(cp))
            for lo, hi in _COMPAT_BLOCKS
            for cp in range(lo, hi + 1)
            if _nfkc("NFKC", chr(cp)) != chr(cp)
        }
        runs: list[list[int]] = []
        for cp in sorted(map(ord, table)):
            if runs and runs[-1][1] == cp - 1:
                runs[-1][1] = cp
            else:
                runs.append([cp, cp])
        pattern = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in runs) + "]")
        _compat[:] = [(table, pattern)]
    return _compat[0]


def _nfkc_unnormalized(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)`` for text that is not NFKC-normalised."""
    table, pattern = _compat[0] if _compat else _compat_table()
    found = pattern.findall(text)
    if found:
        t = text
        for ch in set(found):
            t = t.replace(ch, table[ch])
        if _is_normalized("NFKC", t):
            return t
    return _nfkc("NFKC", text)


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
        if text < "\u0100" or "\u0621" <= text < "\u0700":  # (else no call, to save its cost)
            folded_bytes = _fold_to_bytes(text)
            if folded_bytes is not None:
                s = _from_bytes(*folded_bytes)
                if s is not None:
                    return s
        # The first _pass, inlined (this runs once per sentence in the gate). The quick
        # check is the one NFKC starts with (when the answer is "maybe", is_normalized
        # runs the full algorithm).
        nfkc = text if _is_normalized("NFKC", text) else _nfkc_unnormalized(text)
        folded = nfkc.casefold()
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
