"""The matchers of ``vouched.guard.voice``: word-character classes (``_W``, ``_W1``), the
script tables, the byte-run heads test, the compiled ``_Lexicon`` and the regex builders
(``_word_re``, ``_word_re1``, ``_sep_re``, ``_char_re``).

Moved here unchanged from ``vouched.guard.voice``, which re-exports every name its users and
tests read from it.
"""

from __future__ import annotations

import codecs
import re

from vouched.text.normalize import (
    _ARABIC,
    _CYRILLIC,
    _DEVANAGARI,
    _LATIN,
    _Alphabet,
)
from vouched.text.scripts import (
    ARABIC_CLASS,
    CYRILLIC_CLASS,
    DEVANAGARI_CLASS,
    HAN_CLASS,
)


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
