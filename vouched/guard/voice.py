"""L5 — voice: the answer never speaks as the subject.

``first_person_word(sentence, lang)`` returns the first first-person word of a sentence
(normalised, as matched), or None. The sentence gate (L4) runs it on every sentence,
markers already stripped.

Lists: one data file per language in ``voice_words/{lang}.txt`` (en fa es pt fr de ar ru
zh hi); each file's header says what is in it and what was left out, and why.

How a sentence is matched:

* on ``normalize(sentence)`` (case folded, Arabic forms → Persian, ZWNJ → space, ...), as
  whole words: a match may not touch a letter, digit or combining mark on either side, nor
  an apostrophe that joins it to one — the same word boundaries as ``vouched.text.words``
  (a test pins the two together). An entry with a space is a word sequence (Persian
  "می کنم"); an entry ending in an apostrophe is a French elision ("j'" before "ai");
* Chinese has no word boundaries: 我 and 咱 are found anywhere, except inside 自我
  ('self'). 我们 ('we') counts;
* which lists: the answer language's list plus English (English pronouns are what a
  model falls back to in any language). Checking every list at once would trade one
  language's pronoun for another's ordinary word: Persian «من» 'I' is Arabic «من» 'from',
  Portuguese "nos" is 'in the'. With ``lang=None`` the lists are English plus those the
  script implies: Han → zh, Cyrillic → ru, Devanagari → hi, Arabic script → fa or ar as
  ``arabic_script_lang`` decides from the raw letters. Latin-script languages other than
  English are only checked when ``lang`` says so. An unknown ``lang`` gets English only.

Decisions (see the data files for the rest):

* "we / us / our" count — an answer that says "we" speaks for the subject's
  organisation; a source's "we" must be paraphrased;
* "mine" is left out (a gold mine); "US" in capitals, dotted abbreviations (i.e., U.S.),
  "(i)" enumerations and Roman-numeral "I" after War/Phase/Type/Part/... are not pronouns;
* Persian clitics ‌ام / ‌ایم are not matched (after normalisation "ام" is also Arabic «أم»
  'or/mother'); present-perfect first person ("کرده‌ام") is therefore missed;
* Arabic «لديّ» ('I have') is left out: normalisation makes it «لدی», the same as the
  preposition «لدى» ('at, with'). «عليّ» / «إليّ» / «فيّ» fold onto «على» / «إلى» / «في» too.

Weak spots, stated plainly: first person carried only by a verb ending (Spanish
"trabajé" is listed, but most verbs are not; Arabic suffixes; Persian endings beyond the
listed verbs) passes; so does a first-person claim phrased impersonally ("this author").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from vouched.text import LANGS, arabic_script_lang, normalize
from vouched.text.scripts import ARABIC_CLASS, CYRILLIC_CLASS, DEVANAGARI_CLASS, HAN_CLASS

__all__ = ["first_person_word", "voice_langs", "voice_words"]


def _apostrophes(text: str) -> str:
    """Apostrophes as ``vouched.text.words`` reads them: ’ and ʼ are '."""
    # str.translate with a dict is slow on non-ASCII text; two replaces are not.
    if "\u2019" in text or "\u02bc" in text:
        return text.replace("\u2019", "'").replace("\u02bc", "'")
    return text


# A word character for boundaries: letters/digits (not "_") and combining marks, which
# Python's \w leaves out (Devanagari matras, the virama, anusvara ...). Written as one
# range per class: a single class of several non-Latin-1 ranges costs the regex compiler
# ~0.15 ms per occurrence (it builds a 64K bitmap in Python), one range next to nothing.
_W = (
    r"(?:[^\W_]|[\u0300-\u036f]|[\u0900-\u0903]|[\u093a-\u094f]|[\u0951-\u0957]"
    r"|\u0962|\u0963)"
)

