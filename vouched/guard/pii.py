"""Output PII scan: personal data in a sentence about to be released, and whether it may go.

Policy (DESIGN.md, "Output PII scan"): a PII value is released only if a source the sentence
cites contains it AND the deployment marks that source public (``guard.pii.public_sources``).
A value on the deployment's own ``guard.pii.private_values`` list is never released.

    scan_pii(text, lang)  → [PiiHit]   what personal data the text holds, in order
    pii_verdict(sentence, cited_sources, public_sources, private_values, lang) → PiiVerdict | None
    is_public_source(doc_id, source, patterns) → bool

What is recognised (digits of any script: Persian, Arabic-Indic, Devanagari and full-width
digits are read as ASCII first, one character for one, so spans stay those of the input):

* ``email`` — the same address pattern as the gate (``vouched.guard.values``); compared
  case-insensitively.
* ``phone`` — Google's libphonenumber (the ``phonenumbers`` package), leniency VALID: the
  number must be a valid number of its region. Numbers written with a ``+`` are found in
  any text; national ones ("0912 345 6789") only for the regions of the text's language
  (``LANG_REGIONS``), so a Persian sentence reads "0912…" as Iranian. Compared as E.164.
* ``iban`` — country code, two check digits, 11-30 letters/digits (spaces allowed in groups
  of four), accepted only if the ISO 13616 mod-97 check gives 1.
* ``card`` — 13-19 digits (spaces or hyphens between groups), first digit 2-6 (the card
  networks' ranges, Iranian Shetab cards included), accepted only if the Luhn check passes.
* ``national_id`` — Spanish DNI (8 digits + check letter, mod 23) and NIE (X/Y/Z + 7
  digits + letter); French NIR/INSEE (13 characters, Corsica 2A/2B, + 2-digit key = 97 −
  n mod 97); Iranian national code (10 digits, weighted mod-11 check digit; written
  "123-456789-0" too; ten bare digits only in Persian text, since one random number in
  eleven passes the check); US SSN (format only: ddd-dd-dddd with the SSA's impossible areas
  000, 666, 9xx, group 00 and serial 0000 excluded — there is no checksum, so the hyphens
  or spaces are required).
* ``private`` — the deployment's list: each value is compared after ``normalize`` as whole
  words, and a value with 7 or more digits also by its digits alone (so "+98 912 345 6789"
  is found as "۰۹۱۲۳۴۵۶۷۸۹"), a leading 0/00/country code aside.

Street addresses are NOT recognised, and the reason is that no reliable offline recogniser
exists for ten languages: presidio-analyzer finds locations through spaCy/transformer
models downloaded from a model hub (not reachable from a deployment that runs offline, and
a location is not an address); libpostal (``postal``) needs ~2 GB of model data fetched at
build time; ``deepparse`` downloads its weights; ``usaddress`` parses a string already known
to be a US address rather than finding one in prose; ``pyap`` (2020) covers US/CA/GB
formats only. A deployment that must keep an address private lists its parts (street,
postcode) in ``private_values``; L1 already refuses questions for a home address.

All functions are pure.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Collection, Hashable, Literal, Mapping, Sequence

from vouched.text import normalize

__all__ = [
    "LANG_REGIONS",
    "PiiHit",
    "PiiKind",
    "PiiVerdict",
    "fr_nir_valid",
    "iban_valid",
    "ir_national_code_valid",
    "is_public_source",
    "luhn_valid",
    "pii_verdict",
    "scan_pii",
    "spanish_id_valid",
    "to_ascii_digits",
    "us_ssn_valid",
]

PiiKind = Literal["email", "phone", "iban", "card", "national_id", "private"]

# Regions whose national phone formats a text in this language is read with (first: default).
LANG_REGIONS: Mapping[str, tuple[str, ...]] = {
    "en": ("US", "GB"), "fa": ("IR",), "es": ("ES", "MX"), "pt": ("PT", "BR"), "fr": ("FR",),
    "de": ("DE", "AT", "CH"), "ar": ("SA", "EG", "AE"), "ru": ("RU",), "zh": ("CN",), "hi": ("IN",),
}


@dataclass(frozen=True)
class PiiHit:
    """One piece of personal data: its kind, the span as written, its comparison form."""

    kind: PiiKind
    raw: str
    canonical: str
    start: int
    end: int
    detail: str = ""  # e.g. "es_dni", "fr_nir", "ir_national_code", "us_ssn"


@dataclass(frozen=True)
class PiiVerdict:
    """Why a sentence must be held: the value (as written) and the reason.

    reason: ``private_value`` (on the deployment's list), ``not_in_cited_source`` (no cited
    source contains it) or ``source_not_public`` (a cited source has it, none is public).
    """

    kind: PiiKind
    value: str
    reason: Literal["private_value", "not_in_cited_source", "source_not_public"]
    rule: str = "pii"


# --- digits ------------------------------------------------------------------------------------

_DIGITS: dict[int, str] = {}
for _base in (0x06F0, 0x0660, 0x0966, 0xFF10):  # Persian, Arabic-Indic, Devanagari, full-width
    for _i in range(10):
        _DIGITS[_base + _i] = str(_i)


def to_ascii_digits(text: str) -> str:
    """``text`` with Persian, Arabic-Indic, Devanagari and full-width digits as ASCII.

    One character for one, so every offset into the result is an offset into ``text``.
    """
    return text if text.isascii() else text.translate(_DIGITS)


def _digits(text: str) -> str:
    return "".join(c for c in to_ascii_digits(text) if "0" <= c <= "9")


# --- checksums ---------------------------------------------------------------------------------


def luhn_valid(number: str) -> bool:
    """The Luhn (mod 10) check of a card number; separators and digit scripts ignored."""
    digits = _digits(number)
    if len(digits) < 2:
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters → 10..35, mod 97 == 1."""
    s = re.sub(r"[\s-]", "", to_ascii_digits(iban)).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", s):
        return False
    rearranged = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def spanish_id_valid(value: str) -> bool:
    """Spanish DNI (8 digits + letter) or NIE (X/Y/Z + 7 digits + letter): letter = n mod 23."""
    s = re.sub(r"[\s.-]", "", to_ascii_digits(value)).upper()
    m = re.fullmatch(r"([XYZ]\d{7}|\d{8})([A-Z])", s)
    if m is None:
        return False
    body = m.group(1)
    if body[0] in "XYZ":
        body = str("XYZ".index(body[0])) + body[1:]
    return _DNI_LETTERS[int(body) % 23] == m.group(2)


