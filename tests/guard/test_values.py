"""vouched.guard.values: extraction, canonical forms, whole-value matching in sources."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.guard.values import (
    Value,
    canonical_number,
    extract_values,
    source_values,
    value_in_text,
    value_spans,
)

PERSIAN = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def only(text: str) -> Value:
    values = extract_values(text)
    assert len(values) == 1, values
    return values[0]


# (value as the sentence writes it, source text, found?)
MATCH_CASES = [
    # per cent: the sign is not compared
    ("18%", "revenue grew 18 % last year", True),
    ("18%", "revenue grew 18% last year", True),
    ("18 %", "revenue grew 18%", True),
    # thousands: comma, none, Spanish dot, Arabic separator with Persian digits
    ("12,000", "12,000 readers", True),
    ("12,000", "12000 readers", True),
    ("12,000", "12.000 lectores", True),
    ("12,000", "۱۲٬۰۰۰ خواننده", True),
    ("12000", "12,000 readers", True),
    ("۱۲٬۰۰۰", "12,000 readers", True),
    ("12\u202f000", "12,000 readers", True),
    ("12,000", "120,000 readers", False),
    ("12,000", "12,001 readers", False),
    # decimals: comma or point, Arabic decimal separator
    ("0,52", "a margin of 0.52", True),
    ("0.52", "un margen de 0,52", True),
    ("٠٫٥٢", "a margin of 0.52", True),
    ("0.520", "a margin of 0.52", True),
    ("0.52", "a margin of 0.5", False),
    ("3.5", "3.5 million", True),
    ("3.5", "35 million", False),
    # whole numbers only
    ("2023", "founded in 2023.", True),
    ("2023", "ticket 20234", False),
    ("2023", "ticket 12023", False),
    ("3", "13 people", False),
    ("3", "team of 3", True),
    ("3", "v3 release", True),
    ("13", "3 people", False),
    ("05", "on 2023-05-01", True),
    # years and ordinals are numbers
    ("2nd", "the 2 offices", True),
    ("21st", "the 21 st", True),
    ("1999", "since 1999", True),
    ("۱۴۰۲", "در سال ۱۴۰۲", True),
    ("۱۴۰۲", "in 1402", True),
    ("١٤٠٢", "در سال ۱۴۰۲", True),
    ("2021", "该项目于2021年启动", True),
    # a number anywhere in the source counts, inside URLs and addresses too
    ("2023", "see https://x.org/report-2023", True),
    ("42", "mail team42@x.org", True),
    # URLs: case, trailing slash and punctuation, scheme and www do not matter
    ("https://Vouched.dev/Docs/", "docs: https://vouched.dev/docs.", True),
    ("https://vouched.dev/docs", "docs (https://vouched.dev/docs/)", True),
    ("www.vouched.dev", "at https://vouched.dev", True),
    ("https://vouched.dev/docs", "at https://vouched.dev/doc", False),
    ("https://vouched.dev/doc", "at https://vouched.dev/docs", False),
    ("https://vouched.dev", "at https://vouched.dev/docs", False),
    ("https://en.wikipedia.org/wiki/Foo_(bar)", "see https://en.wikipedia.org/wiki/Foo_(bar).", True),
    # e-mails: case-insensitive, whole
    ("Ana@Example.org", "write to ana@example.org.", True),
    ("ana@example.org", "write to hana@example.org", False),
    ("ana@example.org", "write to ana@example.org.uk", False),
]


@pytest.mark.parametrize(("written", "source", "found"), MATCH_CASES)
def test_value_in_source(written: str, source: str, found: bool) -> None:
    value = only(written)
    assert value_in_text(value, source) is found
    assert (value.canonical in source_values(source)) is found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Founded in 2023 with 12,000 users.", [("number", "2023", "2023"), ("number", "12,000", "12000")]),
        ("ساخته شد در ۱۴۰۲ با ۳٫۵ میلیون", [("number", "۱۴۰۲", "1402"), ("number", "۳٫۵", "3.5")]),
        ("Grew 18% (0,52 margin)", [("number", "18", "18"), ("number", "0,52", "0.52")]),
        ("It is the 3rd office.", [("number", "3", "3")]),
        ("In 2019–2023.", [("number", "2019", "2019"), ("number", "2023", "2023")]),
        (
            "See https://x.org/r/2023/ or mail a.b+c@X.org, then www.y.com.",
            [
                ("url", "https://x.org/r/2023/", "x.org/r/2023"),
                ("email", "a.b+c@X.org", "a.b+c@x.org"),
                ("url", "www.y.com", "y.com"),
            ],
        ),
        ("Call 12 people at x.org", [("number", "12", "12")]),  # bare domains are not URLs
        ("No values here.", []),
    ],
)
def test_extract_values(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert [(v.kind, v.raw, v.canonical) for v in extract_values(text)] == expected
    assert value_spans(text) == expected


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("1,234.56", "1234.56"),
        ("1.234,56", "1234.56"),
        ("1.234.567", "1234567"),
        ("1,234,567", "1234567"),
        ("192.168.0.1", "192.168.0.1"),
        ("2.1.3", "2.1.3"),
        ("0.520", "0.52"),
        ("12.0", "12"),
        ("007", "7"),
        ("0", "0"),
        ("1234,5", "1234.5"),
        ("2.500", "2500"),  # read as thousands, on both sides alike
    ],
)
def test_canonical_number(raw: str, canonical: str) -> None:
    assert canonical_number(raw) == canonical


def test_value_is_frozen() -> None:
    value = only("2023")
    with pytest.raises(AttributeError):
        value.raw = "2024"  # type: ignore[misc]


def test_source_values_kinds() -> None:
    values = source_values("Since 2019: https://x.org/a/ and ana@x.org, 12.000 users, 3.5%.")
    assert {"2019", "x.org/a", "ana@x.org", "12000", "3.5"} <= values
    assert "20" not in values and "19" not in values


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1000, max_value=999_999_999))
def test_thousands_spellings_agree(n: int) -> None:
    comma = f"{n:,}"
    spellings = [
        str(n),
        comma,
        comma.replace(",", "."),
        comma.replace(",", "\u066c").translate(PERSIAN),
        comma.replace(",", "\u066c").translate(ARABIC_INDIC),
        comma.replace(",", "\u202f"),
    ]
    assert {canonical_number(s) for s in spellings} == {str(n)}
    for s in spellings:
        assert value_in_text(only(f"about {s} readers"), f"it has {n:,} readers")


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_whole_number_match(a: int, b: int) -> None:
    """A number is found only as itself, never as part of a longer number."""
    source = f"ref {b} and v{b}x"
    assert value_in_text(only(str(a)), source) is (a == b)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=999), st.integers(min_value=1, max_value=99))
def test_decimal_comma_and_point_agree(i: int, frac: int) -> None:
    point, comma = f"{i}.{frac:02d}", f"{i},{frac:02d}"
    assert canonical_number(point) == canonical_number(comma)
    assert value_in_text(only(comma), f"a value of {point}.")
