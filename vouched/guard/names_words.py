"""The word tables and comparison forms of ``vouched.guard.names``: the character and word
patterns (``_UPPER``: every upper-case letter), ``name_keys`` and ``_key`` (the comparison
form), the script mode (``uncased``) and the small word tests ``_inflected``, ``_is_code``,
``_quote_key``.

Moved here unchanged from ``vouched.guard.names``, which re-exports every name its users
and tests import from it; ``NamePool`` and ``name_spans`` stay there.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from vouched.text import normalize

_UNCASED = frozenset({"fa", "ar", "zh", "hi"})
# German words that usually stand right before a bare proper name.
_DE_TRIGGERS = frozenset(
    "in aus nach von vom bei nahe bis gegen herr herrn frau firma stadt dr prof st sankt".split()
)
# Punctuation stripped from a space-separated piece (both ends) before it is read.
_STRIP = "\"'“”‘’„‚«»‹›()[]{}<>.,;:!?¡¿…。，、；：！？（）【】《》「」『』—–-*_~|#%&=+/\\^`•·"
_OPENERS = frozenset("\"“„‘‚«‹¿¡《「『'")
_INITIAL_AFTER = frozenset(":;—–•\n")  # a word after these starts a clause
_UNIT = re.compile(r"(?:[a-z]+-)?\d+(?:[.,]\d+)*[a-z]{0,3}(?:-[a-z]+)*", re.ASCII)  # 3rd 1990s 5km mid-1990s 3rd-party
_HAS_DIGIT = re.compile(r"\d")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
# a Latin word, accented letters included ("Müller", not "M" and "ller"; "aaà" is one word, as name_keys reads it)
_LATIN_TOKEN = re.compile(r"[A-Za-z0-9À-ÖØ-öø-ɏ](?:[A-Za-z0-9À-ÖØ-öø-ɏ_\-.]*[A-Za-z0-9À-ÖØ-öø-ɏ])?")
_DROP = {ord(c): None for c in "-‐‑._"}
_SEP = re.compile("[-‐‑._]+")
# Words of a source: letters/digits with inner hyphens, dots and underscores.
_WORD = re.compile(r"[^\W_](?:[\w\-‐‑.]*[^\W_])?")
_PLAIN_WORD = re.compile(r"[^\W_]+")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_UNCASED_SCRIPT = re.compile(r"[\u0600-\u06ff\u0750-\u077f\u0900-\u097f\u3400-\u9fff]")
_QUOTE = re.compile(
    r"“([^“”\n]{1,200})”|„([^„“”\n]{1,200})[“”]|«([^«»\n]{1,200})»|‹([^‹›\n]{1,200})›"
    r"|\"([^\"\n]{1,200})\"|《([^《》\n]{1,200})》|「([^「」\n]{1,200})」|『([^『』\n]{1,200})』"
)
_QUOTE_CHARS = "\"“„«‹《「『"


def _fold_text(text: str) -> str:
    """``normalize`` plus Latin diacritics removed: the comparison form of any text."""
    if text.isascii():
        return text.lower()
    norm = normalize(text)
    if norm.isascii():
        return norm
    decomposed = unicodedata.normalize("NFKD", norm)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


@lru_cache(maxsize=65536)
def _key(word: str) -> str:
    """Comparison form of one word (see the module docstring)."""
    return _fold_text(word).translate(_DROP)


def name_keys(text: str) -> frozenset[str]:
    """Keys of every word of ``text`` and of each hyphenated word's parts."""
    out: set[str] = set()
    for w in _WORD.findall(_fold_text(text)):
        out.add(w.translate(_DROP))
        if not w.isalnum():
            out.update(p for p in _SEP.split(w) if p)
    return frozenset(out)


_CASED_MODE, _GERMAN_MODE, _UNCASED_MODE = 0, 1, 2
_MODES: dict[str, int] = {}  # lang -> mode, filled by _mode
# An ASCII letter glued to a digit (directly or over one "-" or "."), found from the
# digit (few of them: the search skips to the next one at C speed).
_GLUED = re.compile(r"\d(?:[\-.]?[A-Za-z]|(?<=[A-Za-z]\d)|(?<=[A-Za-z][\-.]\d))")
_DE_TRIGGERS_DOT = _DE_TRIGGERS | {w + "." for w in ("dr", "prof", "st")}
# A capital after a letter, or two capitals in a row ("OCR", "GitHub").
_CAPS2 = re.compile(r"[A-ZÀ-ÖØ-Þ](?:(?<=[A-Za-zÀ-ÖØ-öø-ÿ].)|[A-ZÀ-ÖØ-Þ])")
# ASCII text: a quote, a capital or a letter glued to a digit (what may start a name, a
# code or a title), in one search.
_ASCII_FAST = re.compile(r"[\"A-Z]|\d(?:[\-.]?[A-Za-z]|(?<=[A-Za-z]\d)|(?<=[A-Za-z][\-.]\d))")
_QUOTE_ANY = re.compile("[\"“„«‹《「『]")


def _mode(text: str, lang: str | None) -> int:
    """How names are read: cased, German (nouns capitalised) or uncased."""
    if lang is None:
        return _UNCASED_MODE if uncased(text, None) else _GERMAN_MODE
    key = lang[:2].lower()
    mode = _UNCASED_MODE if key in _UNCASED else _GERMAN_MODE if key == "de" else _CASED_MODE
    if len(_MODES) < 64:
        _MODES[lang] = mode
    return mode


def uncased(text: str, lang: str | None) -> bool:
    """True when names cannot be told by case: fa/ar/zh/hi (or, without ``lang``, such script)."""
    if lang is not None:
        return lang[:2].lower() in _UNCASED
    return not text.isascii() and _UNCASED_SCRIPT.search(text) is not None


def _word_and_parts(word: str) -> list[str]:
    w = word.lower()
    out = [w.translate(_DROP)]
    if not w.isalnum():
        out.extend(p for p in _SEP.split(w) if p)
    return out


def _inflected(a: str, b: str) -> bool:
    """Two forms of one name: a shared prefix of ≥4 characters that covers the shorter
    form but for at most its last character, and lengths within 3."""
    if abs(len(a) - len(b)) > 3:
        return False
    n = min(len(a), len(b))
    p = 0
    while p < n and a[p] == b[p]:
        p += 1
    return p >= 4 and p >= n - 1


def _is_code(word: str) -> bool:
    """A code: ASCII letters glued to digits (not a unit or ordinal such as "3rd", "5km",
    "1990s"), or two or more capitals in a word that is not title case ("OCR", "GitHub")."""
    if _GLUED.search(word) is not None:
        return word.isascii() and _UNIT.fullmatch(word.lower()) is None
    return not word.istitle() and word != word.lower() and len(word) > 1


def _quote_key(inner: str) -> str | None:
    folded = _fold_text(inner)
    words = _PLAIN_WORD.findall(folded)
    if not words:
        return None
    if _HAN.search(folded) is not None:
        return "\x00" + "".join(words)
    if all(w.isdigit() for w in words):
        return None  # a quoted number is a value
    return " ".join(words)


def _upper_class() -> str:
    """Every upper-case letter of the BMP, as a character class body of ranges."""
    ranges: list[tuple[int, int]] = []
    for cp in range(0x10000):
        if chr(cp).isupper():
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


_UPPER = re.compile(f"[{_upper_class()}]")
