"""Language identification for questions and passages.

Script first, statistics only where script cannot decide:

* words are counted per script (runs of its letters; Han characters count 1.5 to a word,
  the average Chinese word length) and the script with most words picks the candidates:
  Han → zh, Devanagari → hi, Cyrillic → ru, Arabic script → fa/ar, Latin → en/es/pt/fr/de.
  So "What is 北京?" is English and "她在Google工作吗？" Chinese; ties go to the non-Latin
  script, since Latin names inside other-language questions are the common case;
* Arabic script: Persian if the raw text holds پ چ ژ گ or Persian digits; otherwise
  function words decide (stop words only Persian has, such as کیست, against those only
  Arabic has, such as هي/ماذا), and if they tie, letter forms on the raw text (Persian
  ک/ی against Arabic ي/ك/ة/ى; normalize() would fold the latter onto the former);
* Latin script with several allowed candidates goes to lingua, restricted to those
  candidates. The detector is built lazily, once per candidate set (lru_cache), so
  importing this module or detecting non-Latin text never loads lingua. High-accuracy
  mode is kept: the low-accuracy mode is meant for long text and questions are short.
  Models load on first use (about 1.5 s for five languages); preloading would only move
  that cost to build time.

A single allowed language is returned for any text with enough letters. Empty text,
text with too few letters (fewer than 3 Latin/Cyrillic/Arabic/Devanagari
letters, or no Han character), a dominant script whose languages are not allowed, or an
undecided lingua result all return ``default``. Only the first 1,000 characters are
looked at.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from vouched.text.scripts import CYRILLIC_CLASS, DEVANAGARI_CLASS, HAN_CLASS, arabic_script_lang
from vouched.text.words import LANGS, stopwords, words

LATIN_LANGS: tuple[str, ...] = ("en", "es", "pt", "fr", "de")
_MAX_CHARS = 1000
_MIN_LETTERS = 3

_HAN_CHARS_PER_WORD = 1.5
# Latin letters, accented ones and full-width forms (digits and punctuation excluded).
_LATIN_CLASS = r"A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff\uff21-\uff3a\uff41-\uff5a"
# Runs of letters per script. Order matters on ties: the first script listed wins, and
# Latin comes last because Latin names inside other-language questions are common.
_SCRIPTS = tuple(
    (name, re.compile(f"[{cls}]+"))
    for name, cls in (
        ("han", HAN_CLASS),
        ("deva", DEVANAGARI_CLASS),
        ("cyr", CYRILLIC_CLASS),
        ("arab", "\u0621-\u063a\u0640-\u065f\u066e-\u06d3\u06d5\u06fa-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufefc"),
        ("latin", _LATIN_CLASS),
    )
)
_STRONG_PERSIAN = frozenset("پچژگ۰۱۲۳۴۵۶۷۸۹")

_LINGUA_NAMES = {"en": "ENGLISH", "es": "SPANISH", "pt": "PORTUGUESE", "fr": "FRENCH", "de": "GERMAN"}


@lru_cache(maxsize=16)
def _detector(codes: tuple[str, ...]):
    from lingua import Language, LanguageDetectorBuilder  # lazy: heavy models

    langs = [getattr(Language, _LINGUA_NAMES[c]) for c in codes]
    return LanguageDetectorBuilder.from_languages(*langs).build()


def _arabic_script(sample: str, allow: set[str], default: str) -> str:
    fa, ar = "fa" in allow, "ar" in allow
    if not (fa and ar):
        return "fa" if fa else "ar" if ar else default
    if not _STRONG_PERSIAN.isdisjoint(sample):
        return "fa"
    # Function words beat letter forms (a Persian question typed on an Arabic keyboard
    # has ي/ك but still says کیست); letters decide when the words do not.
    fa_only, ar_only = _fa_ar_only()
    toks = words(sample)
    fa_hits = sum(t in fa_only for t in toks)
    ar_hits = sum(t in ar_only for t in toks)
    if fa_hits != ar_hits:
        return "fa" if fa_hits > ar_hits else "ar"
    return arabic_script_lang(sample)


@lru_cache(maxsize=1)
def _fa_ar_only() -> tuple[frozenset[str], frozenset[str]]:
    fa, ar = stopwords("fa"), stopwords("ar")
    return fa - ar, ar - fa


def detect_language(text: str, allowed: Sequence[str] = LANGS, default: str = "en") -> str:
    """ISO 639-1 code of ``text``'s language among ``allowed``; ``default`` if unsure."""
    sample = text[:_MAX_CHARS]
    allow = {a.lower() for a in allowed}
    if not sample.strip():
        return default
    best, best_words, best_letters = "", 0.0, 0
    for script, pattern in _SCRIPTS:
        runs = pattern.findall(sample)
        if not runs:
            continue
        letters = sum(map(len, runs))
        n_words = letters / _HAN_CHARS_PER_WORD if script == "han" else len(runs)
        if n_words > best_words:
            best, best_words, best_letters = script, n_words, letters
    if not best or (best != "han" and best_letters < _MIN_LETTERS):
        return default
    if len(allow) == 1:
        return next(iter(allow))  # the only possible answer
    if best == "han":
        return "zh" if "zh" in allow else default
    if best == "deva":
        return "hi" if "hi" in allow else default
    if best == "cyr":
        return "ru" if "ru" in allow else default
    if best == "arab":
        return _arabic_script(sample, allow, default)
    candidates = tuple(c for c in LATIN_LANGS if c in allow)
    if not candidates:
        return default
    if len(candidates) == 1:
        return candidates[0]
    found = _detector(candidates).detect_language_of(sample)
    if found is None:
        return default
    return found.iso_code_639_1.name.lower()
