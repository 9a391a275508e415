"""Sentence splitting for the streaming gate (L4) and the chunker.

The gate holds text until a sentence ends, checks it, then releases it, so a missed
boundary only delays release while a false boundary cuts a sentence away from its source
marker. The rules therefore lean towards *not* splitting when in doubt.

Returned sentences are stripped substrings of the original text, in order, and together
they contain every non-space character of the input (nothing is lost or rewritten).

Boundaries:

* after ``. ! ?`` (and ``…``) when followed by whitespace or the end of the text;
* after ``؟ ۔ । ॥`` and ``。 ！ ？`` even with no following space (Chinese, Hindi and
  Arabic-script text often has none);
* closing quotes/brackets right after the punctuation stay with the sentence, and so do
  citation markers (``[2]``, ``[1][3]``, ``[1, 3]``) that follow the punctuation, with or
  without a space: "She led it.[2] Next." → "She led it.[2]" | "Next.";
* at blank lines, and at line breaks before or after a list item or markdown heading.

Blocks are never cut (``block_spans``): a fenced code block (a line starting with three
backticks or tildes, to the closing fence line, or to the end of the text when it is not
closed yet) and a table (two or more consecutive lines that each hold a ``|`` cell
separator, with the same number of cells) are one sentence each, whatever punctuation,
blank line or ``#`` comment line they hold; the line breaks before and after a block are
boundaries. Citation markers right after a closing fence stay with the block. Blocks are
a matter of lines: in text with no line break nothing changes. (The streaming gate keeps a
block whole when the block starts on a new line — the extractive generator writes it so; a
table that opens a model's stream can still be cut by the gate's fast path.)

Not boundaries (for ``.`` only; ``!``/``?`` end a sentence unless a closing quote and a
lower-case word follow: 'He asked "why?" and left.'):

* a ``.`` followed by a lower-case letter (unknown abbreviations: "approx. five");
* known abbreviations (titles such as Dr./Mrs./Prof./Sra./Mme., "vs.", dotted forms such
  as e.g./i.e./U.S./z.B.), single capital initials ("J. Smith"), "No./Fig./p." before a
  number, "etc./usw./Inc." unless an upper-case letter follows, list numbers ("1. ") at
  the start of a line, German ordinal dates ("am 3. Mai");
* decimals, versions, URLs and e-mail addresses need no rule: their dots are never
  followed by whitespace;
* an ellipsis (``...``/``…``) is a boundary only when whitespace and an upper-case letter
  follow.

Everything is precompiled; per call the cost is one regex scan plus a few look-ups per
candidate boundary.
"""

from __future__ import annotations

import re
from typing import Iterator

# Terminal punctuation, then closers, then citation markers.
_CLOSERS = "\"'”’»«)\\]」』）】》〉"
_MARKER = r"\[\s*\d+(?:\s*(?:[,،;]|[-–])\s*\d+)*\s*\]"
_CANDIDATE = re.compile(
    # Only ever matched at a position _PUNCT found (see _punct_cuts); the leading
    # look-ahead keeps a stray .search() from trying the alternation everywhere.
    rf"(?=[.!?…．؟۔।॥。！？])(?P<p>[.!?…．]+|[؟۔।॥]+|[。！？]+)"
    rf"(?P<c>(?:[{_CLOSERS}]|[ \u00a0\u202f]+»)*)"  # French « oui. » closes after a space
    rf"(?P<m>(?:[ \t]*{_MARKER})*)"
)
_ALWAYS = frozenset("؟۔।॥。！？")
_PUNCT = re.compile("[.!?…．؟۔।॥。！？]")
# _PUNCT without the hits that can never cut: a "." (or "!", "?", "…") directly followed
# by a letter, digit or "_" ("3.5", "x.com", "Hi!there") — its candidate is that one
# character, and the character after it is no space. Such hits were the most frequent
# ones (decimals, URLs, "e.g."), each a _CANDIDATE match for nothing.
_PUNCT_HIT = re.compile(r"[.!?…．؟۔।॥。！？](?:(?<=[؟۔।॥。！？])|(?!\w))")
_NEXT = re.compile(r"\s*[\"'“‘«¿¡(]*(\S?)")
# _PUNCT_HIT's search, _CANDIDATE's match there and _NEXT's match after it, in one call:
# group 1 is _CANDIDATE's "p", group 2 its "c", group 3 ends where it ends; group 4 is
# _NEXT's group 1. Led by a class so that a search skips at C speed.
_CUT = re.compile(
    r"([.!?…．؟۔।॥。！？](?:(?<=[.!?…．])(?!\w)[.!?…．]*|(?<=[؟۔।॥])[؟۔।॥]*|(?<=[。！？])[。！？]*))"
    rf"((?:[{_CLOSERS}]|[ \u00a0\u202f]+»)*)"
    rf"((?:[ \t]*{_MARKER})*)"
    r"\s*[\"'“‘«¿¡(]*(\S?)"
)
# The token before a full stop: the longest run of these characters ending there. Matched
# on the reversed 40 characters before it (a search anchored at \Z retries every start).
_PREV_TOKEN_REV = re.compile(r"[^\s(\[\"'“‘«¿¡<{]*")
# The same token found forwards: everything up to the last delimiter (greedy, so the
# engine backs off from the end one character at a time).
_TO_LAST_DELIM = re.compile(r"[\s\S]*[\s(\[\"'“‘«¿¡<{]")
_DELIM = re.compile(r"[\s(\[\"'“‘«¿¡<{]")
_ITEM = re.compile(r"[ \t]*(?:[-*•·–]|\d{1,3}[.)]|#{1,6})[ \t]")
_BLANK = re.compile(r"\n[ \t\r]*(?=\n)|\u2029")
_DOTTED = re.compile(r"(?:[^\W\d_]{1,2}\.)+[^\W\d_]{1,2}\Z")
_WORD = re.compile(r"\w+")

