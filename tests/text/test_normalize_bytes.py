"""normalize's byte path and its NFKC shortcut give exactly what the plain steps give.

Text over Latin-1, or over ASCII plus the usual Arabic/Persian characters, takes
normalize's first pass in bytes (``_fold_to_bytes``, ``_from_bytes``; the Cyrillic and
Devanagari alphabets serve vouched.guard.voice, which reads words off the bytes); text that is not
NFKC-normalised has its common compatibility characters replaced before NFKC is run
(``_nfkc_unnormalized``). Each is checked against the plain steps, kept here, and the
facts about Unicode they rest on are checked on every code point.
"""

from __future__ import annotations

import codecs
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.plain import CODE_POINTS, normalize_plain
from vouched.text.normalize import (
    _ARABIC,
    _CYRILLIC,
    _DEVANAGARI,
    _LATIN,
    _MAP,
    _compat_table,
    _fold_to_bytes,
    _from_bytes,
    _nfkc_unnormalized,
    normalize,
)

ALPHABETS = (_LATIN, _ARABIC, _CYRILLIC, _DEVANAGARI)
# A letter that picks each alphabet when it starts a text.
LEADS = {_LATIN: "a", _ARABIC: "\u0628", _CYRILLIC: "\u0431", _DEVANAGARI: "\u0915"}


# --- the facts the byte path rests on ---------------------------------------------------


def _second_characters_of_compositions() -> set[str]:
    """Every character that is second in a canonical composition (a two-character
    canonical decomposition, composition exclusions or not), plus Hangul V and T jamo."""
    found = {chr(c) for c in range(0x1161, 0x1176)} | {chr(c) for c in range(0x11A8, 0x11C3)}
    for c in CODE_POINTS:
        d = unicodedata.decomposition(c)
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                found.add(chr(int(parts[1], 16)))
    return found


def test_supported_characters_keep_every_string_of_them_nfkc_normalised() -> None:
    """_Alphabet's argument: a supported character, its casefold and the map's image of
    that are NFKC-stable, of combining class 0, and second in no composition."""
    seconds = _second_characters_of_compositions()
    assert not _LATIN.checked and not _ARABIC.checked and not _CYRILLIC.checked
    for alphabet in ALPHABETS:
        for c in alphabet.supported():
            f = alphabet.chars[alphabet.fold[alphabet.chars.index(c)]]
            assert f == c.casefold()
            m = f.translate(_MAP)
            for x in {c, f, m} - {""}:
                if not alphabet.checked:
                    assert unicodedata.combining(x) == 0, x
                    assert unicodedata.normalize("NFKC", x) == x, x
                    assert x not in seconds, x
            if m:
                assert m.isprintable() and (m == " " or not m.isspace()) and m.casefold() == m


def test_alphabet_bytes_are_its_characters() -> None:
    """Encoding, translating with ``fold`` then ``map``/``delete``, and decoding is
    casefold and then _MAP, character by character."""
    for alphabet in ALPHABETS:
        chars = alphabet.supported()
        if alphabet is _LATIN:
            encoded = chars.encode("latin-1")
        else:
            encoded = codecs.charmap_encode(chars, "strict", alphabet.encoding_map)[0]
        assert len(encoded) == len(chars) and bytes(encoded).decode("latin-1") != "" and 0 not in encoded
        assert codecs.charmap_decode(encoded, "strict", alphabet.chars)[0] == chars
        for c, byte in zip(chars, encoded):
            out = bytes([byte]).translate(alphabet.fold).translate(alphabet.map, alphabet.delete)
            assert codecs.charmap_decode(out, "strict", alphabet.chars)[0] == c.casefold().translate(_MAP)


