"""normalize()'s first pass over text in a small alphabet (Latin-1, Arabic/Persian, Cyrillic, Devanagari), as bytes.

Part of vouched.text.normalize, which re-exports every name here; vouched.guard.voice reads
words off these bytes.
"""

from __future__ import annotations

import codecs
import unicodedata

from vouched.text.normalize_map import _MAP

_is_normalized = unicodedata.is_normalized
_nfkc = unicodedata.normalize


# --- text over a small alphabet, as bytes ------------------------------------------------
#
# On a sentence each step of the first pass costs ~0.3-1 µs (NFKC's quick check,
# casefold, NFKC again, the map's search, isprintable), and the map itself ~80 ns per
# character (str.translate looks every character up in Python objects). Text over one of
# two alphabets of at most 256 characters — Latin-1, or ASCII plus the usual
# Arabic/Persian characters — takes the pass in bytes instead: encoded one byte per
# character (the latin-1 codec, or a charmap: C speed), casefold and the map one
# bytes.translate each, then decoded. A character outside the alphabet (the encoder drops
# it, so the bytes come out shorter) or one the alphabet does not support (folded to byte
# 0, see _Alphabet) sends the text down the general path, and so does text whose spaces
# need tidying. normalize() takes this path for Latin-1 and Arabic text only: on Cyrillic
# and Devanagari text encoding and decoding with a charmap cost as much as they save. The
# alphabets for those serve vouched.guard.voice, which reads words off the bytes without
# decoding them (see _fold_to_bytes).


class _Alphabet:
    """One alphabet: byte i is the character ``chars[i]``.

    A character c is supported when c.casefold() is one character f of the alphabet, f's
    image under _MAP is empty or one character m of the alphabet that is printable, not
    whitespace other than " " and casefold-stable, and c, f and m are NFKC-stable, of
    combining class 0 and the second character of no canonical composition (this last
    condition is checked on every code point by a test). Per byte, ``fold`` is casefold
    (0 for an unsupported character) and ``map``/``delete`` are _MAP.

    Why the bytes give normalize()'s result: a string of characters that are NFKC-stable,
    of class 0 and second in no composition has NFKC quick-check value Yes throughout, so
    it is NFKC-normalised (it is how unicodedata's own quick check answers Yes). So the
    text, its casefold and the mapped text are all left alone by NFKC; the first pass is
    casefold and the map, character by character, and its result — all characters
    casefold- and NFKC-stable, printable, spaces tidy — is what the stability loop
    returns at once.

    A ``checked`` alphabet (Devanagari, whose vowel signs and virama combine) drops the
    NFKC conditions; instead _fold_to_bytes asks is_normalized about the text and, if
    folding changed it, about the folded text, and gives up when the map would change
    anything. Then the first pass is casefold alone, its result normalised: what the
    stability loop returns at once too.
    """

    __slots__ = ("chars", "checked", "fold", "map", "delete", "encoding_map")

    def __init__(self, chars: str, checked: bool = False) -> None:
        assert len(chars) == 256 and chars[0] == "\x00"
        self.chars = chars
        self.checked = checked
        # The charmap codec's table (None: the latin-1 codec does it). charmap_build gives
        # its fast table only if byte 0 is U+0000; U+0000 itself is unsupported below.
        self.encoding_map = None if chars == _LATIN1 else codecs.charmap_build(chars)
        index = {c: i for i, c in enumerate(chars) if c != "\ufffe" and i}

        def stable(c: str) -> bool:
            return checked or (unicodedata.combining(c) == 0 and _nfkc("NFKC", c) == c)

        fold = bytearray(256)
        mapping = bytearray(range(256))
        delete = bytearray()
        for c, i in index.items():
            folded = c.casefold()
            if folded not in index or not stable(c) or not stable(folded):
                continue
            mapped = folded.translate(_MAP)
            if mapped == "":
                delete.append(index[folded])
            elif (mapped in index and stable(mapped) and mapped.isprintable()
                  and (mapped == " " or not mapped.isspace()) and mapped.casefold() == mapped):
                mapping[index[folded]] = index[mapped]
            else:
                continue
            fold[i] = index[folded]
        self.fold = bytes(fold)
        self.map = bytes(mapping)
        self.delete = bytes(delete)

    def supported(self) -> str:
        """The supported characters (for the tests)."""
        return "".join(c for c, f in zip(self.chars, self.fold) if f)


_LATIN1 = "".join(map(chr, range(256)))


def _with_ascii(extra: str) -> str:
    """A charmap table: ASCII at its own bytes, ``extra`` in the bytes that ASCII's
    controls and the upper half leave free (unused bytes: U+FFFE, which the codec skips)."""
    free = [i for i in range(1, 256) if i < 0x20 or i >= 0x7F]
    assert len(extra) <= len(free) and len(set(extra)) == len(extra)
    table = [chr(i) if i < 0x80 else "\ufffe" for i in range(256)]
    for i, c in zip(free, extra):
        table[i] = c
    return "".join(table)