# Never a boundary after these (lower-cased, without the final dot): titles, "vs", ...
_ABBR_NEVER = frozenset(
    """
    mr mrs ms mx dr drs prof st vs jr sr sra srta srs dra dr dña dn mme mlle mmes hr fr
    sto sta ud uds vd vds dipl ing gen col capt lt sgt rev hon gov sen rep cf bzw vgl
    sog ggf evtl inkl zzgl resp ie eg
    """.split()
)
# A boundary only if an upper-case letter follows ("… and Sons Inc. The firm …").
_ABBR_WEAK = frozenset(
    """
    etc usw ca approx env inc ltd co corp bros am pm dgl ua al
    """.split()
)
# Not a boundary when a number follows ("No. 5", "Fig. 3", "S. 12").
_ABBR_NUMBER = frozenset(
    """
    no nr núm num fig figs p pp vol ch art sec eq ref tab abb s n nº
    """.split()
)
_MONTHS = frozenset(
    """
    januar jänner februar märz april mai juni juli august september oktober november
    dezember jan feb mär apr jun jul aug sep sept okt nov dez
    """.split()
)


def _at_line_start(text: str, i: int) -> bool:
    """True if only spaces/tabs stand between a line start and ``text[i]``."""
    while i > 0 and text[i - 1] in " \t\r":
        i -= 1
    return i == 0 or text[i - 1] == "\n"


def _dot_is_boundary(text: str, start: int, run: str, nxt: str, nxt_pos: int) -> bool:
    """Decide for a '.'/'…' run at ``text[start]`` followed (after spaces) by ``nxt``."""
    if "..." in run or "…" in run:
        return nxt.isupper()
    if nxt.islower():
        return False
    if start == 0 or not ((last := text[start - 1]).isalnum() or last.isupper()):
        # "[2].", "18%.", "(x).": no token, or one that ends in a character no entry
        # below ends in and that is no capital initial — every test below says no.
        return True
    lo = start - 40 if start > 40 else 0
    # Usually a space starts the token and nothing in it is a delimiter.
    space = text.rfind(" ", lo, start) + 1
    if _DELIM.search(text, space or lo, start) is None:
        token = text[space or lo : start]
    else:
        delim = _TO_LAST_DELIM.match(text, lo, start)
        token = text[lo if delim is None else delim.end() : start]
    if not token:
        return True
    low = token.lower()
    if len(token) == 1 and token.isupper():
        return False  # initial: "J. Smith"
    if low in _ABBR_NEVER:
        return False
    if "." in token and _DOTTED.search(token):
        if low.replace(".", "") in _ABBR_WEAK:
            return nxt.isupper()
        return False  # e.g. / i.e. / U.S. / z.B.
    if low in _ABBR_WEAK:
        return nxt.isupper()
    if low in _ABBR_NUMBER and nxt.isdigit():
        return False
    if token.isdigit() and len(token) <= 3:
        if _at_line_start(text, start - len(token)):
            return False  # "1. First item"
        word = _WORD.match(text, nxt_pos)
        if len(token) <= 2 and word and word.group(0).lower() in _MONTHS:
            return False  # "am 3. Mai"
    return True


def _punct_cuts(text: str) -> Iterator[int]:
    """Cuts after sentence-ending punctuation, in order (lazily: the gate wants the first)."""
    n = len(text)
    pos = 0
    # Find punctuation with a plain class (C speed), then match the candidate there:
    # the same matches as _CANDIDATE.finditer, whose leading look-ahead is tried at
    # every position and makes the scan several times slower.
    while (hit := _PUNCT_HIT.search(text, pos)) is not None:
        m = _CANDIDATE.match(text, hit.start())
        end = pos = m.end()
        run = m.group("p")
        if run[0] in _ALWAYS:
            yield end
            continue
        if end < n and not text[end].isspace():
            continue  # "3.5", "x.com", "v2.1", "Hi!there"
        nxt_m = _NEXT.match(text, end)
        nxt = nxt_m.group(1)
        if not nxt:
            yield end
            continue
        if "!" not in run and "?" not in run:
            if not _dot_is_boundary(text, m.start(), run, nxt, nxt_m.start(1)):
                continue
        elif m.group("c") and nxt.islower():
            continue  # a quoted question inside a sentence: 'He asked "why?" and left.'
        yield end


