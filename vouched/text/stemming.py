"""Stemming (Snowball via PyStemmer) and ``analyze`` — the keyword index's analyser.

``stem(word, lang)`` uses the Snowball stemmer of ``lang``; Chinese (bigrams are already
minimal units) and languages without a stemmer return the word unchanged. Snowball
stemmer objects are not thread-safe, so each thread builds its own (``threading.local``);
results are memoised per (word, lang), which is what makes stemming cheap at index time.

``analyze(text, lang)`` = stemmed content words. With ``unique=False`` (default) repeats
are kept, because the keyword index needs term frequencies; ``unique=True`` keeps first
occurrences only, for coverage.

When ``lang`` is None, running language identification per text would be too slow for
indexing, so the stemmer is picked per token from its script: Cyrillic → russian,
Devanagari → hindi, Han → none, Latin → english, Arabic script → persian if the *raw*
text contains a Persian-only letter (پ چ ژ گ, or Persian ک/ی, which normalisation would
otherwise hide) and arabic if not; any other script → none. Stop words of all languages
are removed in that case.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from vouched.text.scripts import PERSIAN_MARKERS
from vouched.text.words import _content_tokens, _lang_key

ALGORITHMS: dict[str, str] = {
    "en": "english",
    "es": "spanish",
    "pt": "portuguese",
    "fr": "french",
    "de": "german",
    "ru": "russian",
    "ar": "arabic",
    "fa": "persian",
    "hi": "hindi",
}

_local = threading.local()


def _stemmer(lang: str):
    cache = getattr(_local, "stemmers", None)
    if cache is None:
        cache = _local.stemmers = {}
    st = cache.get(lang)
    if st is None:
        import Stemmer  # PyStemmer; imported lazily

        st = cache[lang] = Stemmer.Stemmer(ALGORITHMS[lang])
    return st


# The Arabic Snowball stemmer knows Arabic yeh/kaf/ta marbuta only; normalize() has turned
# them into ی/ک/ه, so they are restored for the stemmer (a final ه becomes ة, which the
# stemmer strips as consistently as it strips the pronoun suffix ه) and folded back after.
_TO_ARABIC = str.maketrans("\u06cc\u06a9", "\u064a\u0643")
_FROM_ARABIC = str.maketrans("\u064a\u0643\u0649\u0629", "\u06cc\u06a9\u06cc\u0647")


def _stem_arabic(word: str) -> str:
    w = word.translate(_TO_ARABIC)
    if len(w) > 2 and w[-1] == "\u0647":
        w = w[:-1] + "\u0629"
    return _stemmer("ar").stemWord(w).translate(_FROM_ARABIC)


@lru_cache(maxsize=1 << 18)
def _stem(word: str, lang: str) -> str:
    if lang == "ar":
        return _stem_arabic(word)
    return _stemmer(lang).stemWord(word)


def stem(word: str, lang: str) -> str:
    """Snowball stem of ``word`` (already normalised) for ``lang``; identity if none."""
    key = _lang_key(lang)
    if key not in ALGORITHMS or not word:
        return word
    return _stem(word, key)


def script_stem_lang(token: str, persian: bool) -> str | None:
    """The stemmer language for ``token`` judged by the script of its first letter."""
    for ch in token:
        cp = ord(ch)
        if cp < 0x250:
            if ch.isalpha():
                return "en"
            continue  # digits etc.: look further
        if 0x0400 <= cp <= 0x052F:
            return "ru"
        if 0x0900 <= cp <= 0x097F:
            return "hi"
        if 0x0600 <= cp <= 0x06FF or 0x0750 <= cp <= 0x077F:
            return "fa" if persian else "ar"
        if 0x1E00 <= cp <= 0x1EFF:
            return "en"
        return None
    return None


def analyze(text: str, lang: str | None = None, unique: bool = False) -> list[str]:
    """Stemmed content words of ``text`` in order; repeats kept unless ``unique``."""
    toks = _content_tokens(text, lang)
    if lang is not None:
        out = [stem(t, lang) for t in toks]
    else:
        persian = not PERSIAN_MARKERS.isdisjoint(text)
        out = []
        for t in toks:
            sl = script_stem_lang(t, persian)
            out.append(_stem(t, sl) if sl else t)
    return list(dict.fromkeys(out)) if unique else out
