"""Word tokens and content words.

``words(text)`` tokenises the *normalised* text:

* a word is a run of letters, digits and combining marks. Python's ``\\w`` does not match
  combining marks (Devanagari matras and virama, for instance), so they are added
  explicitly and "हिन्दी" / "किताब" stay whole words;
* apostrophes inside a word are kept ("don't", "o'brien"; ’ and ʼ count as '), except
  French elisions, which are split off ("l'équipe" → "l", "équipe") so the noun matches
  its bare form; digits joined by ``.`` or ``,`` stay one token ("3.5", "1,000", "v2.1.3");
  underscores separate words;
* Chinese has no spaces and no dictionary segmenter is used: every run of Han characters
  becomes its overlapping character bigrams ("北京工作" → 北京, 京工, 工作); a run of one
  character yields that character. Bigrams are what a question and a passage share
  reliably without a lexicon, and they are also what the keyword index stores.

``content_words(text, lang)`` drops stop words (per language, from
``stopwords/{lang}.txt``; the union of all languages when ``lang`` is None) and short
tokens (fewer than 3 characters; Han tokens need 2), keeping first occurrences in order.
For Chinese, a *single character* listed in ``zh.txt`` marks every bigram that contains
it as a stop bigram (的, 是, 吗, 什/么 ...): otherwise "她的工作是什么" would keep 的工,
作是 and 是什 as "content".
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Iterator

from vouched.text.normalize import normalize
from vouched.text.scripts import HAN_CLASS, is_han

LANGS: tuple[str, ...] = ("en", "fa", "es", "pt", "fr", "de", "ar", "ru", "zh", "hi")


def _mark_class() -> str:
    """Character-class body for combining marks (Mn/Mc/Me) in the scripts we care about."""
    ranges: list[tuple[int, int]] = []
    spans = ((0x0300, 0x1DFF), (0x20D0, 0x20FF), (0xA8E0, 0xA8FF), (0xFE20, 0xFE2F))
    for lo, hi in spans:
        for cp in range(lo, hi + 1):
            if unicodedata.category(chr(cp))[0] == "M":
                if ranges and ranges[-1][1] == cp - 1:
                    ranges[-1] = (ranges[-1][0], cp)
                else:
                    ranges.append((cp, cp))
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in ranges)


_WC = rf"(?:[^\W_{HAN_CLASS}]|[{_mark_class()}])"
_TOKEN = re.compile(rf"(?P<han>[{HAN_CLASS}]+)|{_WC}+(?:(?:'|(?<=\d)[.,](?=\d)){_WC}+)*")
_APOSTROPHES = {0x2019: "'", 0x02BC: "'"}
_ELISIONS = frozenset(
    "l d j m n s t c qu jusqu lorsqu puisqu quoiqu quelqu presqu".split()
)


def _tokens(norm: str) -> Iterator[str]:
    for m in _TOKEN.finditer(norm):
        tok = m.group(0)
        if m.group("han") is not None:
            if len(tok) == 1:
                yield tok
            else:
                for i in range(len(tok) - 1):
                    yield tok[i : i + 2]
            continue
        if "'" in tok:
            head, _, rest = tok.partition("'")
            if head in _ELISIONS:
                yield head
                yield rest
                continue
        yield tok


def words(text: str, *, normalized: bool = False) -> list[str]:
    """Normalised whole-word tokens of ``text`` in order (Han runs as bigrams).

    ``normalized``: ``text`` is already ``normalize(text)`` (answer.front.Question.normalized),
    so it is not normalised again; the tokens are the same (normalize is idempotent)."""
    return list(_tokens((text if normalized else normalize(text)).translate(_APOSTROPHES)))


# --- stop words -------------------------------------------------------------------------


def _lang_key(lang: str | None) -> str | None:
    if lang is None:
        return None
    return re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]


@lru_cache(maxsize=None)
def _load(lang: str) -> tuple[frozenset[str], frozenset[str]]:
    """(stop tokens, Han stop characters) for one language; empty if there is no list."""
    if lang not in LANGS:
        return frozenset(), frozenset()
    raw = resources.files("vouched.text").joinpath("stopwords", f"{lang}.txt").read_text("utf-8")
    toks: set[str] = set()
    chars: set[str] = set()
    for line in raw.splitlines():
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        norm = normalize(entry)
        if len(norm) == 1 and is_han(norm):
            chars.add(norm)
        toks.update(_tokens(norm.translate(_APOSTROPHES)))
    return frozenset(toks), frozenset(chars)


@lru_cache(maxsize=None)
def _load_all() -> tuple[frozenset[str], frozenset[str]]:
    toks: set[str] = set()
    chars: set[str] = set()
    for lang in LANGS:
        t, c = _load(lang)
        toks |= t
        chars |= c
    return frozenset(toks), frozenset(chars)


def stopwords(lang: str | None) -> frozenset[str]:
    """Normalised stop tokens of ``lang`` (all languages together when None)."""
    key = _lang_key(lang)
    return (_load_all() if key is None else _load(key))[0]


def _content_tokens(text: str, lang: str | None, normalized: bool = False) -> Iterator[str]:
    """Content tokens in order, repeats included (shared by content_words and analyze)."""
    key = _lang_key(lang)
    stop, chars = _load_all() if key is None else _load(key)
    for tok in _tokens((text if normalized else normalize(text)).translate(_APOSTROPHES)):
        if tok in stop:
            continue
        if is_han(tok[0]):
            if len(tok) >= 2 and tok[0] not in chars and tok[1] not in chars:
                yield tok
        elif len(tok) >= 3:
            yield tok


def content_words(text: str, lang: str | None = None, *, normalized: bool = False) -> list[str]:
    """``words(text)`` minus stop words and short tokens, first occurrences in order
    (``normalized``: as for `words`)."""
    return list(dict.fromkeys(_content_tokens(text, lang, normalized)))
