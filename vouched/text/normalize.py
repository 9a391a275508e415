"""Normalisation for comparison (never for display).

Every comparison in vouched (refusal patterns, keyword coverage, the sentence gate's
number/URL checks, stop words) runs on ``normalize(text)``, so two spellings a reader
would call "the same" must come out identical, and the function must be idempotent.

Steps, in order:

1. Unicode NFKC, then ``casefold`` (full-width Latin → ASCII, ligatures split, Arabic
   presentation forms → base letters, ß → ss, ...).
2. Arabic letter forms → Persian, chosen so a Persian and an Arabic spelling of the same
   word compare equal:

   * ي (U+064A) and ى (U+0649) → ی (U+06CC); ك (U+0643) → ک (U+06A9);
   * ة (ta marbuta) → ه, and ۀ / هٔ (heh with hamza, the Persian ezafe form) → ه:
     ``مدرسة`` ≡ ``مدرسه``, ``خانهٔ`` ≡ ``خانۀ`` ≡ ``خانه``;
   * hamza carriers are folded onto their seat letter: أ إ آ ٱ → ا, ؤ → و, ئ → ی
     (``مسئول`` ≡ ``مسیول``, ``آب`` ≡ ``اب``; the lone hamza ء is kept). Pattern authors
     must therefore write ``ا`` where they mean ``آ`` — or pass their pattern through
     normalize() too;
   * the Urdu/Kurdish hehs ہ ۂ ھ → ه.

3. Digits: Persian ۰-۹, Arabic-Indic ٠-٩ and Devanagari ०-९ → ASCII 0-9; the Arabic
   decimal and thousands separators ٫ ٬ → ``.`` ``,`` and the Arabic percent sign ٪ →
   ``%`` (so ``۳٫۵٪`` ≡ ``3.5%``).
4. Removed: Arabic diacritics (harakat U+064B-U+065F incl. the hamza marks, superscript
   alef U+0670, Quranic marks U+0610-U+061A and U+06D6-U+06ED), tatweel U+0640, zero-width
   and bidi controls (U+200B, U+200D, U+200E, U+200F, U+202A-U+202E, U+2060, U+2066-U+2069,
   U+FEFF, U+061C), and the soft hyphen U+00AD.
5. ZWNJ (U+200C, the Persian half-space) → one space, so ``می‌خواهم`` ≡ ``می خواهم``.
6. Whitespace runs → one space; stripped.

Idempotence: deleting a character can leave a string that NFKC would compose further
(e.g. ``e`` + ZWJ + U+0301), so the steps are repeated until the result is NFKC-stable
and casefold-stable (in practice one pass; a second only for such contrived input).
"""

from __future__ import annotations

import codecs
import re
import unicodedata

def _build_map() -> dict[int, str | None]:
    m: dict[int, str | None] = {}
    # Arabic letter forms -> Persian / seat letters.
    for src, dst in {
        "\u064a": "\u06cc",  # ي -> ی
        "\u0649": "\u06cc",  # ى -> ی
        "\u0626": "\u06cc",  # ئ -> ی
        "\u0643": "\u06a9",  # ك -> ک
        "\u0629": "\u0647",  # ة -> ه
        "\u06c0": "\u0647",  # ۀ -> ه
        "\u06c1": "\u0647",  # ہ -> ه
        "\u06c2": "\u0647",  # ۂ -> ه
        "\u06be": "\u0647",  # ھ -> ه
        "\u0623": "\u0627",  # أ -> ا
        "\u0625": "\u0627",  # إ -> ا
        "\u0622": "\u0627",  # آ -> ا
        "\u0671": "\u0627",  # ٱ -> ا
        "\u0624": "\u0648",  # ؤ -> و
        "\u066b": ".",  # Arabic decimal separator
        "\u066c": ",",  # Arabic thousands separator
        "\u066a": "%",  # Arabic percent sign
    }.items():
        m[ord(src)] = dst
    for i in range(10):
        m[0x06F0 + i] = str(i)  # Persian digits
        m[0x0660 + i] = str(i)  # Arabic-Indic digits
        m[0x0966 + i] = str(i)  # Devanagari digits
    deleted = [0x0640, 0x0670, 0x061C, 0x00AD, 0x200B, 0x200D, 0x200E, 0x200F, 0x2060, 0xFEFF]
    deleted += range(0x064B, 0x0660)  # harakat, shadda, sukun, hamza marks, ...
    deleted += range(0x0610, 0x061B)  # Quranic honorifics / marks
    deleted += range(0x06D6, 0x06DD)  # Quranic annotation marks
    deleted += range(0x06DF, 0x06E5)
    deleted += (0x06E7, 0x06E8)
    deleted += range(0x06EA, 0x06EE)
    deleted += range(0x202A, 0x202F)  # LRE RLE PDF LRO RLO
    deleted += range(0x2066, 0x206A)  # LRI RLI FSI PDI
    for cp in deleted:
        m[cp] = None
    m[0x200C] = " "  # ZWNJ -> space
    return m


_MAP: dict[int, str | None] = _build_map()
_MAP_RE = re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(_MAP)) + "]")
_REPLACE = {chr(cp): dst or "" for cp, dst in _MAP.items()}
# No replacement holds a mapped character, so replacing one character at a time, in any
# order, gives what str.translate(_MAP) gives.
assert not any(_MAP_RE.search(dst) for dst in _REPLACE.values())
_table: list[int | str | None] = []


