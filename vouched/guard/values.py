"""Values a sentence asserts — numbers, URLs, e-mail addresses — and whether a source has them.

The sentence gate (L4, ``vouched.guard.gate``) releases a sentence only if every value in
it appears in a source that the sentence cites. This module is the matching half of that
rule, as pure functions:

* ``extract_values(text)`` → the values of a sentence, in order, each a ``Value(kind, raw,
  canonical)``; ``raw`` is the span as written, ``canonical`` the comparison form;
* ``source_values(text)`` → the canonical forms present in a source (compute once per
  source, then test membership);
* ``value_in_text(value, source_text)`` → the one-off check.

Matching is on whole values, never substrings: "2023" is not found in "20234", "3" not in
"13", "example.com/a" not in "example.com/ab".

Numbers (digits of any script: ``normalize`` turns Persian, Arabic-Indic and Devanagari
digits into ASCII and the Arabic separators ٫ ٬ into ``.`` ``,``):

* a number is a digit run with inner ``.`` / ``,`` separators, or a thin/no-break space
  before a group of exactly three digits ("12 000"); letters around it do not matter, so
  "3rd" → 3, "H200" → 200, "2023年" → 2023 — the same rule runs on sentence and source;
* separators are read as thousands or decimal marks, the same way on both sides:
  both ``.`` and ``,`` present → the last one is the decimal mark ("1,234.5", "1.234,5");
  one separator kind, several times → thousands if every later group has three digits
  ("12.000.000"), else a dotted literal (versions, IP addresses, "1.5.2023");
  one separator once → thousands if it is followed by exactly three digits and preceded
  by one to three digits not starting with 0 ("12,000" ≡ "12.000" ≡ "12000"), else the
  decimal mark ("0,52" ≡ "0.52", "3.5");
* canonical form: no leading zeros, no trailing fractional zeros ("05" ≡ "5", "0.520" ≡
  "0.52", "12.0" ≡ "12");
* not compared: signs, units, currency and per-cent signs ("18%" ≡ "18 %" ≡ "18"),
  numbers written in words or Han numerals, and the Persian slash decimal ("۳/۵" reads as
  3 and 5). "2.500" is 2500, so a sentence saying "2.5" against a source saying "2.500"
  is refused — the gate errs towards refusing.

URLs (``http(s)://…`` or ``www.…``; bare domains such as "example.com" are not URLs here):
compared case-insensitively, without the scheme, a leading "www.", trailing punctuation
(an unbalanced closing bracket included) and trailing slashes.

E-mail addresses: compared case-insensitively.

In a *sentence* a number inside a URL or address belongs to it and is not reported again.
In a *source* every number counts wherever it stands, inside URLs and addresses too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from vouched.text import normalize
from vouched.text.numwords import spelled_numbers

ValueKind = Literal["number", "url", "email"]

__all__ = [
    "Value",
    "ValueKind",
    "canonical_number",
    "canonical_url",
    "extract_values",
    "source_values",
    "value_in_text",
    "value_spans",
]


@dataclass(frozen=True)
class Value:
    """One value found in a text: its kind, the span as written, its comparison form."""

    kind: ValueKind
    raw: str
    canonical: str


# ``\d`` matches decimal digits of every script; ٫ ٬ are the Arabic decimal/thousands marks.
# (``\d\d*``, not ``\d+``: a pattern that starts with a repeat gets no first-character
# class, and a search then tries a match at every position — a third slower.)
_NUMBER = r"\d\d*(?:[.,\u066b\u066c](?=\d)\d+|[\u00a0\u202f\u2009](?=\d{3}(?!\d))\d{3})*"
_URL = r"(?:https?://|www\.)[^\s<>\"\[\]{}|\\^`]+"
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_NUMBER_RE = re.compile(_NUMBER)
# _URL under IGNORECASE, spelled out (the only case variants of h, t, p, s, w are the
# upper-case letters and the long s; a test checks every code point) and led by a class,
# so that a search skips to the next h or w at C speed instead of trying the branch at
# every position.
_URL_RE = re.compile(
    r"[hHwW](?:(?<=[hH])[tT][tT][pP][sSſ]?://|(?<=[wW])[wW][wW]\.)[^\s<>\"\[\]{}|\\^`]+"
)
_URL_TRAIL = ".,;:!?'\"»”’)]}>。，、；：！？）】》،؛"
_SEPARATORS = re.compile(r"[.,]")


# What normalize(raw).replace(" ", "") does to a number span made only of these
# characters (the usual non-ASCII ones): Persian, Arabic-Indic and Devanagari digits to
# ASCII, the Arabic separators to "." and ",", and the spaces NFKC turns into " " gone.
# A test checks the two agree; any other character takes normalize().
_NUMBER_TABLE: dict[int, str | None] = {0x066B: ".", 0x066C: ",", 0x00A0: None, 0x202F: None, 0x2009: None}
for _base in (0x06F0, 0x0660, 0x0966):
    _NUMBER_TABLE.update({_base + _d: str(_d) for _d in range(10)})
_NUMBER_CHARS = frozenset(map(chr, _NUMBER_TABLE)) | frozenset("0123456789.,")
# The same table as a list indexed by code point: str.translate then needs no dict look-up
# (which raises KeyError, slowly, for every ASCII digit), and a character past the list
# raises IndexError, which translate reads as "unchanged".
_NUMBER_LIST: list[int | str | None] = list(range(max(_NUMBER_TABLE) + 1))
for _cp, _dst in _NUMBER_TABLE.items():
    _NUMBER_LIST[_cp] = _dst


def canonical_number(raw: str) -> str:
    """Comparison form of one number span (see the module docstring)."""
    if raw.isascii():
        s = raw
    else:
        # The table turns its own characters into ASCII digits, "." and "," (or nothing)
        # and leaves every other character, so the result is all digits, dots and commas
        # exactly when every character of raw is in _NUMBER_CHARS — and it is then what
        # translating with _NUMBER_TABLE gives. (str.strip leaves nothing only then.)
        s = raw.translate(_NUMBER_LIST)
        if s.strip("0123456789.,"):  # e.g. digits of another script
            s = normalize(raw).replace(" ", "")
    if s.isdigit():
        return s.lstrip("0") or "0"  # _strip_int
    dots = s.count(".")
    if dots + s.count(",") == 1:  # one separator: the usual "12,000", "3.5" (as below)
        head, _, tail = s.partition("." if dots else ",")
        if len(tail) == 3 and 1 <= len(head) <= 3 and head[0] != "0":
            return head + tail  # _strip_int(head + tail): head has no leading zero
        tail = tail.rstrip("0")  # _decimal(head, tail), inlined
        head = head.lstrip("0") or "0"
        return f"{head}.{tail}" if tail else head
    seps = [c for c in s if c in ".,"]
    groups = _SEPARATORS.split(s)
    if len(set(seps)) == 2:
        dec = seps[-1]
        if dec not in seps[:-1] and _is_grouped(groups[:-1]):
            return _decimal("".join(groups[:-1]), groups[-1])
        return _literal(groups)
    if len(seps) > 1:
        return _strip_int("".join(groups)) if _is_grouped(groups) else _literal(groups)
    head, tail = groups
    if len(tail) == 3 and _is_grouped(groups):
        return _strip_int(head + tail)
    return _decimal(head, tail)


def _is_grouped(groups: list[str]) -> bool:
    """True for thousands groups: 1-3 leading digits (not starting with 0), then threes."""
    head = groups[0]
    return (
        1 <= len(head) <= 3
        and not (head.startswith("0") and len(groups) > 1)
        and all(len(g) == 3 for g in groups[1:])
    )


def _strip_int(digits: str) -> str:
    return digits.lstrip("0") or "0"


def _decimal(head: str, frac: str) -> str:
    frac = frac.rstrip("0")
    return f"{_strip_int(head)}.{frac}" if frac else _strip_int(head)


def _literal(groups: list[str]) -> str:
    return ".".join(_strip_int(g) for g in groups)


def canonical_url(raw: str) -> str:
    """Comparison form of a URL: lower-case, no scheme/www, trailing punctuation or slash."""
    url = normalize(raw)
    if url and url[-1] in _URL_TRAIL:  # else _trim_url has nothing to do
        url = _trim_url(url)
    # The scheme, then "www.": what ``^(?:https?://)?(?:www\.)?`` would remove (anchored,
    # each part optional, nothing to backtrack), as two prefix tests.
    if url.startswith("https://"):
        url = url[8:]
    elif url.startswith("http://"):
        url = url[7:]
    if url.startswith("www."):
        url = url[4:]
    return url.rstrip("/")


def _trim_url(url: str) -> str:
    """Drop trailing punctuation; a closing bracket only when it is unbalanced."""
    while url and url[-1] in _URL_TRAIL:
        last = url[-1]
        if last in _PAIRS and url.count(_PAIRS[last]) >= url.count(last):
            break
        url = url[:-1]
    return url


_PAIRS = {")": "(", "]": "[", "}": "{"}


def _linkish(text: str) -> bool:
    """Cheap test before the URL/e-mail regex (``in`` is much faster than a search)."""
    return "@" in text or "://" in text or "ww." in text or "WW." in text or "Ww." in text


def _links(text: str) -> list[tuple[int, int, ValueKind, str, str]]:
    """(start, end, kind, raw, canonical) of each URL and e-mail address, in order."""
    out: list[tuple[int, int, ValueKind, str, str]] = []
    # Without an "@" the e-mail branch cannot match, and it is the costly one: it runs
    # over every word, backtracking, looking for the "@".
    if "@" not in text:
        m = _URL_RE.search(text)
        while m is not None:  # _URL_RE.finditer(text), whose matches are never empty
            _add_url(out, m)
            m = _URL_RE.search(text, m.end())
        return out
    # The matches of ``(?P<url>_URL)|(?P<email>_EMAIL)`` (IGNORECASE) in order, without
    # that alternation's cost: at every position the e-mail branch
    # runs over the word there, backtracking, looking for an "@". Its matches are the
    # leftmost URL match (_URL_RE, as above) or e-mail match at or after ``pos``, the URL
    # first when both start at one position, and the next search starts where the match
    # ended; _next_email finds the e-mail match from the "@" signs instead.
    url = _URL_RE.search(text)
    email = _next_email(text, 0)
    while url is not None or email is not None:
        if email is None or (url is not None and url.start() <= email.start()):
            _add_url(out, url)
            pos = url.end()
        else:
            raw = email.group(0)
            out.append((email.start(), email.end(), "email", raw, normalize(raw)))
            pos = email.end()
        # A candidate that starts at or after ``pos`` is still the leftmost one from there.
        if url is not None and url.start() < pos:
            url = _URL_RE.search(text, pos)
        if email is not None and email.start() < pos:
            email = _next_email(text, pos)
    return out


def _add_url(out: list[tuple[int, int, ValueKind, str, str]], m: re.Match[str]) -> None:
    """Append the URL of a _URL_RE match, unless it has neither a dot nor a path."""
    raw = m.group(0)
    if raw[-1] in _URL_TRAIL:  # else _trim_url has nothing to do
        raw = _trim_url(raw)
    if "." in raw or "/" in raw.partition("//")[2]:
        start = m.start()
        out.append((start, start + len(raw), "url", raw, canonical_url(raw)))


# _EMAIL on its own (IGNORECASE, as in the alternation above), and its local part's
# character class, read backwards from an "@".
_EMAIL_RE = re.compile(_EMAIL, re.IGNORECASE)
_LOCAL_RUN = re.compile(r"[\w.+-]*", re.IGNORECASE)


def _next_email(text: str, pos: int) -> re.Match[str] | None:
    """The match of _EMAIL_RE that starts leftmost at or after ``pos``, or None.

    A match has one "@" (it is in none of _EMAIL's classes): the local part runs from its
    start to the "@", over characters of its class, so for an "@" at ``at`` the only
    possible starts are from the start of that run (or ``pos``) to ``at`` - 1; the
    leftmost of them matches if any does (the domain after the "@" decides, the same
    for all of them). A later "@" cannot give an earlier start: its run begins after
    this "@". So: the first "@" whose run is not empty and whose domain matches.
    """
    prev = pos
    at = text.find("@", pos)
    while at >= 0:
        start = at - _LOCAL_RUN.match(text[prev:at][::-1]).end()
        if start < at:
            m = _EMAIL_RE.match(text, start)
            if m is not None:
                return m
        prev = at + 1  # the run before the next "@" starts after this one
        at = text.find("@", prev)
    return None


def extract_values(text: str) -> list[Value]:
    """Numbers, URLs and e-mail addresses of ``text`` in order of appearance.

    Numbers inside a URL or an address are part of it and not listed separately.
    """
    return [Value(kind, raw, canonical) for kind, raw, canonical in value_spans(text)]


def value_spans(text: str) -> list[tuple[ValueKind, str, str]]:
    """``extract_values`` as plain (kind, raw, canonical) tuples, for the gate's hot path."""
    if not ("@" in text or "://" in text or "ww." in text or "WW." in text or "Ww." in text):
        # _linkish inlined; an ASCII digit run is canonical_number's first case, inlined.
        return [
            ("number", raw, (raw.lstrip("0") or "0") if raw.isascii() and raw.isdigit()
             else canonical_number(raw))
            for raw in _NUMBER_RE.findall(text)
        ]
    links = _links(text)
    first = _NUMBER_RE.search(text)
    if first is None:  # no number: the links, in order
        return [(kind, raw, canonical) for _, _, kind, raw, canonical in links]
    out: list[tuple[int, tuple[ValueKind, str, str]]] = [
        (start, (kind, raw, canonical)) for start, _, kind, raw, canonical in links
    ]
    spans = [(a, b) for a, b, _, _, _ in links]
    for m in _NUMBER_RE.finditer(text, first.start()):  # the same matches from there on
        at = m.start()
        if not any(a <= at < b for a, b in spans):
            raw = m.group(0)
            out.append((at, ("number", raw, canonical_number(raw))))
    # Starts are distinct (a number that starts where a link does is inside it), so
    # sorting the pairs compares starts only, as sorting by start would.
    out.sort()
    return [v for _, v in out]


def source_values(text: str) -> frozenset[str]:
    """Canonical forms of every value in a source; numbers count wherever they stand.

    A small cardinal written as a word ("four", "cuatro", "چهار") also counts as its digits
    (``vouched.text.numwords``): the source states that number, so a sentence writing "4"
    for it is supported. Only sources read words this way; in a sentence a number word is
    not a value.
    """
    found = {link[4] for link in _links(text)} if _linkish(text) else set()
    found.update(canonical_number(raw) for raw in _NUMBER_RE.findall(text))
    found.update(spelled_numbers(text))
    return frozenset(found)


def value_in_text(value: Value, source_text: str) -> bool:
    """True if ``value`` appears, as a whole value, in ``source_text``."""
    return value.canonical in source_values(source_text)
