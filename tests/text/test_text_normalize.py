"""normalize(): comparison form per script; idempotence is a property test."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.text import analyze, content_words, normalize, words

ZWNJ = "\u200c"


@pytest.mark.parametrize(
    "raw, expected",
    [
        # Arabic letter forms -> Persian
        ("علي", "علی"),  # ي -> ی
        ("على", "علی"),  # ى -> ی
        ("كتاب", "کتاب"),  # ك -> ک
        ("مدرسة", "مدرسه"),  # ة -> ه
        ("خانۀ من", "خانه من"),  # ۀ -> ه
        ("خانهٔ من", "خانه من"),  # ه + hamza above -> ه
        ("أحمد إسلام آب ٱلله", "احمد اسلام اب الله"),  # alef with hamza/madda/wasla -> ا
        ("مسؤول", "مسوول"),  # ؤ -> و
        ("مسئول", "مسیول"),  # ئ -> ی
        # digits
        ("۱۴۰۲", "1402"),
        ("٢٠٢٣", "2023"),
        ("२०२४", "2024"),
        ("۳٫۵٪", "3.5%"),
        ("١٬٠٠٠", "1,000"),
        # diacritics and tatweel
        ("مُحَمَّدٌ", "محمد"),
        ("كِتَابٌ", "کتاب"),
        ("هٰذا", "هذا"),
        ("عـــلـــی", "علی"),
        # ZWNJ inside a word -> one space; other controls removed
        (f"می{ZWNJ}خواهم", "می خواهم"),
        (f"کتاب{ZWNJ}ها", "کتاب ها"),
        (f"a{ZWNJ}{ZWNJ} b", "a b"),
        ("ab\u200bcd\u200de\ufeff", "abcde"),
        ("\u202bسلام\u202c \u2067x\u2069 \u200ey\u200f", "سلام x y"),
        ("co\u00adoperate", "cooperate"),
        # NFKC + casefold
        ("ＡＢＣ １２３", "abc 123"),
        ("Straße", "strasse"),
        ("ﬁnance", "finance"),
        ("Ünïcödé", "ünïcödé"),
        ("ПРИВЕТ Мир", "привет мир"),
        ("ﻛﺘﺎﺏ", "کتاب"),  # Arabic presentation forms
        # whitespace
        ("  a \t\n b\u00a0\u3000c  ", "a b c"),
        ("", ""),
        ("   ", ""),
    ],
)
def test_normalize_cases(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


def test_arabic_and_persian_spellings_compare_equal() -> None:
    assert normalize("الشركة في كيف") == normalize("الشرکه فی کیف")
    assert normalize("يُدَرِّسُ") == normalize("یدرس")
    assert normalize("۱۲۳") == normalize("١٢٣") == normalize("123")


def test_zwnj_and_space_give_identical_analysis() -> None:
    joined = f"او در دانشگاه تهران کار می{ZWNJ}کند و کتاب{ZWNJ}های زیادی نوشته است"
    spaced = "او در دانشگاه تهران کار می کند و کتاب های زیادی نوشته است"
    assert normalize(joined) == normalize(spaced)
    assert words(joined) == words(spaced)
    assert content_words(joined, "fa") == content_words(spaced, "fa")
    assert analyze(joined, "fa") == analyze(spaced, "fa")
    assert analyze(joined) == analyze(spaced)


def test_ascii_fast_path_matches_general_path() -> None:
    s = "Hello   World\tFOO"
    assert normalize(s) == normalize(s + "\u200b") == "hello world foo"


_TRICKY = (
    "aAzZ09 .,!?'\t\n"
    "يىكةۀهٔأإآٱؤئءی ک"
    "\u064b\u064c\u064e\u0650\u0651\u0652\u0654\u0655\u0670\u0640"
    "۰۹٠٩०९٫٬٪"
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202e\u2066\u2069\ufeff\u00ad\u00a0\u3000"
    "ＡａＺ１ﬁßẞİıΣσς"
    "\u0301\u0308\u0327e\u0653"
    "हिन्दीकिताब我在北京ﻛﺘﺎﺏ\ufe70\ufe72ﷲ"
)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(_TRICKY), max_size=40) | st.text(max_size=40))
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(_TRICKY), max_size=40) | st.text(max_size=30))
def test_words_stable_under_normalization(text: str) -> None:
    assert words(normalize(text)) == words(text)
    assert all(t and " " not in t for t in words(text))
