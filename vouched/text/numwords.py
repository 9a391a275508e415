"""Small cardinal numbers written as words, read as the digits a model may write for them.

A source that says "a team of four" supports "a team of 4 [1]", but the sentence gate
(L4) compares digits only, so that sentence was held: a false hold. ``spelled_numbers(text)``
returns the canonical digit strings ("4") of the number words in ``text``; the gate adds
them to a *source's* values (``vouched.guard.values.source_values``). Only the source side
changes: a number word in a *sentence* is still not a value, so nothing the gate checked
before goes unchecked now, and a digit is only accepted when the source states that very
number in words.

Scope, deliberately small: 2–12 and a few round numbers (20, 30, 40, 50, 100) in the
project's languages, each word matched whole after ``vouched.text.words`` normalisation (so
Arabic letter forms, diacritics and case do not matter). Left out, because they are also
common words that are not numbers, and reading them would let a digit through that the
source never stated: one/un/une/uno/una/um/uma/ein/eine/یک/واحد/एक (articles, pronouns),
English "once" / Spanish "once" (11), French "sept" (= "Sept." for September) and "neuf"
("new"), "cent" (a coin), German "elf" (also English), Persian نه ("no") and ده ("village",
"give"), Hindi दो ("give"), Chinese and Japanese numerals (二, 三, … sit inside ordinary
words: 三月 is March). Compounds are not computed: "two hundred" gives 2 and 100, never 200,
so "200" against it is still held — the gate errs towards holding.
"""

from __future__ import annotations

import re
from functools import lru_cache

from vouched.text.normalize import normalize
from vouched.text.words import words

__all__ = ["CARDINALS", "EXCLUDED", "spelled_numbers", "spelled_numbers_by_words"]

CARDINALS: dict[str, dict[str, int]] = {
    "en": {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
           "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100},
    "es": {"dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8, "nueve": 9, "diez": 10,
           "doce": 12, "veinte": 20, "treinta": 30, "cuarenta": 40, "cincuenta": 50, "cien": 100},
    "pt": {"dois": 2, "duas": 2, "três": 3, "quatro": 4, "cinco": 5, "seis": 6, "sete": 7, "oito": 8, "nove": 9,
           "dez": 10, "onze": 11, "doze": 12, "vinte": 20, "trinta": 30, "quarenta": 40, "cinquenta": 50, "cem": 100},
    "fr": {"deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "huit": 8, "dix": 10, "onze": 11, "douze": 12,
           "vingt": 20, "trente": 30, "quarante": 40, "cinquante": 50},
    "de": {"zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10,
           "zwölf": 12, "zwanzig": 20, "dreißig": 30, "vierzig": 40, "fünfzig": 50, "hundert": 100},
    "ru": {"два": 2, "две": 2, "двух": 2, "три": 3, "трёх": 3, "четыре": 4, "четырёх": 4, "пять": 5, "пяти": 5,
           "шесть": 6, "шести": 6, "семь": 7, "семи": 7, "восемь": 8, "восьми": 8, "девять": 9, "девяти": 9,
           "десять": 10, "десяти": 10},
    "fa": {"دو": 2, "سه": 3, "چهار": 4, "پنج": 5, "شش": 6, "هفت": 7, "هشت": 8, "بیست": 20, "چهل": 40,
           "پنجاه": 50, "صد": 100},
    "ar": {"اثنان": 2, "اثنين": 2, "ثلاثة": 3, "أربعة": 4, "خمسة": 5, "ستة": 6, "سبعة": 7, "ثمانية": 8, "تسعة": 9,
           "عشرة": 10},
    "hi": {"तीन": 3, "चार": 4, "पांच": 5, "पाँच": 5, "छह": 6, "सात": 7, "आठ": 8, "नौ": 9, "दस": 10, "बीस": 20},
}

# Number words deliberately not read (see the module docstring); tests pin that they give nothing.
EXCLUDED = ("one", "once", "un", "une", "uno", "una", "um", "uma", "ein", "eine", "sept", "neuf", "cent", "elf",
            "نه", "ده", "یک", "واحد", "दो", "एक", "一", "二", "三", "十")


# A word character for the whole-word test: \w plus the combining marks \w leaves out
# (Devanagari vowel signs, Arabic harakat, Latin combining accents), so "पाँच" is one word.
_WORD_CHAR = r"[\w\u0300-\u036f\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963\u064b-\u065f\u0670]"


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, str], "re.Pattern[str]"]:
    out: dict[str, str] = {}
    for table in CARDINALS.values():
        for word, n in table.items():
            toks = words(word)
            assert len(toks) == 1, word
            key = toks[0]
            if key in out and out[key] != str(n):
                raise ValueError(f"number word {word!r} means {out[key]} in another language")
            out[key] = str(n)
    excluded = {t for w in EXCLUDED for t in words(w)}
    clash = excluded & set(out)
    if clash:
        raise ValueError(f"excluded number words in the table: {sorted(clash)}")
    return out, re.compile(rf"{_WORD_CHAR}+")


def spelled_numbers(text: str) -> frozenset[str]:
    """Canonical digit strings ("4", "20") of the number words of ``text`` (whole words, any listed language).

    One pass of a word regular expression over ``normalize(text)``, each word looked up (the gate builds a source's values once
    per question); tests check it against the reading through ``vouched.text.words``.
    """
    table, token = _table()
    return frozenset(table[w] for w in token.findall(normalize(text)) if w in table)


def spelled_numbers_by_words(text: str) -> frozenset[str]:
    """The reference reading: ``vouched.text.words`` tokens looked up one by one (slower)."""
    table, _ = _table()
    return frozenset(table[w] for w in words(text) if w in table)