# Not pronouns although they read as one after case folding (English only).
_NOT_PRONOUN = re.compile(
    r"\b(?:[A-Za-z]\.){2,}"  # i.e. e.g. U.S.
    r"|\bUS\b"  # the country
    r"|\(\s*[iI]\s*\)|(?<![\w'])[iI]\)"  # (i) i) enumerations
    r"|\bI-\d"  # I-95
    r"|\b(?:World\s+War|War|Phase|Type|Part|Chapter|Class|Level|Stage|Grade|Tier|Book"
    r"|Volume|Vol\.|Act|Article|Title|Schedule|Appendix|Section|Round|Series|Season"
    r"|Henry|Edward|Elizabeth|Louis|Charles|George|James|William|Richard|Mary)\s+I\b"
)
# Scripts that imply a list, in the order the lists are added ("ar" → fa or ar).
_SCRIPT_CLASSES = (
    (ARABIC_CLASS, "ar"), (HAN_CLASS, "zh"), (CYRILLIC_CLASS, "ru"), (DEVANAGARI_CLASS, "hi"),
)
_SCRIPT_TABLE = tuple((re.compile(f"[{cls}]"), code) for cls, code in _SCRIPT_CLASSES)
_ANY_SCRIPT = re.compile("[" + "".join(cls for cls, _ in _SCRIPT_CLASSES) + "]")
_OTHER_SCRIPTS = tuple(
    re.compile("[" + "".join(cls for j, (cls, _) in enumerate(_SCRIPT_CLASSES) if j != i) + "]")
    for i in range(len(_SCRIPT_CLASSES))
)


def _script_index(ch: str) -> int:
    for i, (pattern, _) in enumerate(_SCRIPT_TABLE):
        if pattern.match(ch):
            return i
    raise AssertionError(f"{ch!r} is in no script class")  # _ANY_SCRIPT is their union


@dataclass(frozen=True)
class _Lexicon:
    """Compiled matchers for one set of languages."""

    words: re.Pattern[str] | None  # whole-word entries
    chars: re.Pattern[str] | None  # Chinese character scan
    english: bool  # English is among the lists: an "i"/"us" hit may be a false friend
    # The whole-word entries in the separator form (see _sep_re), instead of ``words``.
    sep: tuple[re.Pattern[str], re.Pattern[str]] | None = None


