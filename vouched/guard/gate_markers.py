"""The sentence gate's markers (L4, ``vouched.guard.gate``): what a source marker is, reading
the cited numbers out of a sentence, telling code (``r[0]``) from a citation, and stripping
markers (and the prompt's header flags) from what is released."""

from __future__ import annotations

import re
from typing import Mapping

_MARKER_BODY = r"\[\s*\d+(?:\s*(?:[,،;]|[-–])\s*\d+)*\s*\]"
_MARKER = re.compile(_MARKER_BODY)
_MARKER_SPLIT = re.compile(f"({_MARKER_BODY})")
_MARKER_STRIP = re.compile(rf"[ \t\u00a0]*{_MARKER_BODY}")
_MARKER_PART = re.compile(r"\d+(?:\s*[-–]\s*\d+)?")
_PARTIAL_MARKER = re.compile(r"\[[\s\d,،;\-–]*\Z")


def _markers(sentence: str, given: Mapping[int, object]) -> tuple[tuple[int, ...], str | None, str]:
    """(cited numbers, first out-of-range marker as written or None, stripped sentence)."""
    if "[" not in sentence:
        return (), None, sentence.strip()
    if "]" in sentence and "`" not in sentence and _HEADER_FLAG.search(sentence):
        sentence = _HEADER_FLAG.sub("", sentence)  # the prompt's "[current]" / "[conflict]" (see strip_markers)
        if "[" not in sentence:
            return (), None, sentence.strip()
    # [text, marker, text, marker, ..., text]: the matches of _MARKER.finditer, in one call.
    pieces = _MARKER_SPLIT.split(sentence)
    # Code (``r[0]``) or a code span is no citation: only a bracket glued to an ASCII word
    # character, ")" or "]", or any bracket in a sentence with a backtick, needs a look.
    if len(pieces) == 3:
        before = pieces[0]
        code = "`" in sentence or (bool(before) and before[-1] < "\x80" and (before[-1].isalnum() or before[-1] in "_)]"))
    else:
        code = "`" in sentence or any(_glued(pieces, k) for k in range(1, len(pieces), 2))
    if code:
        pieces = _citations_only(pieces)
        if len(pieces) == 1:
            return (), None, sentence.strip()
    if len(pieces) == 3:  # one marker, the usual case
        marker = pieces[1]
        inner = marker[1:-1]
        if inner.isdigit():  # the common "[3]"; int() reads Persian/Arabic-Indic digits too
            i = int(inner)
            if i not in given:
                return (), marker, ""
            return (i,), None, (pieces[0].rstrip(" \t\u00a0") + pieces[2]).strip()
    cited: dict[int, None] = {}
    for k in range(1, len(pieces), 2):
        marker = pieces[k]
        inner = marker[1:-1]
        if inner.isdigit():
            i = int(inner)
            if i not in given:
                return tuple(cited), marker, ""
            cited[i] = None
        else:
            for a, b in map(_span, _MARKER_PART.findall(marker)):
                if b < a or b - a > len(given) or any(i not in given for i in range(a, b + 1)):
                    return tuple(cited), marker, ""
                cited.update(dict.fromkeys(range(a, b + 1)))
        pieces[k - 1] = pieces[k - 1].rstrip(" \t\u00a0")
        pieces[k] = ""
    return tuple(cited), None, "".join(pieces).strip()


def _glued(pieces: list[str], k: int) -> bool:
    """Whether marker ``k`` of ``_MARKER_SPLIT``'s pieces is glued to an ASCII word
    character, ")" or "]" (cheap test; identifiers are ASCII: "用户[5]" is a citation)."""
    before = pieces[k - 1]
    return bool(before) and before[-1] < "\x80" and (before[-1].isalnum() or before[-1] in "_)]")


def _is_code_index(before: str, marker: str, after: str, bracket_next: bool) -> bool:
    """A bracket that is code, not a citation: ``r[0]``, ``rows_by_id[2]``, ``f()[1]``,
    ``a[1][2]``, ``a[1]=…``, ``a[1].x`` — glued to an identifier that is one ASCII letter,
    holds "_" or "(", or ends with ")" or "]"; or followed at once by "[", "(", "=" or a
    letter/digit (or "." and one); or an index 0 (no source is numbered 0). ``before`` and
    ``after``: the text on either side; ``bracket_next``: another bracket follows at once."""
    if not before or before[-1] >= "\x80" or not (before[-1].isalnum() or before[-1] in "_)]"):
        return False
    token = before.rsplit(None, 1)[-1]
    if bracket_next and not after:  # "a[1][2]": glued to the next bracket
        return True
    if marker[1:-1].strip() in ("0", "٠", "۰"):
        return True
    if (len(token) == 1 and token.isascii() and token.isalpha()) or "_" in token or "(" in token \
            or token[-1] in ")]":
        return True
    return bool(after) and (after[0] in "[(=" or after[0].isalnum()
                            or (after[0] == "." and len(after) > 1 and after[1].isalnum()))


