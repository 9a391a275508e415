"""Output PII scan: checksums (property-tested), digit-script invariance, the release policy."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vouched.guard.pii import (
    fr_nir_valid, iban_valid, ir_national_code_valid, is_public_source, luhn_valid, pii_verdict, private_hits,
    scan_pii, spanish_id_valid, to_ascii_digits, us_ssn_valid,
)

digits = st.text(alphabet="0123456789", min_size=1, max_size=1)


def luhn_check_digit(body: str) -> str:
    for d in "0123456789":
        if luhn_valid(body + d):
            return d
    raise AssertionError("no Luhn digit")


@given(st.text(alphabet="0123456789", min_size=12, max_size=18), st.data())
@settings(max_examples=300, deadline=None)
def test_luhn_exactly_one_check_digit_and_single_digit_errors_caught(body, data):
    valid = [d for d in "0123456789" if luhn_valid(body + d)]
    assert len(valid) == 1
    number = body + valid[0]
    i = data.draw(st.integers(0, len(number) - 1))
    other = data.draw(st.sampled_from([d for d in "0123456789" if d != number[i]]))
    assert not luhn_valid(number[:i] + other + number[i + 1:])


def test_luhn_known_numbers():
    assert luhn_valid("4111 1111 1111 1111") and luhn_valid("5500-0000-0000-0004")
    assert luhn_valid("۴۱۱۱۱۱۱۱۱۱۱۱۱۱۱۱") and not luhn_valid("4111 1111 1111 1112")


def make_iban(country: str, bban: str) -> str:
    rearranged = bban + country + "00"
    n = int("".join(str(int(c, 36)) for c in rearranged))
    return f"{country}{98 - n % 97:02d}{bban}"


@given(st.sampled_from(["DE", "ES", "FR", "IR", "GB", "PT", "SA", "NL"]),
       st.text(alphabet="0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=11, max_size=30), st.data())
@settings(max_examples=300, deadline=None)
def test_iban_mod97_accepts_its_check_digits_and_catches_single_changes(country, bban, data):
    iban = make_iban(country, bban)
    assert iban_valid(iban)
    grouped = " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))
    assert iban_valid(grouped)
    i = data.draw(st.integers(2, len(iban) - 1))
    alphabet = "0123456789" if i < 4 else "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    other = data.draw(st.sampled_from([c for c in alphabet if c != iban[i]]))
    changed = iban[:i] + other + iban[i + 1:]
    # mod 97 catches every single-character change except letter swaps worth a multiple of 97
    # apart; a digit for a digit (value < 97 apart) is always caught
    if iban[i].isdigit() and other.isdigit():
        assert not iban_valid(changed)


def test_iban_known():
    assert iban_valid("DE89 3704 0044 0532 0130 00") and iban_valid("GB82WEST12345698765432")
    assert not iban_valid("DE89 3704 0044 0532 0130 01")


@given(st.integers(0, 99_999_999), st.sampled_from(["", "X", "Y", "Z"]))
def test_spanish_id_letter(n, prefix):
    body = f"{n:08d}" if not prefix else prefix + f"{n % 10_000_000:07d}"
    value = int(body if not prefix else str("XYZ".index(prefix)) + body[1:])
    letter = "TRWAGMYFPDXBNJZSQVHLCKE"[value % 23]
    assert spanish_id_valid(body + letter)
    assert spanish_id_valid(f"{body}-{letter.lower()}")
    assert not spanish_id_valid(body + next(c for c in "ABCDEFGHJ" if c != letter))


@given(st.sampled_from("12"), st.integers(0, 99), st.integers(1, 12), st.sampled_from(["75", "13", "2A", "2B", "99"]),
       st.integers(1, 999), st.integers(1, 999))
def test_fr_nir_key(sex, yy, mm, dept, commune, order):
    head = f"{sex}{yy:02d}{mm:02d}"
    tail = f"{commune:03d}{order:03d}"
    n = int(head + {"2A": "19", "2B": "18"}.get(dept, dept) + tail)
    key = 97 - n % 97
    nir = f"{head}{dept}{tail}{key:02d}"
    assert fr_nir_valid(nir)
    assert fr_nir_valid(f"{nir[0]} {nir[1:3]} {nir[3:5]} {nir[5:7]} {nir[7:10]} {nir[10:13]} {nir[13:]}")
    assert not fr_nir_valid(f"{head}{dept}{tail}{(key % 97) + 1:02d}")


@given(st.text(alphabet="0123456789", min_size=9, max_size=9))
def test_ir_national_code_check_digit(body):
    assume(len(set(body)) > 1)
    r = sum(int(body[i]) * (10 - i) for i in range(9)) % 11
    check = r if r < 2 else 11 - r
    assume(check < 10)  # r == 1 → 1; r >= 2 → 11 - r <= 9: always a digit
    code = body + str(check)
    assert ir_national_code_valid(code)
    assert ir_national_code_valid(to_persian(code))
    assert not ir_national_code_valid(body + str((check + 1) % 10))


def test_ir_national_code_known_and_repeated_digits():
    assert ir_national_code_valid("0013542419")
    assert not ir_national_code_valid("1111111111")


def test_us_ssn_format():
    assert us_ssn_valid("123-45-6789")
    for bad in ("000-45-6789", "666-45-6789", "912-45-6789", "123-00-6789", "123-45-0000", "123456789"):
        assert not us_ssn_valid(bad)


PERSIAN = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
DEVANAGARI = str.maketrans("0123456789", "०१२३४५६७८९")


def to_persian(s: str) -> str:
    return s.translate(PERSIAN)


SAMPLES = [
    ("Write to ana@example.org or call +34 612 34 56 78.", "es"),
    ("شماره تماس ۰۹۱۲ ۳۴۵ ۶۷۸۹ و کد ملی ۰۰۱۳۵۴۲۴۱۹ است.", "fa"),
    ("IBAN DE89 3704 0044 0532 0130 00, card 4111 1111 1111 1111.", "en"),
    ("DNI 12345678Z, NIE X1234567L, SSN 123-45-6789.", "es"),
    ("Numéro de sécu 2 75 13 2A 012 345 67, tél. 01 42 68 53 00.", "fr"),
]


@pytest.mark.parametrize("text,lang", SAMPLES)
def test_samples_are_found(text, lang):
    kinds = [h.kind for h in scan_pii(text, lang)]
    assert kinds, text
    for h in scan_pii(text, lang):
        assert text[h.start:h.end] == h.raw


def test_sample_kinds():
    assert [h.kind for h in scan_pii(*SAMPLES[0])] == ["email", "phone"]
    assert [(h.kind, h.detail) for h in scan_pii(*SAMPLES[1])] == [("phone", ""), ("national_id", "ir_national_code")]
    assert [h.kind for h in scan_pii(*SAMPLES[2])] == ["iban", "card"]
    assert [h.detail for h in scan_pii(*SAMPLES[3])] == ["es_dni", "es_dni", "us_ssn"]
    assert scan_pii("In 2023 she cut the error by 12,000 units and 3.5% [1].", "en") == []


@given(st.sampled_from(SAMPLES), st.sampled_from([PERSIAN, ARABIC, DEVANAGARI]))
@settings(max_examples=50, deadline=None)
def test_digit_script_invariance(sample, table):
    text, lang = sample
    ascii_hits = [(h.kind, h.canonical, h.start, h.end) for h in scan_pii(to_ascii_digits(text), lang)]
    other = text.translate(table)
    assert [(h.kind, h.canonical, h.start, h.end) for h in scan_pii(other, lang)] == ascii_hits
    assert all(other[h.start:h.end] == h.raw for h in scan_pii(other, lang))


@given(st.text(alphabet="0123456789 -+()abc", max_size=40), st.sampled_from([PERSIAN, ARABIC, DEVANAGARI]))
@settings(max_examples=200, deadline=None)
def test_digit_script_invariance_on_arbitrary_digit_text(text, table):
    a = [(h.kind, h.canonical, h.start, h.end) for h in scan_pii(text, "fa")]
    b = [(h.kind, h.canonical, h.start, h.end) for h in scan_pii(text.translate(table), "fa")]
    assert a == b


# --- policy ---------------------------------------------------------------------------------

SRC = {1: "Press office: +34 612 34 56 78, prensa@rio.example.", 2: "Rosa led the Tagus model."}


def test_released_only_from_a_cited_public_source():
    sentence = "The press office answers on +34 612 34 56 78 [1]."
    assert pii_verdict(sentence, {1: SRC[1]}, {1}, lang="es") is None
    v = pii_verdict(sentence, {1: SRC[1]}, set(), lang="es")
    assert (v.kind, v.reason, v.rule) == ("phone", "source_not_public", "pii")
    v = pii_verdict(sentence, {2: SRC[2]}, {2}, lang="es")
    assert v.reason == "not_in_cited_source"


def test_national_format_in_sentence_matches_international_in_source():
    assert pii_verdict("Call 612 34 56 78 [1].", {1: SRC[1]}, {1}, lang="es") is None
    assert pii_verdict("Llame al ۶۱۲ ۳۴ ۵۶ ۷۸ [1].", {1: SRC[1]}, {1}, lang="es") is None


def test_email_case_insensitive_and_needs_public():
    assert pii_verdict("Write to PRENSA@rio.example [1].", {1: SRC[1]}, {1}) is None
    assert pii_verdict("Write to other@rio.example [1].", {1: SRC[1]}, {1}).reason == "not_in_cited_source"


def test_private_values_are_never_released_even_from_a_public_source():
    private = ["+98 912 345 6789", "Calle Mayor 5"]
    src = {1: "Home: calle mayor 5, phone 09123456789."}
    assert pii_verdict("She lives at Calle  Mayor 5 [1].", src, {1}, private).reason == "private_value"
    v = pii_verdict("شماره او ۰۹۱۲۳۴۵۶۷۸۹ است [1].", src, {1}, private, lang="fa")
    assert (v.kind, v.value, v.reason) == ("private", "+98 912 345 6789", "private_value")
    assert private_hits("Calle Mayor 50 is elsewhere.", private) == []
    assert pii_verdict("Rosa led the Tagus model [2].", SRC, {2}, private) is None


def test_is_public_source_globs():
    assert is_public_source("contact", "contact.md", ["contact"])
    assert is_public_source("press/2024", "press/2024.md", ["press/*"])
    assert is_public_source("x", "site/contact.html", ["site/contact.*"])
    assert not is_public_source("about", "about.md", ["contact", "press/*"])


def test_a_phone_shaped_title_quoted_from_a_source_is_not_private_data():
    from vouched.guard.pii import pii_verdict

    src = {1: "Her play “Call +44 20 7946 0958” ran in London for a year."}
    assert pii_verdict("Her play “Call +44 20 7946 0958” ran for a year.", src, set(), (), "en") is None
    # the same number unquoted, or quoted but not from the source, is still held
    assert pii_verdict("Her play ran; call +44 20 7946 0958.", src, set(), (), "en").reason == "source_not_public"
    assert pii_verdict("Her play “Ring +44 20 7946 0958” ran.", src, set(), (), "en") is not None
    assert pii_verdict("Her play “Call +44 20 7946 0958” ran.", {1: "nothing"}, set(), (), "en") is not None