_FENCE = re.compile(r"[ \t]{0,3}(?:```|~~~)")
_FENCE_TAIL = re.compile(rf"(?:[ \t]*{_MARKER})*")
_TABLE_ROW = re.compile(r"[ \t]{0,3}\|")


def _is_table_line(text: str, a: int, b: int) -> bool:
    """A line that starts with "|" (after at most three spaces): a table row."""
    return _TABLE_ROW.match(text, a, b) is not None


def block_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each fenced code block and table in ``text``: never cut inside.

    A span starts at its first line's start and ends at its last line's end (for a fence,
    after any citation markers on the closing fence line). Pure. Each is decided by the
    first characters of its lines, so a stream cut mid-block gives the same cuts so far.
    """
    if "|" not in text and "```" not in text and "~~~" not in text:
        return []
    spans: list[tuple[int, int]] = []
    lines: list[tuple[int, int]] = []  # (start, end) of each line
    pos = 0
    n = len(text)
    while pos <= n:
        nl = text.find("\n", pos)
        end = n if nl == -1 else nl
        lines.append((pos, end))
        if nl == -1:
            break
        pos = nl + 1
    i = 0
    while i < len(lines):
        a, b = lines[i]
        fence = _FENCE.match(text, a, b)
        if fence is not None:
            mark = text[fence.end() - 3 : fence.end()]
            j = i + 1
            while j < len(lines):
                c, d = lines[j]
                close = _FENCE.match(text, c, d)
                if close is not None and text[close.end() - 3 : close.end()] == mark:
                    break
                j += 1
            if j >= len(lines):  # not closed (yet): the block runs to the end
                spans.append((a, n))
                break
            c, d = lines[j]
            close = _FENCE.match(text, c, d)
            tail = _FENCE_TAIL.match(text, close.end(), d)
            spans.append((a, tail.end()))
            i = j + 1
            continue
        if _is_table_line(text, a, b):
            j = i + 1
            while j < len(lines) and _is_table_line(text, *lines[j]):
                j += 1
            spans.append((a, lines[j - 1][1]))
            i = j
            continue
        i += 1
    return spans


def _boundaries(text: str) -> list[int]:
    cuts = list(_punct_cuts(text))
    # Paragraph and list-item line breaks.
    if "\n" in text or "\u2029" in text:
        for m in _BLANK.finditer(text):
            cuts.append(m.start())
        line_start = 0
        pos = text.find("\n")
        while pos != -1:
            if _ITEM.match(text, line_start) or _ITEM.match(text, pos + 1):
                cuts.append(pos)
            line_start = pos + 1
            pos = text.find("\n", line_start)
        blocks = block_spans(text)
        if blocks:
            # Nothing cuts inside a block; the line breaks around it do.
            cuts = [c for c in cuts if not any(a < c < b for a, b in blocks)]
            for a, b in blocks:
                if a > 0:
                    cuts.append(a - 1)
                cuts.append(b)
        cuts.sort()
    return cuts


def first_sentence_end(text: str, scan_from: int = 0) -> tuple[int, bool] | None:
    """Where ``split_sentences(text)[0]`` ends in ``text``, and whether more text follows.

    None for blank text. The same cuts as ``split_sentences``, but it stops at the first
    one — the streaming gate asks this once per sentence over a short window.

    ``scan_from``: a position before which the caller knows no terminal punctuation can
    end a sentence (no punctuation run there is followed by a space, closer or marker —
    the gate's test — and no "«" stands there, the one closer the gate does not know);
    the scan for punctuation starts there. Ignored when the text holds a line break.
    """
    n = len(text)
    start = n - len(text.lstrip())
    if start == n:
        return None
    if "\n" in text or "\u2029" in text:
        for cut in _boundaries(text):
            if cut > start and not text[start:cut].isspace():
                return len(text[:cut].rstrip()), not text[cut:].isspace() and cut < n
        return len(text.rstrip()), False
    # _punct_cuts inlined, up to its first cut. That cut is past ``start`` (it ends a
    # punctuation run, and only spaces come before ``start``) and ends in punctuation, a
    # closer or a marker, never a space: the checks and rstrip above are no-ops here.
    pos = scan_from
    while (m := _CUT.search(text, pos)) is not None:
        end = pos = m.end(3)
        run = m.group(1)
        if run[0] not in _ALWAYS:
            if end < n and not text[end].isspace():
                continue  # "…." then a letter: see _punct_cuts
            nxt = m.group(4)
            if nxt:
                if "!" not in run and "?" not in run:
                    if not _dot_is_boundary(text, m.start(), run, nxt, m.start(4)):
                        continue
                elif m.group(2) and nxt.islower():
                    continue
        return end, end < n and not text[end:].isspace()
    return len(text.rstrip()), False


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into stripped sentences, each a substring of ``text``."""
    out: list[str] = []
    prev = 0
    for cut in _boundaries(text):
        if cut <= prev:
            continue
        piece = text[prev:cut].strip()
        if piece:
            out.append(piece)
        prev = cut
    tail = text[prev:].strip()
    if tail:
        out.append(tail)
    return out
