"""Names a sentence asserts — proper names, codes, quoted titles — and whether a source has them.

The sentence gate (L4, ``vouched.guard.gate``) releases a sentence only if every proper
name, code and quoted title in it appears in a source the sentence cites (rule
``unsupported_name``), as it does for values (``vouched.guard.values``). This module is
the matching half of that rule, as pure functions:

* ``name_spans(text, lang, allowed)`` → the names of a sentence (markers already
  stripped), in order, each a ``(kind, raw, key)`` tuple: ``kind`` is ``"name"``,
  ``"code"`` or ``"quote"``, ``raw`` the span as written, ``key`` its comparison form;
* ``NamePool(source_text)`` → what a source offers (compute once per source; its parts
  are built lazily), and ``pool.has(kind, key)``;
* ``name_keys(text)`` → the comparison forms of a phrase's words (for allowed names).

What counts as a name (``lang`` is the answer's language; ``None``: read from the script):

* **cased scripts** (Latin, Cyrillic, Greek): a word that starts with a capital and is
  not where every word is capitalised — the sentence's first word, the first word after
  ``:``/``;``/a dash/a line break or an opening quote — and is not a stop word of the
  language or of English ("The", "However" mid-sentence after a colon...). German
  capitalises every noun, so in German a capitalised word counts only after a word that
  usually stands before a bare proper name (``in``, ``aus``, ``nach``, ``von``, ``bei``,
  ``Herr``, ``Frau``...) or after another name ("in Bad Homburg"); codes count anywhere.
  Without ``lang`` (the pipeline always gives one) every cased sentence is read the
  German way, since it may be German.
* **codes**, in every script and position: a word with ASCII letters and digits
  ("pg-core-2", "v2.3", "SEV1", "H200"; not "3rd", "1990s", "5km", "mid-1990s"), a word
  with two or more capitals that is not title case ("OCR",
  "CER", "GitHub", "iPhone").
* **Latin words inside fa/ar/zh/hi text** (no case there): every Latin-script word of two
  or more letters, wherever it stands.
* **quoted titles**: the words between “…”, „…“, «…», ‹…›, "…", 《…》, 「…」, 『…』.

Not names: single letters, words without a letter (numbers are values), URLs and e-mail
addresses (values), the subject's and the site's own names (``allowed``).

Comparison form (``key``): ``normalize`` (NFKC, casefold, Arabic forms, ...), then Latin
diacritics removed (NFKD, combining marks dropped) and the inner ``-`` ``‐`` ``.`` ``_``
removed: "Zürich" ≡ "zurich", "Jean-Paul" ≡ "JeanPaul" ≡ "jean paul" (a hyphenated name
is also found as its parts), "U.S." ≡ "US". Apostrophes and slashes separate words
("O'Brien" → "Brien"; "Leila's" → "Leila").

Matching, always on whole words of the source:

* a name is found when its key is a word of the source, or — an inflected name,
  "Berlins", "Москвы" for "Москва" — a source word shares a prefix of at least four
  characters with it, differing at most in its last character beyond the shorter word
  and by at most three characters in length ("Lisbon" is not "Lisburn", "Johnson" not
  "Johnston");
* a code is found only as itself ("SEV1" is not "SEV2"; an acronym may take a plural
  "s": "APIs");
* a quoted title is found when its words, in order, are a run of the source's words
  (Chinese: its characters are a substring of the source's, spaces and punctuation
  ignored).

Weak spots, stated plainly (docs/gate.md): a fabricated name written in lower case, or as
the first word of a sentence, passes; in German a single capitalised word passes unless
a trigger word precedes it; names in Arabic, Persian, Devanagari and Han script cannot be
told from other words (no case) and pass; a name translated across languages of one
script ("Lisbon" for "Lisboa") is held — the gate errs towards refusing.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Literal

# The word tables, comparison forms and script modes live in names_words; this module
# holds NamePool and name_spans and stays the entry point for every name.
from vouched.guard.names_words import (
    _ASCII_FAST,
    _ASCII_LETTER,
    _CAPS2,
    _DE_TRIGGERS,
    _DE_TRIGGERS_DOT,
    _GERMAN_MODE,
    _GLUED,
    _INITIAL_AFTER,
    _LATIN_TOKEN,
    _MODES,
    _OPENERS,
    _PLAIN_WORD,
    _QUOTE,
    _QUOTE_ANY,
    _SEP,
    _STRIP,
    _UNCASED_MODE,
    _UNIT,
    _UPPER,
    _WORD,
    _fold_text,
    _inflected,
    _is_code,
    _key,
    _mode,
    _quote_key,
    _word_and_parts,
    name_keys,
    uncased,
)
from vouched.guard.values import _links
from vouched.text import stopwords

NameKind = Literal["name", "code", "quote"]

__all__ = ["NameKind", "NamePool", "name_keys", "name_spans", "uncased"]


class NamePool:
    """What one source offers to the name rule; every part is built on first use."""

    __slots__ = ("_flat", "_han", "_keys", "_prefix", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._keys: frozenset[str] | None = None
        self._prefix: dict[str, list[str]] | None = None
        self._flat: str | None = None
        self._han: str | None = None

    @property
    def keys(self) -> frozenset[str]:
        if self._keys is None:
            keys = set(name_keys(self.text))
            if not self.text.isascii():  # Latin words glued to Han/Arabic letters
                keys.update(k for w in _LATIN_TOKEN.findall(self.text) for k in _word_and_parts(w))
            self._keys = frozenset(keys)
        return self._keys

    def _prefixes(self) -> dict[str, list[str]]:
        if self._prefix is None:
            by: dict[str, list[str]] = {}
            for k in self.keys:
                if len(k) >= 4:
                    by.setdefault(k[:4], []).append(k)
            self._prefix = by
        return self._prefix

    def has(self, kind: str, key: str) -> bool:
        """True if the source has this name (``kind``/``key`` as ``name_spans`` gives them)."""
        if kind == "quote":
            return self._has_quote(key)
        keys = self.keys
        if key in keys:
            return True
        if "\x01" in key:  # a hyphenated name: found joined or as all of its parts
            parts = key.split("\x01")
            return self.has(kind, "".join(parts)) or all(len(p) < 2 or self.has(kind, p) for p in parts)
        if kind == "code":
            return key.endswith("s") and key[:-1] in keys
        if len(key) < 4:
            return False
        for k in self._prefixes().get(key[:4], ()):
            if _inflected(key, k):
                return True
        return False

    def _has_quote(self, key: str) -> bool:
        if key.startswith("\x00"):  # Han: characters only
            if self._han is None:
                self._han = "".join(_PLAIN_WORD.findall(_fold_text(self.text)))
            return key[1:] in self._han
        if self._flat is None:
            self._flat = " " + " ".join(_PLAIN_WORD.findall(_fold_text(self.text))) + " "
        return f" {key} " in self._flat


def name_spans(
    text: str, lang: str | None = None, allowed: frozenset[str] = frozenset(), *, initial: bool = True,
    digits: bool = True, _force_general: bool = False,
) -> list[tuple[NameKind, str, str]]:
    """The names, codes and quoted titles of a sentence, in order: (kind, raw, key).

    ``text`` is the sentence with its markers stripped. ``allowed``: keys that are never
    reported (the subject's and site's names, see ``name_keys``). ``initial``: whether
    ``text`` starts a clause (False for a piece from the middle of a sentence).
    """
    mode = _MODES.get(lang) if lang is not None else None
    if mode is None:
        mode = _mode(text, lang)
    if text.isascii():
        if mode != _UNCASED_MODE and _ASCII_FAST.search(text, 1 if initial and text[:1] != '"' else 0) is None:
            return []  # no quote, no capital past the first character, no letter glued to a digit
        quoted = '"' in text
    else:
        quoted = _QUOTE_ANY.search(text) is not None
    if not quoted:
        # The usual sentence has nothing to report; tell that at C speed. Cased text: no
        # capital past the first character, and no letter glued to a digit (a code).
        # Uncased text: no Latin letter.
        if mode == _UNCASED_MODE:
            if _ASCII_LETTER.search(text) is None:
                return []
        elif (text[1:] if initial else text).islower() and (not digits or _GLUED.search(text) is None):
            return []
    out: list[tuple[NameKind, str, str]] = []
    if "@" in text or "://" in text or "ww." in text or "WW." in text or "Ww." in text:
        # URLs and e-mail addresses are values; their words are not names.
        for start, end, *_ in reversed(_links(text)):
            text = text[:start] + " " + text[end:]
    if quoted:
        for m in _QUOTE.finditer(text):
            inner = next(g for g in m.groups() if g is not None)
            key = _quote_key(inner)
            if key is not None:
                out.append(("quote", m.group(0), key))
    if mode == _UNCASED_MODE:
        for raw in _LATIN_TOKEN.findall(text):
            _latin_word(raw, allowed, out)
        return out
    # German capitalises every noun; without a language the sentence may be German.
    german = mode == _GERMAN_MODE
    glued = digits and _GLUED.search(text) is not None
    if german and not glued and _CAPS2.search(text) is None:
        # No code: only the capitalised words right after a trigger word count.
        lows = text.lower().split()  # (lower() adds no space: same pieces as split())
        if _DE_TRIGGERS_DOT.isdisjoint(lows):
            return out
        pieces = text.split()
        stops = _STOPS.get(lang) or _stops(lang)
        for i, low in enumerate(lows):
            if low not in _DE_TRIGGERS_DOT:
                continue
            for piece in pieces[i + 1:]:
                if not piece[0].isupper():
                    break
                for word in _WORD.findall(piece):
                    word = word.strip(_STRIP)
                    if len(word) > 1 and word[0].isupper() and word.lower() not in stops:
                        _report_name(word, allowed, out)
                if piece[-1] in ",.;:!?)»“”\"":
                    break  # the chain of names ends at punctuation
        return out
    stops = _STOPS.get(lang) or _stops(lang)
    if not german and not glued and not _force_general:
        # No code with a digit: only the pieces holding a capital can report, found by
        # one search (a piece runs from whitespace to whitespace).
        end = -1
        for m in _UPPER.finditer(text):
            a = m.start()
            if a < end:
                continue  # in the piece just read
            while a > 0 and not text[a - 1].isspace():
                a -= 1
            w = _SPACE.search(text, m.end())
            end = len(text) if w is None else w.start()
            piece = text[a:end]
            core = piece.strip(_STRIP)
            if not core:
                continue
            before = text[:a].rstrip()
            at_start = (not before and initial) or (before[-1:] in _INITIAL_AFTER and bool(before)) or (
                core[0] != piece[0] and any(c in _OPENERS for c in piece[: piece.index(core[0])]))
            if core.isalpha() and core.istitle():  # the usual "Lyon", "Berlin": _cased_word inlined
                if not at_start and len(core) > 1:
                    low = core.lower()
                    if low not in stops:
                        key = _key(core)
                        if key not in allowed:
                            out.append(("name", core, key))
                continue
            for word in ((core,) if core.isalnum() else _WORD.findall(core)):
                at_start = _cased_word(word, at_start, stops, allowed, out)
        return out
    pieces = text.split()
    reported_at = -2  # index of the last piece that reported a name
    # The pieces that may report: not a lower-case word (a code only if glued to a digit),
    # not a bare number.
    for i in [i for i, p in enumerate(pieces) if not (p.isdigit() or (p.islower() and p.isalpha()))]:
        piece = pieces[i]
        if piece.islower() and _GLUED.search(piece) is None:
            continue
        core = piece.strip(_STRIP)
        if not core:
            continue
        # A clause starts here: the first piece, one after ":" ";" a dash or a line's
        # bullet, or one that opens a quote.
        at_start = (i == 0 and initial) or (i > 0 and pieces[i - 1][-1] in _INITIAL_AFTER) or (
            core[0] != piece[0] and any(c in _OPENERS for c in piece[: piece.index(core[0])]))
        # The words of the piece, cut as a source's words are (``_WORD``: "V&A" is "V" and
        # "A", "O'Brien" is "O" and "Brien", "US$100" is "US" and "100").
        words = (core,) if core.isalnum() else _WORD.findall(core)
        for word in words:
            if word and not word.isalnum():
                word = word.strip(_STRIP)
            if not word:
                continue
            if word.isalpha():  # no digit: a code only by its capitals
                if word.islower():
                    at_start = False
                    continue
                # Two capitals, or one inside ("OCR", "GitHub"); Han/Arabic letters have no case.
                code = not word.istitle() and word != word.lower()
            else:
                code = _is_code(word)
            if code:
                key = _key(word)
                if key not in allowed:
                    out.append(("code", word, key))
                    reported_at = i
            elif (not at_start and len(word) > 1 and word[0].isupper()
                  and (not german or reported_at >= i - 1 or _prev_word(pieces, i) in _DE_TRIGGERS)
                  and word.lower() not in stops):
                if _report_name(word, allowed, out):
                    reported_at = i
            at_start = False
    return out


def _cased_word(word: str, at_start: bool, stops: frozenset[str], allowed: frozenset[str], out: list) -> bool:
    """Report ``word`` (of a cased, non-German text without digit codes) if it is a name
    or a code; returns False (the next word no longer starts the clause)."""
    if not word.isalnum():
        word = word.strip(_STRIP)
        if not word:
            return at_start
    if word.isalpha():
        if word.islower():
            return False
        code = not word.istitle() and word != word.lower()
    else:
        code = _is_code(word)
    if code:
        key = _key(word)
        if key not in allowed:
            out.append(("code", word, key))
    elif not at_start and len(word) > 1 and word[0].isupper() and word.lower() not in stops:
        _report_name(word, allowed, out)
    return False


def _report_name(word: str, allowed: frozenset[str], out: list) -> bool:
    """Report the capitalised ``word`` as a name unless the sources allow it (whole, or each
    of its parts); a word of several parts ("Saint-Étienne") is keyed by its folded parts.
    Returns whether it was reported."""
    key = _key(word)
    if key in allowed or _parts_allowed(word, allowed):
        return False
    if not word.isalnum():
        parts = [p for p in _SEP.split(_fold_text(word)) if p]
        if len(parts) > 1:
            key = "\x01".join(parts)
    out.append(("name", word, key))
    return True


_SPACE = re.compile(r"\s")


def _prev_word(pieces: list[str], i: int) -> str:
    """The previous piece, punctuation stripped, lower-cased ("" at the start)."""
    return pieces[i - 1].strip(_STRIP).lower() if i else ""


_STOPS: dict[str | None, frozenset[str]] = {}


@lru_cache(maxsize=64)
def _stops(lang: str | None) -> frozenset[str]:
    base = stopwords("en")
    out = base if lang is None else base | stopwords(lang[:2].lower())
    if len(_STOPS) < 64:
        _STOPS[lang] = out
    return out


def _latin_word(raw: str, allowed: frozenset[str], out: list) -> None:
    if raw.isdigit() or not any(c.isalpha() for c in raw):
        return
    if _is_code(raw):
        key = _key(raw)
        if key not in allowed:
            out.append(("code", raw, key))
        return
    if len(raw) < 2 or _UNIT.fullmatch(raw.lower()) is not None:
        return
    key = _key(raw)
    if key not in allowed and not _parts_allowed(raw, allowed):
        out.append(("name", raw, key))


def _parts_allowed(word: str, allowed: frozenset[str]) -> bool:
    if not allowed or word.isalnum():
        return False
    parts = [p for p in _SEP.split(_fold_text(word)) if p]
    return bool(parts) and all(p in allowed for p in parts)


def supported(kind: str, key: str, pools: Iterable[NamePool]) -> bool:
    """True if any of ``pools`` has the name."""
    return any(p.has(kind, key) for p in pools)
