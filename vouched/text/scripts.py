"""Writing-system helpers shared by the text modules.

Kept tiny and table-driven: the character classes below are plain strings so they can
be dropped into regular expressions, and the predicates are cheap enough to call per
character.
"""

from __future__ import annotations

import re

# CJK Unified Ideographs and their extensions, plus the compatibility block (NFKC maps
# most of the latter to unified ideographs anyway). Not included: kana, hangul, CJK
# punctuation and the ideographic zero U+3007.
HAN_RANGES = (
    (0x3400, 0x4DBF),  # Extension A
    (0x4E00, 0x9FFF),  # Unified Ideographs
    (0xF900, 0xFAFF),  # Compatibility Ideographs
    (0x20000, 0x2EBEF),  # Extensions B-F (and I)
    (0x2F800, 0x2FA1F),  # Compatibility Supplement
    (0x30000, 0x3134F),  # Extension G (H)
)

HAN_CLASS = "".join(f"{chr(a)}-{chr(b)}" for a, b in HAN_RANGES)
HAN_CHAR = re.compile(f"[{HAN_CLASS}]")  # one Han character
DEVANAGARI_CLASS = "\u0900-\u097f\ua8e0-\ua8ff"
CYRILLIC_CLASS = "\u0400-\u04ff\u0500-\u052f"
ARABIC_CLASS = "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff"

# Letters only Persian uses (Arabic text does not contain them): پ چ ژ گ, Persian kaf
# U+06A9 and Persian yeh U+06CC, and the Persian digits U+06F0-U+06F9. After
# normalize() every ك/ي has become ک/ی, so this test is only meaningful on raw text.
PERSIAN_MARKERS = frozenset("پچژگکی۰۱۲۳۴۵۶۷۸۹")
# Letters that, in raw text, point to Arabic rather than Persian: Arabic yeh/kaf, ta
# marbuta and alef maqsura.
ARABIC_MARKERS = frozenset("يكةى")
_PERSIAN_STRONG = re.compile("[" + "".join(sorted(PERSIAN_MARKERS - set("کی"))) + "]")


def is_han(ch: str) -> bool:
    """True if ``ch`` (one character) is a CJK unified (or compatibility) ideograph."""
    if not ch:
        return False
    cp = ord(ch[0])
    if cp < 0x3400:
        return False
    for lo, hi in HAN_RANGES:
        if lo <= cp <= hi:
            return True
    return False


def arabic_script_lang(raw_text: str) -> str:
    """``"fa"`` or ``"ar"`` for Arabic-script text, decided from letters in the raw text.

    Any of پ چ ژ گ (or Persian digits) means Persian. Otherwise Persian ک/ی are weighed
    against Arabic ي/ك/ة/ى: a Persian keyboard produces the former, an Arabic one the
    latter. Ties go to Arabic.
    """
    # str.count / `in` run at C speed; a per-character Python loop was the gate's
    # slowest step on Arabic-script sentences.
    if _PERSIAN_STRONG.search(raw_text):
        return "fa"
    fa = raw_text.count("ک") + raw_text.count("ی")
    ar = sum(raw_text.count(ch) for ch in ARABIC_MARKERS)
    return "fa" if fa > ar else "ar"