def fr_nir_valid(value: str) -> bool:
    """French NIR (INSEE number): 13 characters then a key = 97 − (n mod 97).

    Corsica's departments 2A and 2B count as 19 and 18 for the key (as INSEE specifies).
    """
    s = re.sub(r"[\s.-]", "", to_ascii_digits(value)).upper()
    m = re.fullmatch(r"([1-478]\d{4})(2A|2B|\d{2})(\d{6})(\d{2})", s)
    if m is None:
        return False
    dept = {"2A": "19", "2B": "18"}.get(m.group(2), m.group(2))
    n = int(m.group(1) + dept + m.group(3))
    return 97 - n % 97 == int(m.group(4))


def ir_national_code_valid(value: str) -> bool:
    """Iranian national code: 10 digits, the last a weighted mod-11 check of the first nine.

    s = Σ d[i]·(10−i) for i < 9, r = s mod 11; valid if d[9] == r when r < 2, else 11 − r.
    Ten equal digits pass the arithmetic but are not issued, so they are rejected.
    """
    d = _digits(value)
    if len(d) != 10 or len(set(d)) == 1:
        return False
    r = sum(int(d[i]) * (10 - i) for i in range(9)) % 11
    return int(d[9]) == (r if r < 2 else 11 - r)


def us_ssn_valid(value: str) -> bool:
    """US SSN format: ddd-dd-dddd, area not 000/666/9xx, group not 00, serial not 0000."""
    m = re.fullmatch(r"(\d{3})[- ](\d{2})[- ](\d{4})", to_ascii_digits(value).strip())
    if m is None:
        return False
    area, group, serial = m.groups()
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


# --- scanning ----------------------------------------------------------------------------------

