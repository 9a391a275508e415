"""Multilingual text handling: normalisation, sentences, words, stop words, stems, language.

Languages: en, fa, es, pt, fr, de, ar, ru, zh, hi. Every function is pure; the only
module state is constant tables and memoised look-ups (stop-word lists, stemmers, the
lingua detector), all built lazily on first use.

* ``normalize`` — comparison form (NFKC, casefold, Arabic forms → Persian, digits → ASCII,
  diacritics/tatweel/zero-width controls removed, ZWNJ → space); idempotent.
* ``split_sentences`` — sentence substrings of the original text (for the L4 gate).
* ``words`` / ``content_words`` — normalised tokens (Han as character bigrams) and those
  that are not stop words (≥3 characters, ≥2 for Han).
* ``stem`` / ``analyze`` — Snowball stems; ``analyze`` is the keyword index's analyser.
* ``detect_language`` — script first, lingua for Latin-script languages.
"""

from vouched.text.langid import LATIN_LANGS, detect_language
from vouched.text.normalize import normalize
from vouched.text.scripts import arabic_script_lang, is_han
from vouched.text.sentences import split_sentences
from vouched.text.stemming import analyze, stem
from vouched.text.words import LANGS, content_words, stopwords, words

__all__ = [
    "LANGS",
    "LATIN_LANGS",
    "analyze",
    "arabic_script_lang",
    "content_words",
    "detect_language",
    "is_han",
    "normalize",
    "split_sentences",
    "stem",
    "stopwords",
    "words",
]