def test_every_supported_pair_normalises_as_the_plain_steps_do() -> None:
    """Exhaustive on two characters: every supported character before every other (and
    a space), from a start that picks the alphabet."""
    for alphabet, lead in LEADS.items():
        chars = alphabet.supported()
        for a in chars:
            for b in chars:
                text = lead + a + b
                if text.isascii():
                    continue
                folded = _fold_to_bytes(text)
                if alphabet.checked and folded is None:  # is_normalized said no, or the map
                    continue
                assert folded is not None and folded[0] is alphabet, repr(text)
                got = _from_bytes(*folded)
                want = normalize_plain(text)
                if got is None:  # spaces to tidy: left to the general path
                    assert normalize(text) == want
                else:
                    assert got == want, repr(text)


def test_characters_outside_an_alphabet_are_refused() -> None:
    """A character the alphabet lacks, or does not support, sends the text elsewhere."""
    for text in ("aß", "aµ", "a\u00a0b", "a\tb", "a\x00", "éﬁ", "a\u0301", "ب\u064e", "ب\u0654",
                 "ب a中", "بß", "ب\u00e9", "\u0628\ufb50"):
        assert _fold_to_bytes(text) is None, repr(text)


# --- random text against the plain steps --------------------------------------------------

LATIN_PIECES = list(_LATIN.supported()) + [" ", "  ", "\u00a0", "ß", "ﬁ", "Ａ", "\u0301", "²", "\t", "İ"]
ARABIC_PIECES = list(_ARABIC.supported()) + [
    " ", "  ", "\u064e", "\u0651", "\u0654", "\u0670", "\ufb50", "\ufefb", "é", "中", "\u00a0", "A",
]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(LATIN_PIECES), min_size=1, max_size=30).map("".join))
def test_latin1_text_normalises_as_the_plain_steps_do(text: str) -> None:
    assert normalize(text) == normalize_plain(text)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(ARABIC_PIECES), min_size=1, max_size=30).map("".join))
def test_arabic_text_normalises_as_the_plain_steps_do(text: str) -> None:
    assert normalize(text) == normalize_plain(text)


OTHER_PIECES = (
    list(_CYRILLIC.supported()) + list(_DEVANAGARI.supported())
    + [" ", "  ", "\u0306", "\u0308", "\u0958", "\u0929", "\u093c", "\u094d", "\u0966", "\u200d",
       "\u00a0", "é", "A", "ß", "中", "\u0654"]
)


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from([_CYRILLIC, _DEVANAGARI, _LATIN, _ARABIC]),
       st.lists(st.sampled_from(OTHER_PIECES), max_size=30).map("".join))
def test_voices_byte_path_is_normalize(alphabet, text: str) -> None:
    """What vouched.guard.voice takes from _fold_to_bytes and _from_bytes."""
    text = LEADS[alphabet] + text
    folded = _fold_to_bytes(text)
    if folded is not None:
        got = _from_bytes(*folded)
        assert got is None or got == normalize_plain(text)


# --- NFKC of text that is not normalised ----------------------------------------------------

COMPAT_PIECES = (
    list(_compat_table()[0])[::7]
    + ["，", "。", "！", "Ａ", "ａ", "１", "\u3000", "ﬁ", "①", "²", "½", "\u00a0", "…", "™", "ﻻ", "ﺑ"]
    + ["a", "e", "A", "中", "文", " ", "\u0301", "\u0300", "\u0308", "\u0327", "\u093c", "\u094d",
       "\u0654", "\u0653", "\u064e", "\u1161", "\u11a8", "\u1100", "\uac00", "ｶ", "\uff9e", "\u0345"]
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(COMPAT_PIECES), min_size=1, max_size=20).map("".join))
def test_nfkc_shortcut_is_nfkc(text: str) -> None:
    if not unicodedata.is_normalized("NFKC", text):
        assert _nfkc_unnormalized(text) == unicodedata.normalize("NFKC", text)
    assert normalize(text) == normalize_plain(text)


def test_nfkc_shortcut_on_every_compatibility_character() -> None:
    """Each character of the table alone, after a letter and before a combining mark."""
    for c in _compat_table()[0]:
        for text in (c, "a" + c, c + "\u0301", "\u0627" + c + "\u0654", c + c):
            if not unicodedata.is_normalized("NFKC", text):
                assert _nfkc_unnormalized(text) == unicodedata.normalize("NFKC", text), repr(text)