@lru_cache(maxsize=None)
def voice_words(lang: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(entries, exceptions) of ``lang``'s list, normalised; empty for an unknown ``lang``."""
    if lang not in LANGS:
        return (), ()
    raw = resources.files("vouched.guard").joinpath("voice_words", f"{lang}.txt")
    entries: list[str] = []
    exceptions: list[str] = []
    for line in raw.read_text("utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        if entry.startswith("-"):
            exceptions.append(normalize(entry[1:]))
        else:
            entries.append(_apostrophes(normalize(entry)))
    return tuple(dict.fromkeys(entries)), tuple(exceptions)


def voice_langs(sentence: str, lang: str | None) -> tuple[str, ...]:
    """The lists checked for ``sentence``: ``lang`` plus English, or English plus script."""
    if lang is not None:
        return _given_langs(lang)
    if sentence.isascii():
        return ("en",)
    # Usually one script: find its first letter, then look once for any of the others.
    m = _ANY_SCRIPT.search(sentence)
    if m is None:
        return ("en",)
    first = _script_index(m.group())
    present = {first}
    rest = _OTHER_SCRIPTS[first].search(sentence, m.end())
    if rest is not None:
        present.update(i for i, (pattern, _) in enumerate(_SCRIPT_TABLE) if pattern.search(sentence))
    found = ["en"]
    for i, (_, code) in enumerate(_SCRIPT_TABLE):
        if i in present:
            found.append(arabic_script_lang(sentence) if code == "ar" else code)
    return tuple(found)


@lru_cache(maxsize=64)
def _given_langs(lang: str) -> tuple[str, ...]:
    key = re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]
    return ("en", key) if key in LANGS and key != "en" else ("en",)


def _word_re(entries: list[str]) -> re.Pattern[str] | None:
    """One pattern for whole-word entries; a hit is the first entry (longest first) that
    matches at the leftmost position where any does.

    Shape: ``[first letters](?<!W.)(?<!W'.)(?:(?<=c)(?:rests of c's entries)|...)`` and
    the right boundary once per kind. The left boundary depends only on where a match
    starts and the right one only on where it ends (and on the kind: an elision such as
    "j'" wants a letter next), so each is written once instead of once per entry: the
    pattern compiles in well under a millisecond instead of ~70 ms, and a leading class
    of first letters still lets the regex engine skip most positions. Entries keep their
    longest-first order within each first letter (backtracking tries the next, shorter
    one when a boundary fails), which is the order that decides a hit.
    """
    if not entries:
        return None
    ordered = sorted(set(entries), key=len, reverse=True)
    elisions = [e for e in ordered if e.endswith("'")]
    plain = [e for e in ordered if not e.endswith("'")]
    if any(a.startswith(b) or b.startswith(a) for a in elisions for b in plain):
        # Both kinds could match at one position: keep the global longest-first order.
        return _word_re_per_entry(ordered)
    alts = []
    if plain:
        alts.append(f"(?:{_by_first(plain)})(?!{_W})(?!'{_W})")
    if elisions:
        alts.append(f"(?:{_by_first(elisions)})(?={_W})")  # "j'" before a letter
    firsts = "".join(sorted({re.escape(e[0]) for e in ordered}))
    return re.compile(f"[{firsts}](?<!{_W}.)(?<!{_W}'.)(?:{'|'.join(alts)})", re.S)


def _by_first(entries: list[str]) -> str:
    """Alternation of entries already matched up to their first letter, in order."""
    rests: dict[str, list[str]] = {}
    for entry in entries:
        rests.setdefault(entry[0], []).append(re.escape(entry[1:]).replace(r"\ ", " "))
    return "|".join(f"(?<={re.escape(c)})(?:{'|'.join(r)})" for c, r in rests.items())


def _word_re_per_entry(ordered: list[str]) -> re.Pattern[str]:
    """The general form: every branch its own literal and boundaries (slow to compile)."""
    alts = []
    for entry in ordered:
        body = re.escape(entry).replace(r"\ ", " ")
        left = f"(?<!{_W}{body})(?<!{_W}'{body})"
        if entry.endswith("'"):
            alts.append(f"{body}{left}(?={_W})")
        else:
            alts.append(f"{body}{left}(?!{_W})(?!'{_W})")
    return re.compile("|".join(alts))


def _char_re(entries: list[str], exceptions: tuple[str, ...]) -> re.Pattern[str] | None:
    if not entries:
        return None
    alts = []
    for entry in sorted(set(entries), key=len, reverse=True):
        guards = "".join(
            f"(?!(?<={re.escape(ex[:i])}){re.escape(ex[i:])})"
            for ex in exceptions
            for i in _find_all(ex, entry)
        )
        alts.append(guards + re.escape(entry))
    return re.compile("|".join(alts))


def _find_all(haystack: str, needle: str) -> list[int]:
    return [i for i in range(len(haystack)) if haystack.startswith(needle, i)]


@lru_cache(maxsize=64)
def _lexicon(langs: tuple[str, ...]) -> _Lexicon:
    words: list[str] = []
    chars: list[str] = []
    exceptions: tuple[str, ...] = ()
    for code in langs:
        entries, excs = voice_words(code)
        if code == "zh":
            chars.extend(entries)
            exceptions += excs
        else:
            words.extend(entries)
    sep = _sep_re(words)
    return _Lexicon(None if sep else _word_re(words), _char_re(chars, exceptions),
                    english="en" in langs, sep=sep)


# Characters that are word characters (_W) but not letters or digits: combining marks.
_MARKS = r"[\u0300-\u036f]|[\u0900-\u0903]|[\u093a-\u094f]|[\u0951-\u0957]|\u0962|\u0963"
_W_RE = re.compile(_W)
# Common letters of Latin-script text: a lexicon with many entries starting with them
# (Spanish, Portuguese) makes _word_re try a match at most positions of a sentence.
_FREQUENT = frozenset("etaoinsrh")


def _sep_re(entries: list[str], always: bool = False) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """The same matcher as ``_word_re``, found from the other side: an entry starts the
    text, or follows a character that is not a word character (and not an apostrophe
    glued to one) — (one anchored at 0, one searched for such a character, the entry in
    group 1). The search then stops only at spaces and punctuation, not at every
    letter, which pays when most letters start some entry. None where it does not pay,
    or where an entry does not start with a word character (the separator would be
    part of it). ``always``: whether it pays or not (tests).
    """
    if not entries:
        return None
    ordered = sorted(set(entries), key=len, reverse=True)
    if not always and len(_FREQUENT.intersection(e[0] for e in ordered)) < 6:
        return None
    if not all(_W_RE.fullmatch(e[0]) for e in ordered):
        return None
    elisions = [e for e in ordered if e.endswith("'")]
    plain = [e for e in ordered if not e.endswith("'")]
    if any(a.startswith(b) or b.startswith(a) for a in elisions for b in plain):
        return None
    alts = []
    if plain:
        alts.append(f"(?:{_literal_first(plain)})(?!{_W})(?!'{_W})")
    if elisions:
        alts.append(f"(?:{_literal_first(elisions)})(?={_W})")
    body = "|".join(alts)
    return re.compile(f"({body})"), re.compile(f"[\\W_](?<!{_MARKS})(?<!{_W}')({body})")


def _literal_first(entries: list[str]) -> str:
    """Alternation by first letter, each branch a literal (the engine picks the branch by
    its first character), entries in order within it."""
    rests: dict[str, list[str]] = {}
    for entry in entries:
        rests.setdefault(entry[0], []).append(re.escape(entry[1:]).replace(r"\ ", " "))
    return "|".join(f"{re.escape(c)}(?:{'|'.join(r)})" for c, r in rests.items())


# lang → its lexicon (what _lexicon(_given_langs(lang)) returns; both are cached, but two
# cached calls per sentence cost more than the search on a short one).
_BY_LANG: dict[str, _Lexicon] = {}


def first_person_word(sentence: str, lang: str | None = None) -> str | None:
    """The first first-person word of ``sentence`` (normalised), or None."""
    if lang is None:
        lex = _lexicon(voice_langs(sentence, None))
    else:
        lex = _BY_LANG.get(lang)
        if lex is None:
            lex = _lexicon(_given_langs(lang))
            if len(_BY_LANG) < 64:
                _BY_LANG[lang] = lex
    if sentence.isascii():  # normalize() inlined; no curly apostrophe to read
        norm = sentence.lower()
        if not norm.isprintable() or "  " in norm or norm.startswith(" ") or norm.endswith(" "):
            norm = " ".join(norm.split())
    else:
        norm = normalize(sentence)
        if "\u2019" in norm or "\u02bc" in norm:  # _apostrophes
            norm = norm.replace("\u2019", "'").replace("\u02bc", "'")
    if lex.chars is None and lex.words is not None:  # _search with one pattern
        m = lex.words.search(norm)
        hit = None if m is None else m.group(0)
    else:
        hit = _search(lex, norm)
    if hit is not None and lex.english and hit in ("i", "us"):
        # Only now pay for the English guard, then look again without the false friends.
        hit = _search(lex, _apostrophes(normalize(_NOT_PRONOUN.sub(" ", sentence))))
    return hit


def _search(lex: _Lexicon, norm: str) -> str | None:
    if lex.sep is not None:
        m = lex.sep[0].match(norm) or lex.sep[1].search(norm)
        word = None if m is None else (m.start(1), m.group(1))
    else:
        m = None if lex.words is None else lex.words.search(norm)
        word = None if m is None else (m.start(), m.group(0))
    if lex.chars is not None:
        m = lex.chars.search(norm)
        if m is not None and (word is None or m.start() < word[0]):
            return m.group(0)
    return None if word is None else word[1]
