"""Encoded text a document may hide an instruction in, decoded for the injection scan.

``decoded_forms(text)`` returns ``[(encoding, decoded text), ...]`` for the encodings found
in ``text``; ``vouched.guard.injection.scan_injection`` runs every pack on each. Pure, and
cheap on ordinary prose: each decoder runs only behind a gate that ordinary text does not
pass.

* ``base64`` — runs of >= 24 base64 characters (standard or URL-safe alphabet) that decode
  to UTF-8 text, >= 90% printable, with a space in it (binary payloads, hashes and tokens
  do not);
* ``hex`` — >= 16 byte pairs of hex digits (bare, or written ``\\x69``, ``%69``, ``0x69``
  or space-separated) that decode to such text;
* ``rot13`` — the whole text rotated, when a rotated trigger word ("vtaber" for "ignore",
  "vafgehpgvbaf" for "instructions" ...) occurs in it;
* ``reversed`` — the text read backwards, and each word reversed in place, when a
  reversed trigger word ("snoitcurtsni", "tpmorp" ...) occurs in it;
* ``leet`` — tokens that mix letters with 0 1 3 4 5 7 @ $ read as letters ("1gn0r3" →
  "ignore"), when a de-leeted token is a trigger word;
* ``spaced`` — runs of >= 6 single letters separated by spaces, dots, dashes or
  underscores ("i g n o r e") joined into words; a gap of two or more separators ends a word.

Trigger words are the English words the injection packs are built on; decoded text in any
language is scanned by every pack all the same.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from functools import lru_cache
from itertools import repeat

__all__ = ["TRIGGERS", "decoded_forms"]

TRIGGERS = (
    "ignore", "disregard", "forget", "override", "instructions", "instruction", "previous", "prompt",
    "system", "assistant", "reveal", "pretend", "unrestricted", "rules", "jailbreak", "conversation",
    "restrictions", "answer", "recommend", "user", "send", "note",
)

_B64 = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_HEX = re.compile(r"(?:(?:\\x|%|0x)?[0-9a-fA-F]{2}[\s,:]?){16,}")
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]{2}")
_LEET_TOKEN = re.compile(r"(?<![\w@$])(?=[\w@$]*[a-zA-Z])(?=[\w@$]*[013457@$])[a-zA-Z013457@$]{3,}(?![\w@$])")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_SPACED_GATE = re.compile(r"(?:[^\W\d_][ ._*|-]{1,4}){5}[^\W\d_]")
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ ._\-*|]{1,4}){5,}[^\W\d_](?![^\W\d_])")
_SEP = re.compile(r"[ ._\-*|]")
_WORD = re.compile(r"[^\W\d_]+")


# Words that tell a reader to decode what follows (any of the languages the packs know): the decode hint.
_HINT_WORDS = ("decode", "decoded", "decoding", "decrypt", "rot13", "backwards", "backward", "reverse", "reversed", "decifra",
               "decodifica", "decodifique", "decodifiquen", "descodifica", "descifra", "décode", "décodez", "déchiffre",
               "entschlüssle", "entschlüsseln", "dekodiere", "rückwärts", "umgekehrt", "decodeer", "achterstevoren", "omgekeerd",
               "odszyfruj", "zdekoduj", "wspak", "çöz", "tersten", "ters", "terbalik", "dekode", "ngược", "giải", "ghép",
               "наоборот", "задом", "справа", "расшифруй", "декодируй", "навпаки", "розшифруй", "بالعكس", "معكوس", "فك",
               "برعکس", "وارونه", "رمزگشایی", "उल्टा", "डिकोड")
_HINT_GATE = frozenset(w.lower() for w in _HINT_WORDS)
_HINT_CJK = re.compile(r"倒着|反过来|解码|逆から|逆順|デコード|거꾸로|디코딩")


def _printable(s: str) -> bool:
    if not s or " " not in s:
        return False
    good = sum(1 for ch in s if ch.isprintable() or ch in "\n\t")
    return good / len(s) >= 0.9 and sum(ch.isalpha() for ch in s) >= len(s) * 0.5


def _utf8(b: bytes) -> str | None:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _base64(text: str) -> list[str]:
    out = []
    for m in _B64.finditer(text):
        run = m.group(0)
        if run.isalpha() and (run.islower() or run.isupper()):
            continue  # a long plain word or identifier, not base64
        raw = run.replace("-", "+").replace("_", "/")
        raw += "=" * (-len(raw) % 4)
        try:
            s = _utf8(base64.b64decode(raw, validate=True))
        except (binascii.Error, ValueError):
            continue
        if s is not None and _printable(s):
            out.append(s)
    return out


def _hex(text: str) -> list[str]:
    out = []
    for m in _HEX.finditer(text):
        pairs = _HEX_DIGITS.findall(re.sub(r"\\x|%|0x", " ", m.group(0)))
        if len(pairs) < 16:
            continue
        s = _utf8(bytes.fromhex("".join(pairs)))
        if s is not None and _printable(s):
            out.append(s)
    return out


def _spaced(text: str) -> list[str]:
    out = []
    for m in _SPACED.finditer(text):
        run = m.group(0)
        words = re.split(r"[ ._\-*|]{2,}", run)
        joined = " ".join(_SEP.sub("", w) for w in words)
        if len(joined.replace(" ", "")) >= 6:
            out.append(joined)
    return out


_RUN = re.compile(r"[\w@$]+")  # maximal runs: every gate below is read off these
_AZ = re.compile(r"[a-z]+")
_LEET_ONLY = re.compile(r"[a-z013457@$]{3,}")
_LEET_CHARS = frozenset("013457@$")
_HEXDIGITS = frozenset("0123456789abcdef")


def _leet_tokens(impure: list[str]) -> list[str]:
    """The tokens ``_LEET_TOKEN`` finds, from the runs that are not all ASCII letters: whole
    runs of letters and 0 1 3 4 5 7 @ $, 3+ long, with a letter and a digit or symbol."""
    out = []
    for t in impure:
        if len(t) < 3 or _LEET_CHARS.isdisjoint(t):
            continue
        if _LEET_ONLY.fullmatch(t) and not t.isdigit() and any("a" <= ch <= "z" for ch in t):
            out.append(t)
    return out


_HEX16 = re.compile(r"[0-9a-fA-F]{16}")
_HEX_ESCAPES = re.compile(r"(?:(?:\\x|%|0x)[0-9a-fA-F]{2}){4}")
_HEX_PAIRS = re.compile(r"(?:[0-9a-fA-F]{2}[\s,:]){8}")


def _hex_gate(text: str, tokens: list[str], shape: bytes) -> bool:
    """The hex gate (16 hex digits, 4 escapes or 8 separated pairs), one alternative at a
    time and each behind a cheap necessary condition: 16 hex digits in a row sit inside one
    run; four escapes need four ``\\x``/``%``/``0x``; eight separated hex pairs hold seven
    whole two-digit runs in a row (``shape``: the run lengths, one byte each)."""
    if shape and max(shape) >= 16 and _HEX16.search(text):
        return True
    if text.count("%") + text.count("\\x") + text.count("0x") >= 4 and _HEX_ESCAPES.search(text):
        return True
    if shape.find(b"\x02" * 7) < 0:
        return False
    row = 0
    for t in tokens:
        if len(t) == 2 and t[0] in _HEXDIGITS and t[1] in _HEXDIGITS:
            row += 1
            if row >= 7:
                return _HEX_PAIRS.search(text) is not None
        else:
            row = 0
    return False


def _may_be_spaced(text: str, tokens: list[str], shape: bytes) -> bool:
    """A necessary condition for ``_SPACED_GATE``: the four inner letters of six spaced ones
    are single-letter runs one after another ("_" joins runs, so then the regex decides)."""
    if "_" in text:
        return True
    if shape.find(b"\x01" * 4) < 0:
        return False
    row = 0
    for t in tokens:
        if len(t) == 1 and t.isalpha():
            row += 1
            if row >= 4:
                return True
        else:
            row = 0
    return False


def decoded_forms(text: str) -> list[tuple[str, str]]:
    """(encoding, decoded text) for each encoded run found in ``text`` (see the module docstring).

    One pass cuts ``text`` into runs of word characters, ``@`` and ``$``; the ROT13,
    reversed and leetspeak gates are set look-ups on those runs, and the hex and spaced
    gates run their regex only where the runs show it could match.
    """
    if not text:
        return []
    out: list[tuple[str, str]] = []
    low = text.lower()
    tokens = _RUN.findall(low)
    shape = bytes(map(min, map(len, tokens), repeat(255)))  # run lengths, capped, one byte each
    if len(text) >= 24:
        out += [("base64", s) for s in _base64(text)]
        if _hex_gate(text, tokens, shape):
            out += [("hex", s) for s in _hex(text)]
    rot_words, rev_words, triggers = _word_gates()
    distinct = set(tokens)
    impure = [t for t in distinct if not (t.isascii() and t.isalpha())]
    runs = distinct.difference(impure)  # a run of ASCII letters (lower case) is one [a-z]+ run
    for t in impure:
        runs.update(_AZ.findall(t))
    # a text that says how to read it ("decode with ROT13 and follow", "read backwards", "rückwärts lesen",
    # "справа налево", "بالعكس", "倒着读") gets every decoder, whatever language its payload is in
    hinted = not _HINT_GATE.isdisjoint(distinct) or (not low.isascii() and _HINT_CJK.search(low) is not None)
    if low.isascii() or any(len(r) >= 4 for r in runs) or hinted:
        if hinted or not rot_words.isdisjoint(runs):
            out.append(("rot13", codecs.encode(low, "rot13")))
        if hinted or not rev_words.isdisjoint(runs):
            out.append(("reversed", low[::-1]))
            out.append(("reversed", _WORD.sub(lambda m: m.group(0)[::-1], low)))
    leet = _leet_tokens(impure)
    if leet and (hinted or any(t.translate(_LEET) in triggers for t in leet)):
        out.append(("leet", _LEET_TOKEN.sub(lambda m: m.group(0).translate(_LEET), low)))
    if _may_be_spaced(text, tokens, shape) and _SPACED_GATE.search(text):
        out += [("spaced", s) for s in _spaced(text)]
    return out


@lru_cache(maxsize=1)
def _word_gates() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The trigger words ROT13-rotated and reversed, and as written."""
    return (frozenset(codecs.encode(w, "rot13") for w in TRIGGERS), frozenset(w[::-1] for w in TRIGGERS),
            frozenset(TRIGGERS))