def _citations_only(pieces: list[str]) -> list[str]:
    """``pieces`` with every bracket that is not a citation merged back into the text:
    one inside a code span (between backticks) or one that is code (``_is_code_index``)."""
    out = [pieces[0]]
    ticks = pieces[0].count("`")
    for k in range(1, len(pieces), 2):
        marker, after = pieces[k], pieces[k + 1]
        if ticks % 2 == 1 or _is_code_index(out[-1], marker, after, k + 2 < len(pieces)):
            out[-1] += marker + after
        else:
            out += [marker, after]
        ticks += after.count("`")
    return out


def _span(part: str) -> tuple[int, int]:
    lo, _, hi = part.replace("–", "-").partition("-")
    return int(lo), int(hi) if hi else int(lo)


# The prompt's source-header flags (vouched.guard.prompt.render_source). A real model echoed them
# as its whole answer ("[conflict]", "[current]"): they are prompt format, never text for the reader.
_HEADER_FLAG = re.compile(r"[ \t\u00a0]*\[(?:current|conflict)\]", re.I)


def strip_markers(sentence: str) -> str:
    """The sentence without its markers: "built it [1]." → "built it."; code such as
    ``r[0]`` or a bracket inside a code span stays (see ``_is_code_index``). The prompt's header
    flags ``[current]`` and ``[conflict]`` go too (outside code spans)."""
    if "[" not in sentence:
        return sentence.strip()
    if "]" in sentence and "`" not in sentence and _HEADER_FLAG.search(sentence):
        sentence = _HEADER_FLAG.sub("", sentence)
        if "[" not in sentence:
            return sentence.strip()
    if "`" in sentence:
        pieces = _MARKER_SPLIT.split(sentence)
        pieces = _citations_only(pieces)
    else:
        pieces = _MARKER_SPLIT.split(sentence)
        if any(_glued(pieces, k) for k in range(1, len(pieces), 2)):
            pieces = _citations_only(pieces)
        elif len(pieces) > 1:
            return _MARKER_STRIP.sub("", sentence).strip()
    for k in range(1, len(pieces), 2):
        pieces[k - 1] = pieces[k - 1].rstrip(" \t\u00a0")
        pieces[k] = ""
    return "".join(pieces).strip()


# "According to [2], X." — a lead phrase whose only object is the marker: with the marker
# stripped it would be released as "According to, X." The phrases, per language, that take
# a source as their object (Hindi and Persian/Arabic forms whose postposition follows it too).
_LEAD_BODY = rf"(?:\s*{_MARKER_BODY})+"  # one or more markers, as _MARKER reads them
_CITATION_LEAD = re.compile(
    r"^\s*(?:"
    r"(?:according\s+to|based\s+on|as\s+(?:stated|noted|described|shown)\s+in|per|from|in)"
    r"|(?:seg[uú]n|de\s+acuerdo\s+con|conforme\s+a|segundo|de\s+acordo\s+com|conforme"
    r"|selon|d['’]apr[eè]s|laut|gem[aä][sß]s?|nach|согласно|по\s+данным|судя\s+по"
    r"|وفقًا\s+ل(?:ـ)?|وفقا\s+ل(?:ـ)?|حسب|بحسب|طبق|بر\s+اساس|بنا\s+بر|根据|根據|据|據|按照)"
    r")" + _LEAD_BODY + r"\s*(?:के\s+अनुसार|के\s+मुताबिक)?\s*[,،:，：]\s*"
    r"|^\s*(?:स्रोत\s*)?" + _LEAD_BODY + r"\s*(?:के\s+अनुसार|के\s+मुताबिक)\s*[,،:，：]?\s*",
    re.IGNORECASE,
)


def drop_citation_lead(sentence: str, released: str) -> str:
    """``released`` (the sentence with its markers stripped) without a lead phrase whose only
    object was a marker: "According to [2], pg-core-1 is rebuilt." is released as "pg-core-1
    is rebuilt." rather than "According to, pg-core-1 is rebuilt." Only the words before the
    first marker and its comma go; the sentence's citation is unchanged (the caller keeps the
    verdict's ``cited``), and nothing else of the text is touched."""
    if "[" not in sentence[:60]:
        return released
    m = _CITATION_LEAD.match(sentence)
    if m is None:
        return released
    rest = strip_markers(sentence[m.end():])
    if not rest or not released.endswith(rest):
        return released
    first = rest.split(None, 1)[0].rstrip(",;:")
    # "it is rebuilt" → "It is rebuilt"; an identifier such as "pg-core-1" or "iOS" stays as written,
    # and so does a letter whose capital is two ("ß" → "SS" would change the released text)
    up = rest[:1].upper()
    return up + rest[1:] if first.isalpha() and first.islower() and len(up) == 1 else rest