_MARKERS = re.compile(r"\[[\d\s,;\u060c\u2013-]*\]")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ ]?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])")
_CARD = re.compile(r"(?<![\d-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\d-])")
_DNI = re.compile(r"(?<![\w])(?:[XYZxyz][- ]?\d{7}|\d{8})[- ]?[A-Za-z](?!\w)")
_NIR = re.compile(r"(?<!\d)[1-478][ .]?\d{2}[ .]?\d{2}[ .]?(?:2[ABab]|\d{2})[ .]?\d{3}[ .]?\d{3}[ .]?\d{2}(?!\d)")
_IR_CODE = re.compile(r"(?<![\d-])\d{3}-?\d{6}-?\d(?![\d-])")
_SSN = re.compile(r"(?<![\d-])\d{3}[- ]\d{2}[- ]\d{4}(?![\d-])")


def _national_ids(text: str, lang: str | None) -> list[PiiHit]:
    out: list[PiiHit] = []
    for rx, valid, detail in (
        (_DNI, spanish_id_valid, "es_dni"),
        (_NIR, fr_nir_valid, "fr_nir"),
        (_IR_CODE, ir_national_code_valid, "ir_national_code"),
        (_SSN, us_ssn_valid, "us_ssn"),
    ):
        for m in rx.finditer(text):
            if detail == "ir_national_code" and lang != "fa" and "-" not in m.group(0):
                continue  # ten bare digits pass the check one time in eleven: Persian text only
            if valid(m.group(0)):
                canon = re.sub(r"[\s.-]", "", m.group(0)).upper()
                out.append(PiiHit("national_id", m.group(0), f"{detail}:{canon}", m.start(), m.end(), detail))
    return out


@lru_cache(maxsize=16)
def _regions(lang: str | None) -> tuple[str, ...]:
    return LANG_REGIONS.get(lang or "", ()) or ("US",)


def _phones(text: str, lang: str | None) -> list[PiiHit]:
    import phonenumbers

    out: dict[tuple[int, int], PiiHit] = {}
    for region in _regions(lang):
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            canon = phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164)
            out.setdefault((m.start, m.end), PiiHit("phone", m.raw_string, canon, m.start, m.end))
    return list(out.values())


def scan_pii(text: str, lang: str | None = None) -> list[PiiHit]:
    """Personal data in ``text`` (e-mail, phone, IBAN, card, national ID), in order.

    ``lang`` picks the regions national phone numbers are read in (``LANG_REGIONS``).
    Overlapping findings keep the first-listed kind among: e-mail, IBAN, national ID,
    card, phone (a DNI is not also reported as a phone number).
    """
    # Source markers ("[1]", "[2, 3]") and footnote numbers are blanked, length kept: a
    # bracket right after a number makes libphonenumber reject the candidate.
    ascii_text = _MARKERS.sub(lambda m: " " * len(m.group(0)), to_ascii_digits(text))
    found: list[PiiHit] = []
    if "@" in ascii_text:
        found += [PiiHit("email", text[m.start():m.end()], m.group(0).casefold(), m.start(), m.end())
                  for m in _EMAIL.finditer(ascii_text)]
    if not any(c.isdigit() for c in ascii_text):
        return found
    for m in _IBAN.finditer(ascii_text):
        if iban_valid(m.group(0)):
            found.append(PiiHit("iban", text[m.start():m.end()], re.sub(r"\s", "", m.group(0)).upper(), m.start(), m.end()))
    found += [PiiHit(h.kind, text[h.start:h.end], h.canonical, h.start, h.end, h.detail) for h in _national_ids(ascii_text, lang)]
    for m in _CARD.finditer(ascii_text):
        if 13 <= len(_digits(m.group(0))) <= 19 and luhn_valid(m.group(0)):
            found.append(PiiHit("card", text[m.start():m.end()], _digits(m.group(0)), m.start(), m.end()))
    found += [PiiHit("phone", text[h.start:h.end], h.canonical, h.start, h.end) for h in _phones(ascii_text, lang)]
    kept: list[PiiHit] = []
    for hit in found:  # in priority order: a span already claimed is not reported again
        if not any(hit.start < k.end and k.start < hit.end for k in kept):
            kept.append(hit)
    return sorted(kept, key=lambda h: h.start)


# --- private values ------------------------------------------------------------------------------

_DIGIT_RUN = re.compile(r"\+?\d[\d\s\-./()]*\d")


def _digit_key(digits: str) -> str:
    return digits.lstrip("0")