def _chars(*ranges: tuple[int, int]) -> str:
    return "".join(chr(cp) for lo, hi in ranges for cp in range(lo, hi + 1))


_LATIN = _Alphabet(_LATIN1)
_ARABIC = _Alphabet(_with_ascii(_chars(
    # Invisible controls (the map deletes them or, ZWNJ, makes a space), soft hyphen,
    # guillemets, dashes, curly quotes.
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2060), (0x2066, 0x2069), (0xFEFF, 0xFEFF),
    (0x00AD, 0x00AD), (0x00AB, 0x00AB), (0x00BB, 0x00BB), (0x2013, 0x2014), (0x2018, 0x2019),
    (0x201C, 0x201E),
    # Arabic punctuation, letters (tatweel included), digits and separators, the Persian
    # and Urdu letters, the Persian digits. Not the harakat and other marks: combining.
    (0x060C, 0x060C), (0x061B, 0x061C), (0x061F, 0x061F), (0x0621, 0x063A), (0x0640, 0x064A),
    (0x0660, 0x066D), (0x0671, 0x0671), (0x0679, 0x0679), (0x067E, 0x067E), (0x0686, 0x0686),
    (0x0688, 0x0688), (0x0691, 0x0691), (0x0698, 0x0698), (0x06A4, 0x06A4), (0x06A9, 0x06A9),
    (0x06AF, 0x06AF), (0x06BA, 0x06BA), (0x06BE, 0x06BE), (0x06C0, 0x06C3), (0x06CC, 0x06CC),
    (0x06D2, 0x06D5), (0x06F0, 0x06F9),
)))
# For vouched.guard.voice only (see above): Russian (and Ukrainian, Serbian, ...) letters,
# the Devanagari block; with the invisible controls, guillemets, dashes and quotes.
_CYRILLIC = _Alphabet(_with_ascii(_chars(
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2060), (0x2066, 0x2069), (0xFEFF, 0xFEFF),
    (0x00AD, 0x00AD), (0x00AB, 0x00AB), (0x00BB, 0x00BB), (0x2013, 0x2014), (0x2018, 0x2019),
    (0x201C, 0x201E), (0x0400, 0x045F), (0x0490, 0x0491),
)))
_DEVANAGARI = _Alphabet(_with_ascii(_chars(
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2060), (0x2066, 0x2069), (0xFEFF, 0xFEFF),
    (0x00AD, 0x00AD), (0x2013, 0x2014), (0x2018, 0x2019), (0x201C, 0x201D), (0x0900, 0x097F),
)), checked=True)
_charmap_encode = codecs.charmap_encode
_charmap_decode = codecs.charmap_decode


def _fold_to_bytes(text: str) -> tuple[_Alphabet, bytes] | None:
    """For non-ASCII text over an alphabet (see above): the alphabet and normalize's
    first pass (casefold, then the map) of the text, in the alphabet's bytes, its spaces
    not yet tidied; else None. (vouched.guard.voice reads words off these bytes.)

    The alphabet tried is the one of the text's first character: other text is in
    none, or not worth the try (the encoder's verdict on text in another script costs
    more than it would save on the odd text that starts with a Latin-1 character). The
    tests compare whole strings: ``text < "\u0100"`` is ``text[0] < "\u0100"`` for
    non-empty text, without making a string of text[0] (which costs as much again).
    """
    if text < "\u0100":
        alphabet = _LATIN
        b = text.encode("latin-1", "ignore")  # drops what is not Latin-1
    else:
        if "\u0621" <= text < "\u0700":
            alphabet = _ARABIC
        elif "\u0400" <= text < "\u0460":
            alphabet = _CYRILLIC
        elif "\u0900" <= text < "\u0980":
            alphabet = _DEVANAGARI
        else:
            return None
        b = _charmap_encode(text, "ignore", alphabet.encoding_map)[0]  # drops the rest
    if len(b) != len(text):  # a character outside the alphabet was dropped
        return None
    folded = b.translate(alphabet.fold)
    if 0 in folded:  # an unsupported character
        return None
    mapped = folded.translate(alphabet.map, alphabet.delete)
    if alphabet.checked:  # see _Alphabet
        if mapped != folded or not _is_normalized("NFKC", text):
            return None
        if folded != b and not _is_normalized("NFKC", _charmap_decode(folded, None, alphabet.chars)[0]):
            return None
    return alphabet, mapped


def _from_bytes(alphabet: _Alphabet, mapped: bytes) -> str | None:
    """normalize's result from _fold_to_bytes's, or None if the spaces need tidying
    (left to the general path)."""
    if alphabet is _LATIN:
        s = mapped.decode("latin-1")
    else:
        s = _charmap_decode(mapped, None, alphabet.chars)[0]
    if "  " in s or s.startswith(" ") or s.endswith(" "):
        return None
    return s
