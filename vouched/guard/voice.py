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

import codecs
import re
from functools import lru_cache
from importlib import resources

from vouched.text import LANGS, arabic_script_lang, normalize
from vouched.text.normalize import (
    _ARABIC,
    _CYRILLIC,
    _DEVANAGARI,
    _LATIN,
    _Alphabet,
    _fold_to_bytes,
    _from_bytes,
)
from vouched.text.scripts import ARABIC_CLASS, CYRILLIC_CLASS, DEVANAGARI_CLASS, HAN_CLASS

__all__ = ["first_person_word", "mask_source_quotes", "voice_langs", "voice_words"]


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
# _W as a single class, for text without "_" (there [^\W_] is \w): one test per character
# instead of up to seven branches makes a search about a third faster. Every code point
# from U+0900 to U+0963 is a Devanagari letter or digit or one of _W's marks, so the class
# needs only two ranges, and with at most two the regex compiler keeps ranges instead of
# building the bitmap. A test checks that it agrees with _W on every code point but "_".
_W1 = r"[\w\u0300-\u036f\u0900-\u0963]"
# Its complement: a separator (not a word character) in text without "_".
_NOT_W1 = r"[^\w\u0300-\u036f\u0900-\u0963]"

# Not pronouns although they read as one after case folding (English only).
_NOT_PRONOUN = re.compile(
    r"\b(?:[A-Za-z]\.){2,}"  # i.e. e.g. U.S.
    r"|\bUS\b"  # the country
    r"|\(\s*[iI]\s*\)|(?<![\w'])[iI]\)"  # (i) i) enumerations
    r"|\bI-\d"  # I-95
    r"|(?<!\w)-[iI]-"  # the letter itself, as a linguist writes it: "the vowel -i-"
    r"|\bI(?=\s+(?:or|and|to|-|–)\s+II\b)"  # "grade I or II"
    r"|(?<=[\w,]\s)[A-Z][a-z]+\s+I(?=\s+of\b|\s*[,;)]|\s*\Z)"  # a ruler's numeral: "King David I of Scotland", "Alexander I,"
    r"|\b(?:World\s+War|War|Phase|Type|Part|Chapter|Class|Level|Stage|Grade|Tier|Book"
    r"|Volume|Vol\.|Act|Article|Title|Schedule|Appendix|Section|Round|Series|Season"
    r"|Henry|Edward|Elizabeth|Louis|Charles|George|James|William|Richard|Mary)\s+I\b"
    r"|\b(?:phase|type|class|level|stage|grade|tier|category)\s+I\b"  # "listed grade I", "type I error"
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


_SepPair = tuple[re.Pattern[str], re.Pattern[str]]  # what _sep_re returns
_charmap_encode = codecs.charmap_encode
# The longest prefix of word characters.
_W_RUN = re.compile(f"(?:{_W})*")


def _encode(alphabet: _Alphabet, text: str) -> bytes | None:
    """``text`` in the alphabet's bytes, or None if it has a character the alphabet lacks."""
    if alphabet is _LATIN:
        b = text.encode("latin-1", "ignore")  # drops what is not Latin-1
    else:
        b = _charmap_encode(text, "ignore", alphabet.encoding_map)[0]
    return b if len(b) == len(text) else None


def _runs_table(chars: str) -> bytes:
    """bytes.translate table: a word character's byte kept, every other byte a space."""
    return bytes(i if re.fullmatch(_W, c) else 0x20 for i, c in enumerate(chars))


_RUNS = {alphabet: _runs_table(alphabet.chars) for alphabet in (_LATIN, _ARABIC, _CYRILLIC, _DEVANAGARI)}


class _Lexicon:
    """Compiled matchers for one set of languages.

    The whole-word entries have two matchers: ``words1``/``sep1`` (one of them, or
    neither), written with _W1, for text without "_" — nearly all text, and the faster
    one — and the general form with _W (``general()``), for text with "_", compiled on
    first use.

    Before either, a cheap test often shows that no whole-word entry can match
    (``heads``, see first_person_word). A match of entry e at position p
    has no word character (_W) before it, so p starts a run of word characters; the run
    ends at e's first character that is not one — a space in "می کنم", the apostrophe of
    "j'" — or, if e has none, right after e, as the right boundary wants no word
    character there. So the run is exactly e's head, its longest prefix of word
    characters, and a text none of whose runs is a head has no match. The runs of text
    over one of normalize's alphabets (Latin-1; ASCII with Arabic/Persian, Cyrillic or
    Devanagari) are cheap to list from the normalised text's bytes (``_fold_to_bytes``):
    every byte of a non-word character made a space, then split. Tidying spaces, or
    reading ’ and ʼ as apostrophes, changes no run.
    """

    __slots__ = ("words1", "sep1", "fast", "chars", "char_entries", "english", "_entries",
                 "_general", "heads")

    def __init__(self, entries: list[str], chars: re.Pattern[str] | None,
                 char_entries: tuple[str, ...], english: bool) -> None:
        self._entries = entries
        self._general: tuple[re.Pattern[str] | None, _SepPair | None] | None = None
        self.sep1 = _sep_re(entries, w=_W1, separator=_NOT_W1)
        self.words1 = None if self.sep1 is not None else _word_re1(entries)
        self.fast = self.sep1 is not None or self.words1 is not None
        heads = {_W_RUN.match(e).group() for e in entries}
        # alphabet -> (the heads in its bytes, its runs table); none if an entry starts
        # with a non-word character. A head that an alphabet cannot write is in no text
        # written in it.
        self.heads: dict[_Alphabet, tuple[frozenset[bytes], bytes]] = {}
        if "" not in heads:
            for alphabet, runs in _RUNS.items():
                encoded = frozenset(b for b in (_encode(alphabet, h) for h in heads) if b is not None)
                self.heads[alphabet] = (encoded, runs)
        self.chars = chars  # Chinese character scan
        # The Chinese entries: a match of ``chars`` contains one of them, so where none
        # is in the text (``in``, at C speed) the scan is skipped. The scan starts with
        # a lookahead guard, which leaves the regex engine no first character to skip to:
        # it tries a match at every position.
        self.char_entries = char_entries
        self.english = english  # English is among the lists: an "i"/"us" hit may be a false friend

    def general(self) -> tuple[re.Pattern[str] | None, _SepPair | None]:
        """(``_word_re``, ``_sep_re``) of the entries — one of them, or neither."""
        if self._general is None:
            sep = _sep_re(self._entries)
            self._general = (None if sep is not None else _word_re(self._entries), sep)
        return self._general


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


def _by_kind(entries: list[str]) -> tuple[list[str], list[str], list[str], bool]:
    """(entries longest first, the plain ones, the elisions — each kind in that order —,
    and whether an elision and a plain entry could match at one position: one is a
    prefix of the other)."""
    ordered = sorted(set(entries), key=len, reverse=True)
    elisions = [e for e in ordered if e.endswith("'")]
    plain = [e for e in ordered if not e.endswith("'")]
    return ordered, plain, elisions, any(a.startswith(b) or b.startswith(a) for a in elisions for b in plain)


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
    ordered, plain, elisions, clash = _by_kind(entries)
    if clash:
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


def _word_re1(entries: list[str]) -> re.Pattern[str] | None:
    """``_word_re`` with _W1 for _W (so only for text without "_"), shaped for speed.

    Shape: ``c(?<!W.)(?<!W'.)(?:(?:rests of c's plain entries)(?!W)(?!'W)|(?:rests of
    c's elisions)(?=W))|...`` — one branch per first letter, each opening with that
    letter as a literal. The regex engine then skips to the next first letter at C speed
    (as with ``_word_re``'s leading class) and picks the branch by its literal without
    entering the others; ``_word_re`` instead tries a ``(?<=c)`` lookbehind per first
    letter at every word start. Equivalence with ``_word_re``: at a position only the
    branch of the letter there can match; inside it the left boundary is the same, plain
    entries come before elisions, each kind longest first, and a failed right boundary
    backtracks to the next entry, as there. None where ``_word_re`` falls back to one
    branch per entry (an elision and a plain entry, one a prefix of the other).
    """
    if not entries:
        return None
    ordered, plain, elisions, clash = _by_kind(entries)
    if clash:
        return None
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for entry in ordered:
        kinds = groups.setdefault(entry[0], ([], []))
        kinds[1 if entry.endswith("'") else 0].append(re.escape(entry[1:]).replace(r"\ ", " "))
    branches = []
    for first, (plain_rests, elision_rests) in groups.items():
        kinds = []
        if plain_rests:
            kinds.append(f"(?:{'|'.join(plain_rests)})(?!{_W1})(?!'{_W1})")
        if elision_rests:
            kinds.append(f"(?:{'|'.join(elision_rests)})(?={_W1})")  # "j'" before a letter
        branches.append(f"{re.escape(first)}(?<!{_W1}.)(?<!{_W1}'.)(?:{'|'.join(kinds)})")
    return re.compile("|".join(branches), re.S)


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
    return _Lexicon(words, _char_re(chars, exceptions), tuple(dict.fromkeys(chars)),
                    english="en" in langs)


# Characters that are word characters (_W) but not letters or digits: combining marks.
_MARKS = r"[\u0300-\u036f]|[\u0900-\u0903]|[\u093a-\u094f]|[\u0951-\u0957]|\u0962|\u0963"
_W_RE = re.compile(_W)
# Common letters of Latin-script text: a lexicon with many entries starting with them
# (Spanish, Portuguese) makes _word_re try a match at most positions of a sentence.
_FREQUENT = frozenset("etaoinsrh")


def _sep_re(entries: list[str], always: bool = False, *, w: str = _W,
            separator: str = f"[\\W_](?<!{_MARKS})") -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """The same matcher as ``_word_re``, found from the other side: an entry starts the
    text, or follows a character that is not a word character (and not an apostrophe
    glued to one) — (one anchored at 0, one searched for such a character, the entry in
    group 1). The search then stops only at spaces and punctuation, not at every
    letter, which pays when most letters start some entry. None where it does not pay,
    or where an entry does not start with a word character (the separator would be
    part of it). ``always``: whether it pays or not (tests). ``w`` and ``separator``: a
    word character and a character that is not one (_W1 and _NOT_W1 for text without
    "_").
    """
    if not entries:
        return None
    ordered, plain, elisions, clash = _by_kind(entries)
    if not always and len(_FREQUENT.intersection(e[0] for e in ordered)) < 6:
        return None
    if clash or not all(_W_RE.fullmatch(e[0]) for e in ordered):
        return None
    alts = []
    if plain:
        alts.append(f"(?:{_literal_first(plain)})(?!{w})(?!'{w})")
    if elisions:
        alts.append(f"(?:{_literal_first(elisions)})(?={w})")
    body = "|".join(alts)
    return re.compile(f"({body})"), re.compile(f"{separator}(?<!{w}')({body})")


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
    # The test for no whole-word match (see _Lexicon), on the bytes of the normalised
    # sentence where it has them: (heads, runs table) and the bytes.
    test: tuple[frozenset[bytes], bytes] | None = None
    folded_bytes = None
    if sentence.isascii():
        test = lex.heads.get(_LATIN)
        b = sentence.encode("ascii").lower()  # normalize(): lower, on ASCII
    elif sentence < "\u0980":  # (else in no alphabet: see _fold_to_bytes)
        folded_bytes = _fold_to_bytes(sentence)
        if folded_bytes is not None:
            test = lex.heads.get(folded_bytes[0])
            b = folded_bytes[1]
    no_word = test is not None and test[0].isdisjoint(b.translate(test[1]).split(b" "))
    if no_word and lex.chars is None:
        return None
    if sentence.isascii():  # normalize() inlined; no curly apostrophe to read
        norm = sentence.lower()
        if not norm.isprintable() or "  " in norm or norm.startswith(" ") or norm.endswith(" "):
            norm = " ".join(norm.split())
    else:
        norm = None if folded_bytes is None else _from_bytes(*folded_bytes)  # normalize()'s
        if norm is None:
            norm = normalize(sentence)
        if "\u2019" in norm or "\u02bc" in norm:  # _apostrophes
            norm = norm.replace("\u2019", "'").replace("\u02bc", "'")
    words1 = lex.words1
    if words1 is not None and lex.chars is None and "_" not in norm:  # _search, one pattern
        m = words1.search(norm)
        hit = None if m is None else m.group(0)
    else:
        hit = _search(lex, norm, no_word)
    if hit is not None and lex.english and hit in ("i", "us"):
        # Only now pay for the English guard, then look again without the false friends.
        hit = _search(lex, _apostrophes(normalize(_NOT_PRONOUN.sub(" ", sentence))))
    if hit is not None:
        # Only now look for titles and names that may hold the word (see _mask_titles).
        masked = _mask_titles(sentence)
        if masked != sentence:
            return first_person_word(masked, lang)
    return hit


# A quoted span (a title, or words quoted from a source), in the quotes of any language.
_TITLE_QUOTE = re.compile(
    r"“[^“”\n]{1,120}”|„[^„“”\n]{1,120}[“”]|«[^«»\n]{1,120}»|‹[^‹›\n]{1,120}›|\"[^\"\n]{1,120}\""
    r"|《[^《》\n]{1,120}》|「[^「」\n]{1,120}」|『[^『』\n]{1,120}』|〈[^〈〉\n]{1,120}〉"
)
_PIECE = re.compile(r"\S+")
_EDGE = "\"'“”‘’„«»‹›()[]{}<>.,;:!?¡¿…—–*"
_MAX_QUOTED_WORDS = 8


def _mask_titles(sentence: str) -> str:
    """``sentence`` with the spans where a first-person word is not the assistant speaking
    blanked out (each character a space):

    * a quoted span of at most ``_MAX_QUOTED_WORDS`` words (a song, book or film title,
      or a name: “Me Before You”, «Я и Москва», 《我的世界》);
    * a run of capitalised words, small lower-case words (at most 3 letters: "the", "of",
      "me") allowed between them, with at least two capitalised words of two or more
      letters besides the sentence's first word — a title written without quotes ("her
      single I Will Survive", "the film Me Before You"; not "Tessera and I", "So I
      think"). A run that starts the sentence keeps its first word ("My Life in Porto
      is..." is still held: it reads as "my");
    * a hyphenated word with a one-letter part ("I-Ching", "X-Men", "Kim Jae-I").

    Cased scripts only for the last two; quotes everywhere.
    """
    chars = list(sentence)

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if not chars[k].isspace():
                chars[k] = " "

    for m in _TITLE_QUOTE.finditer(sentence):
        if m.group(0).count(" ") < _MAX_QUOTED_WORDS:
            blank(m.start(), m.end())
    pieces = [(m.start(), m.end(), m.group(0).strip(_EDGE)) for m in _PIECE.finditer(sentence)]
    run: list[int] = []  # indices of the pieces of the current run

    def close() -> None:
        # Two capitalised words besides the sentence's first word and one-letter words (the
        # pronoun "I" itself): "Tessera and I", "So I think" are no titles.
        caps = [i for i in run if i > 0 and len(pieces[i][2]) > 1 and pieces[i][2][:1].isupper()]
        if len(caps) >= 2:
            start = run[0] + (1 if run[0] == 0 else 0)  # a run that starts the sentence keeps its first word
            for i in run:
                if i >= start:
                    blank(pieces[i][0], pieces[i][1])
        run.clear()

    for i, (a, b, core) in enumerate(pieces):
        if core[:1].isupper():
            run.append(i)
        elif run and core.isalpha() and core.islower() and len(core) <= 3 \
                and i + 1 < len(pieces) and pieces[i + 1][2][:1].isupper():
            run.append(i)  # "the", "of" inside a title
        else:
            close()
        raw = sentence[a:b]
        if "-" in core and any(len(p) == 1 and p.isalpha() for p in core.split("-")) \
                and any(p[:1].isupper() for p in core.split("-")):
            blank(a, b)
        if raw[-1:] in ".!?;:" or raw[-1:] in "”»\"":
            close()  # a title does not run over punctuation
    close()
    return "".join(chars)


def _search(lex: _Lexicon, norm: str, no_word: bool = False) -> str | None:
    """The first entry in ``norm``; ``no_word``: known to have no whole-word match."""
    if no_word:
        words = sep = None
    elif lex.fast and "_" not in norm:
        words, sep = lex.words1, lex.sep1
    else:
        words, sep = lex.general()
    if sep is not None:
        m = sep[0].match(norm) or sep[1].search(norm)
        word = None if m is None else (m.start(1), m.group(1))
    else:
        m = None if words is None else words.search(norm)
        word = None if m is None else (m.start(), m.group(0))
    if lex.chars is not None:
        for entry in lex.char_entries:
            if entry in norm:  # else the scan cannot match (see _Lexicon)
                m = lex.chars.search(norm)
                if m is not None and (word is None or m.start() < word[0]):
                    return m.group(0)
                break
    return None if word is None else word[1]


_OPEN_QUOTES = {"“": "”", "„": "“”", "«": "»", "‹": "›", '"': '"', "《": "》", "「": "」", "『": "』"}


def mask_source_quotes(sentence: str, sources: list[str]) -> str:
    """``sentence`` with every quotation whose words are, verbatim, in one of ``sources``
    blanked out: quoting a source's own first person ("told the court, “I am here to…”) is
    not the assistant speaking as the subject. A quotation runs from an opening quote to
    its closing one, or to the sentence's end when the sentence splitter cut it there.
    Compared normalised (``normalize``, whitespace collapsed), at least three words long.
    """
    out = sentence
    norm_sources = None
    i = 0
    while i < len(sentence):
        close = _OPEN_QUOTES.get(sentence[i])
        if close is None:
            i += 1
            continue
        j = i + 1
        while j < len(sentence) and sentence[j] not in close:
            j += 1
        inner = " ".join(normalize(sentence[i + 1 : j]).split()).strip(" .,;:!?…")
        if len(inner.split()) >= 3:
            if norm_sources is None:
                norm_sources = [" ".join(normalize(t).split()) for t in sources]
            if any(inner in t for t in norm_sources):
                out = out[: i + 1] + " " * (j - i - 1) + out[j:]
        i = j + 1
    return out