def _apply_map(s: str) -> str:
    """``s.translate(_MAP)``, faster.

    translate with a dict costs ~200 ns per character on non-ASCII text. On a sentence
    translate runs with a list indexed by code point instead, about twice as fast (a
    character past the list — outside the BMP, never mapped — raises IndexError, which
    translate reads as "unchanged"). On longer text, where mapped characters are many
    but of few kinds (half-spaces, digits), a regex (C speed) finds them and one
    ``str.replace`` per distinct character does the rest.
    """
    if len(s) < 120:
        if not _table:
            table: list[int | str | None] = list(range(0x10000))
            for cp, dst in _MAP.items():
                table[cp] = dst
            _table[:] = table
        return s.translate(_table)
    for ch in set(_MAP_RE.findall(s)):
        s = s.replace(ch, _REPLACE[ch])
    return s


def _tidy_spaces(s: str) -> str:
    """``" ".join(s.split())`` — which builds a string per word — skipped when it would
    change nothing: every whitespace character but " " is unprintable (a test checks every
    code point), so printable text with no double, leading or trailing space is tidy."""
    if s.isprintable() and "  " not in s and not s.startswith(" ") and not s.endswith(" "):
        return s
    return " ".join(s.split())


_is_normalized = unicodedata.is_normalized
_nfkc = unicodedata.normalize


# --- NFKC of text that is not NFKC-normalised ----------------------------------------------
#
# unicodedata.normalize returns its argument at the cost of a quick check when that is
# normalised, but otherwise runs the full algorithm: ~4 µs on a Chinese sentence whose only
# unnormalised characters are a full-width comma or two. Replacing a character c by
# NFKC(c) does not change the string's NFKD (NFKD(NFKC(c)) == NFKD(c), and NFKD sorts runs
# of combining marks stably by class, so a run sorted beforehand in part sorts the same),
# hence not its NFKC either: NFKC(text) == NFKC(t) for t = text with such replacements.
# When t is normalised, NFKC(t) is t — and is_normalized says so exactly. So: replace the
# common compatibility characters found (one str.replace per distinct character), check
# t, and run the full algorithm only when t is not normalised.
_COMPAT_BLOCKS = (
    (0x00A0, 0x00FF),  # NBSP, ª, ², ½, ...
    (0x2000, 0x206F),  # typographic spaces, … ‥ ″
    (0x2070, 0x218F),  # super/subscripts, letterlike symbols (™ ℃), Roman numerals
    (0x2460, 0x24FF),  # ① ⑴ ⒈
    (0x3000, 0x3000),  # ideographic space
    (0x3200, 0x33FF),  # enclosed CJK, ㎏ ㍻
    (0xFB00, 0xFDFF),  # ligatures, Arabic presentation forms A
    (0xFE30, 0xFEFF),  # CJK compatibility forms, small forms, Arabic presentation forms B
    (0xFF00, 0xFFEF),  # full-width and half-width forms
)
_compat: list[tuple[dict[str, str], re.Pattern[str]]] = []  # built on first use


def _compat_table() -> tuple[dict[str, str], re.Pattern[str]]:
    """(character → NFKC of it, a class of those characters) over _COMPAT_BLOCKS."""
    if not _compat:
        table = {
            chr(cp): _nfkc("NFKC", chr(cp))
            for lo, hi in _COMPAT_BLOCKS
            for cp in range(lo, hi + 1)
            if _nfkc("NFKC", chr(cp)) != chr(cp)
        }
        runs: list[list[int]] = []
        for cp in sorted(map(ord, table)):
            if runs and runs[-1][1] == cp - 1:
                runs[-1][1] = cp
            else:
                runs.append([cp, cp])
        pattern = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in runs) + "]")
        _compat[:] = [(table, pattern)]
    return _compat[0]


def _nfkc_unnormalized(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)`` for text that is not NFKC-normalised."""
    table, pattern = _compat[0] if _compat else _compat_table()
    found = pattern.findall(text)
    if found:
        t = text
        for ch in set(found):
            t = t.replace(ch, table[ch])
        if _is_normalized("NFKC", t):
            return t
    return _nfkc("NFKC", text)


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


def _pass(text: str) -> str:
    s = _nfkc("NFKC", _nfkc("NFKC", text).casefold())
    s = _apply_map(s)
    return _tidy_spaces(s)


def normalize(text: str) -> str:
    """Return ``text`` normalised for comparison (see the module docstring)."""
    if text.isascii():
        # NFKC and the mapping table are no-ops on ASCII; casefold == lower there.
        s = text.lower()
        stable = True
    else:
        if text < "\u0100" or "\u0621" <= text < "\u0700":  # (else no call, to save its cost)
            folded_bytes = _fold_to_bytes(text)
            if folded_bytes is not None:
                s = _from_bytes(*folded_bytes)
                if s is not None:
                    return s
        # The first _pass, inlined (this runs once per sentence in the gate). The quick
        # check is the one NFKC starts with (when the answer is "maybe", is_normalized
        # runs the full algorithm).
        nfkc = text if _is_normalized("NFKC", text) else _nfkc_unnormalized(text)
        folded = nfkc.casefold()
        s = _nfkc("NFKC", folded)
        # NFKC hands back its very argument only when that is normalised, and casefold
        # is idempotent (a test checks every code point): then, unless a step below
        # changes s, the check after the pass would find it stable.
        stable = s is folded
        if _MAP_RE.search(s) is not None:
            s = _apply_map(s)
            stable = False
    if not (s.isprintable() and "  " not in s and not s.startswith(" ") and not s.endswith(" ")):
        s = " ".join(s.split())  # _tidy_spaces
        stable = stable and text.isascii()
    if stable:
        return s
    for _ in range(8):
        if _is_normalized("NFKC", s) and s.casefold() == s:
            break
        s = _pass(s)
    return s