def _digits_match(a: str, b: str) -> bool:
    """Same number up to a trunk 0, a 00 prefix or a country code in front of one of them."""
    a, b = _digit_key(a), _digit_key(b)
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 7 and long_.endswith(short) and len(long_) - len(short) <= 3


def private_hits(sentence: str, private_values: Sequence[str]) -> list[str]:
    """The private values ``sentence`` contains (as listed), after normalisation."""
    if not private_values:
        return []
    norm = normalize(sentence)
    runs = [_digits(m.group(0)) for m in _DIGIT_RUN.finditer(to_ascii_digits(sentence))]
    out = []
    for value in private_values:
        nv = normalize(value)
        if not nv:
            continue
        digits = _digits(value)
        if len(digits) >= 7 and any(_digits_match(digits, run) for run in runs if len(run) >= 7):
            out.append(value)
        elif re.search(rf"(?<!\w){re.escape(nv)}(?!\w)", norm):
            out.append(value)
    return out


# --- the verdict ---------------------------------------------------------------------------------


def _in_source(hit: PiiHit, source_hits: Sequence[PiiHit]) -> bool:
    if hit.kind == "phone":
        return any(h.kind == "phone" and (h.canonical == hit.canonical or _digits_match(_digits(h.canonical), _digits(hit.canonical)))
                   for h in source_hits)
    return any(h.kind == hit.kind and h.canonical == hit.canonical for h in source_hits)


def pii_verdict(
    sentence: str,
    cited_sources: Mapping[Hashable, str],
    public_sources: Collection[Hashable],
    private_values: Sequence[str] = (),
    lang: str | None = None,
) -> PiiVerdict | None:
    """None when ``sentence`` may be released; otherwise why it must be held.

    ``cited_sources``: the texts of the sources this sentence cites, by any key (source
    number or doc id); ``public_sources``: the keys of those the deployment publishes;
    ``private_values``: ``guard.pii.private_values``. Markers do not matter (they hold no
    PII), so the sentence may be passed with or without them.
    """
    private = private_hits(sentence, private_values)
    if private:
        return PiiVerdict("private", private[0], "private_value")
    hits = scan_pii(sentence, lang)
    if not hits:
        return None
    scanned = {key: scan_pii(text, lang) for key, text in cited_sources.items()}
    for hit in hits:
        if hit.kind == "phone" and _quoted_title(sentence, hit, cited_sources):
            continue  # a title shaped like a phone number ("867-5309/Jenny"), quoted from a source
        if hit.kind == "phone" and _QUANTITY.fullmatch(hit.raw) and _UNIT_AFTER.match(sentence, hit.end):
            continue  # a quantity in thousands groups before its unit ("734 000 000 millas")
        holders = [key for key, found in scanned.items() if _in_source(hit, found)]
        if not holders:
            return PiiVerdict(hit.kind, hit.raw, "not_in_cited_source")
        if not any(key in public_sources for key in holders):
            return PiiVerdict(hit.kind, hit.raw, "source_not_public")
    return None


_QUANTITY = re.compile(r"\d{1,3}(?:[ \u00a0\u202f\u2009.,]\d{3})+")
_UNIT_AFTER = re.compile(r"[ \u00a0\u202f\u2009]*[^\W\d_]")
_QUOTED = re.compile(r"“([^“”\n]{1,120})”|„([^„“”\n]{1,120})[“”]|«([^«»\n]{1,120})»|\"([^\"\n]{1,120})\"")


def _quoted_title(sentence: str, hit: PiiHit, cited_sources: Mapping[Hashable, str]) -> bool:
    """True when ``hit`` lies inside a quoted span of the sentence whose words, as quoted,
    are in a cited source: a title that only looks like a phone number."""
    for m in _QUOTED.finditer(sentence):
        if m.start() <= hit.start and hit.end <= m.end():
            inner = " ".join(normalize(next(g for g in m.groups() if g is not None)).split())
            return any(inner in " ".join(normalize(text).split()) for text in cited_sources.values())
    return False


def is_public_source(doc_id: str, source: str, patterns: Sequence[str]) -> bool:
    """True when a glob of ``guard.pii.public_sources`` matches the doc id or source path."""
    return any(fnmatch.fnmatchcase(doc_id, p) or fnmatch.fnmatchcase(source, p) for p in patterns)
